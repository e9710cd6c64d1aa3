"""SummaC-Conv's parts (Laban et al., TACL 2022; tingofurro/summac, `model_summac.py`): the
histogram of a summary sentence's entailment probabilities over the document blocks, the
convolution and the 2-way layer over them, training on a dev split (FactBoard's variant), and
the authors' released weights (found, fetched with their sha256 checked, loaded from PyTorch or
JSON). The detectors themselves are in evaluator.detectors.summac."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NotRequired, TypedDict, cast

import numpy as np

from evaluator.detectors.base import DetectorError

# SummaC's 'percentile' bins (model_summac.py), 23 bins over [0, 1]
PERCENTILE_BINS = (
    0.0,
    0.01,
    0.02,
    0.03,
    0.04,
    0.07,
    0.13,
    0.37,
    0.90,
    0.91,
    0.92,
    0.93,
    0.94,
    0.95,
    0.955,
    0.96,
    0.965,
    0.97,
    0.975,
    0.98,
    0.985,
    0.99,
    0.995,
    1.0,
)


class ConvSource(TypedDict):
    """The file released weights were read from."""

    file: str
    sha256: str
    released: bool  # the authors' file (its sha256 is RELEASED_CONV_SHA256)


class ConvState(TypedDict):
    """SummaC-Conv's weights, JSON-ready: trained here (`train_conv`, then its bins and
    channels) or read from a file; a run records them in config.extra.summac_conv."""

    conv_weight: list[float]
    conv_bias: float
    final_weight: list[list[float]]
    final_bias: list[float]
    bins: list[float]
    nli_labels: str
    n_rows: int
    source: NotRequired[ConvSource]  # weights read from the authors' PyTorch file
    # weights trained on a dev split
    train_loss: NotRequired[float]
    n_train: NotRequired[int]
    n_consistent: NotRequired[int]
    n_inconsistent: NotRequired[int]


class Trained(TypedDict):
    """What `train_conv` learns, before the bins and channels it was trained with are added."""

    conv_weight: list[float]
    conv_bias: float
    final_weight: list[list[float]]
    final_bias: list[float]
    train_loss: float
    n_train: int
    n_consistent: int
    n_inconsistent: int


N_ROWS = 10  # summary sentences the convolution looks at (SummaCConv.n_rows)


LABELS = "ecn"  # image channel order: entailment, contradiction, neutral


def conv_bins(spec: str) -> tuple[float, ...]:
    """'percentile' (the paper's), or 'evenN' (N equal bins over [0, 1])."""
    if spec == "percentile":
        return PERCENTILE_BINS
    if spec.startswith("even") and spec[4:].isdigit() and int(spec[4:]) > 0:
        n = int(spec[4:])
        return tuple(float(x) for x in np.linspace(0.0, 1.0, n + 1))
    raise DetectorError(f"unknown SummaC-Conv bins {spec!r}; use 'percentile' or 'evenN'")


def conv_histogram(
    image: np.ndarray, bins: Sequence[float], nli_labels: str = "e", n_rows: int = N_ROWS
) -> np.ndarray:
    """[n_rows, len(nli_labels) * n_bins]: per summary sentence (first n_rows), the histogram of
    each selected channel over the blocks; missing sentences are zero rows."""
    n_bins = len(bins) - 1
    width = len(nli_labels) * n_bins
    out = np.zeros((n_rows, width), dtype=np.float64)
    channels = [LABELS.index(c) for c in LABELS if c in nli_labels]
    for j in range(min(image.shape[2], n_rows)):
        row = [
            np.histogram(image[c, :, j], range=(0.0, 1.0), bins=np.asarray(bins))[0]
            for c in channels
        ]
        out[j] = np.concatenate(row)
    return out


def conv_rows(histograms: np.ndarray, state: ConvState) -> np.ndarray:
    """The convolution's output per histogram row, [N, n_rows] (`self.mlp(histograms)`)."""
    w = np.asarray(state["conv_weight"], dtype=np.float64)  # [width]
    b = float(state["conv_bias"])
    return np.asarray(histograms @ w + b)


def conv_probability(histograms: np.ndarray, state: ConvState) -> np.ndarray:
    """P(consistent) for histograms [N, n_rows, width] under trained weights `state`: the mean
    of the rows present (`seq_length` non-zero rows, agg=mean) fed to the final 2-way layer."""
    w2 = np.asarray(state["final_weight"], dtype=np.float64)  # [2, 3]
    b2 = np.asarray(state["final_bias"], dtype=np.float64)  # [2]
    rows = conv_rows(histograms, state)  # [N, n_rows]
    used = (histograms.sum(axis=-1) != 0).sum(axis=-1)  # sentences present (leading rows)
    feats = np.zeros((len(histograms), 3))
    for i, k in enumerate(used):
        if k > 0:
            feats[i] = rows[i, :k].mean()
    logits = feats @ w2.T + b2
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    return np.asarray(p[:, 1] / p.sum(axis=1))


def train_conv(
    histograms: np.ndarray, labels: Sequence[int], epochs: int, lr: float, seed: int
) -> Trained:
    """Fit the convolution and the final layer with class-balanced cross-entropy (full batch,
    Adam, seeded: the same data give the same weights)."""
    import torch

    y = np.asarray(labels, dtype=np.int64)
    classes = set(y.tolist())
    if classes != {0, 1}:
        raise DetectorError(
            f"SummaC-Conv trains on labelled dev samples of both classes; got labels "
            f"{sorted(classes)} in {len(y)} sample(s)"
        )
    gen = torch.Generator().manual_seed(seed)
    width = histograms.shape[-1]
    conv = torch.nn.Linear(width, 1)
    final = torch.nn.Linear(3, 2)
    with torch.no_grad():
        for lin in (conv, final):
            bound = 1.0 / np.sqrt(lin.in_features)
            lin.weight.copy_(torch.empty_like(lin.weight).uniform_(-bound, bound, generator=gen))
            lin.bias.copy_(torch.empty_like(lin.bias).uniform_(-bound, bound, generator=gen))
    x = torch.tensor(histograms, dtype=torch.float32)
    used = (x.sum(dim=-1) != 0).float()  # [N, n_rows]
    counts = used.sum(dim=-1).clamp(min=1.0)
    present = (used.sum(dim=-1) > 0).float()
    target = torch.tensor(y)
    n0, n1 = int((y == 0).sum()), int((y == 1).sum())
    weight = torch.tensor([len(y) / (2.0 * n0), len(y) / (2.0 * n1)], dtype=torch.float32)
    loss_fn = torch.nn.CrossEntropyLoss(weight=weight)
    opt = torch.optim.Adam(list(conv.parameters()) + list(final.parameters()), lr=lr)
    loss = torch.tensor(0.0)
    for _ in range(epochs):
        opt.zero_grad()
        rows = conv(x).squeeze(-1)  # [N, n_rows]
        mean = (rows * used).sum(dim=-1) / counts * present
        logits = final(mean.unsqueeze(-1).expand(-1, 3))
        loss = loss_fn(logits, target)
        loss.backward()
        opt.step()
    return {
        "conv_weight": [float(v) for v in conv.weight.detach().reshape(-1)],
        "conv_bias": float(conv.bias.detach()[0]),
        "final_weight": [[float(v) for v in r] for r in final.weight.detach()],
        "final_bias": [float(v) for v in final.bias.detach()],
        "train_loss": float(loss.detach()),
        "n_train": len(y),
        "n_consistent": n1,
        "n_inconsistent": n0,
    }


RELEASED_CONV_FILE = "summac_conv_vitc_sent_perc_e.bin"


RELEASED_CONV_SHA256 = "cd880581f59bd47b8968c7f48d754cd617dfe9b256d8d76fdcbc0fa4a3b3c6fe"


# the file at the root of the authors' repository (Apache-2.0), at a fixed commit
RELEASED_CONV_URL = (
    "https://github.com/tingofurro/summac/raw/c1f3da93cd074c24d8033eb27a88b5a7cc5c08fa/"
    + RELEASED_CONV_FILE
)


CONV_WEIGHTS_ENV = "FACTBOARD_SUMMAC_CONV_WEIGHTS"


def conv_cache_dir() -> Path:
    """Where the released weights are looked for, and downloaded to: $FACTBOARD_CACHE/summac
    (default ~/.cache/factboard/summac)."""
    from evaluator.store.layout import cache_dir

    return cache_dir("summac")


def _missing_released(why: str) -> DetectorError:
    return DetectorError(
        f"summac-conv: the authors' released convolution weights ({RELEASED_CONV_FILE}) {why}. "
        f"Pass --option conv_weights=/path/to/{RELEASED_CONV_FILE} (the file at the root of "
        f"github.com/tingofurro/summac, Apache-2.0, sha256 {RELEASED_CONV_SHA256[:16]}...), or "
        f"set {CONV_WEIGHTS_ENV} to that path, or put the file in {conv_cache_dir()}; "
        "--option conv_weights=dev trains the convolution on the benchmark's dev split instead "
        "(a variant, not the authors' setup)"
    )


def find_released_conv() -> Path | None:
    """A local copy of the released weights: ${CONV_WEIGHTS_ENV}, else the cache folder."""
    env = os.environ.get(CONV_WEIGHTS_ENV)
    if env:
        path = Path(env).expanduser()
        if not path.is_file():
            raise DetectorError(f"{CONV_WEIGHTS_ENV}={env!r}: no such file")
        return path
    cached = conv_cache_dir() / RELEASED_CONV_FILE
    return cached if cached.is_file() else None


def _offline() -> bool:
    return any(
        os.environ.get(k, "").strip().lower() in ("1", "true", "yes", "on")
        for k in ("HF_HUB_OFFLINE", "FACTBOARD_OFFLINE")
    )


def fetch_released_conv() -> Path:
    """The released weights: a local copy, else downloaded once from the authors' repository
    into the cache folder (its sha256 checked). Offline without a copy: a DetectorError that
    says what to pass."""
    found = find_released_conv()
    if found is not None:
        return found
    if _offline():
        raise _missing_released("are not on this machine and downloads are off (offline mode)")
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(RELEASED_CONV_URL, timeout=60) as resp:
            data = resp.read(1_000_000)
    except (urllib.error.URLError, OSError, TimeoutError) as e:
        raise _missing_released(f"could not be downloaded from {RELEASED_CONV_URL} ({e})") from None
    if hashlib.sha256(data).hexdigest() != RELEASED_CONV_SHA256:
        raise _missing_released(f"downloaded from {RELEASED_CONV_URL} do not match their sha256")
    dest = conv_cache_dir() / RELEASED_CONV_FILE
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(f".tmp{os.getpid()}")
    tmp.write_bytes(data)
    tmp.replace(dest)
    return dest


_TORCH_SUFFIXES = (".bin", ".pt", ".pth")


def load_conv_state(path: Path, options: Mapping[str, object]) -> ConvState:
    """Trained convolution weights from a file: the authors' PyTorch state dict (`.bin`, keys
    `mlp.weight`, `mlp.bias`, `layer_final.weight`, `layer_final.bias`; read with
    weights_only=True), or JSON: the weights themselves, or a run.json whose
    config.extra.summac_conv holds them."""
    if not path.is_file():
        raise DetectorError(f"conv_weights {str(path)!r}: no such file")
    if path.suffix.lower() in _TORCH_SUFFIXES:
        return _load_torch_conv(path, options)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DetectorError(
            f"conv_weights {str(path)!r} is unreadable as JSON ({e}); the authors' PyTorch "
            f"weights need a file name ending in {', '.join(_TORCH_SUFFIXES)}"
        ) from None
    if isinstance(data, dict) and "config" in data:
        data = (data.get("config") or {}).get("extra", {}).get("summac_conv")
    need = ("conv_weight", "conv_bias", "final_weight", "final_bias", "bins", "nli_labels")
    if not isinstance(data, dict) or any(k not in data for k in need):
        raise DetectorError(
            f"conv_weights {str(path)!r} holds no SummaC-Conv weights (keys {', '.join(need)})"
        )
    n_bins = len(data["bins"]) - 1
    width = len(data["nli_labels"]) * n_bins
    if len(data["conv_weight"]) != width:
        raise DetectorError(
            f"conv_weights {str(path)!r}: {len(data['conv_weight'])} convolution weights for "
            f"{width} histogram bins"
        )
    if data["nli_labels"] != options["nli_labels"]:
        raise DetectorError(
            f"conv_weights {str(path)!r} were trained on channels {data['nli_labels']!r}, "
            f"not {options['nli_labels']!r}"
        )
    return cast(ConvState, dict(data))  # its keys and their sizes checked above


def _load_torch_conv(path: Path, options: Mapping[str, object]) -> ConvState:
    import torch

    raw = path.read_bytes()
    try:
        sd = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds for a bad file
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DetectorError(
            f"conv_weights {str(path)!r} is not a PyTorch state dict: {first}"
        ) from None
    keys = ("mlp.weight", "mlp.bias", "layer_final.weight", "layer_final.bias")
    if not isinstance(sd, dict) or any(k not in sd for k in keys):
        got = ", ".join(sorted(map(str, sd))) if isinstance(sd, dict) else type(sd).__name__
        raise DetectorError(
            f"conv_weights {str(path)!r} is not SummaC-Conv's state dict: keys {', '.join(keys)} "
            f"needed, found {got}"
        )
    bins = conv_bins(str(options["bins"]))
    nli_labels = str(options["nli_labels"])
    width = len(nli_labels) * (len(bins) - 1)
    shapes = {k: tuple(sd[k].shape) for k in keys}
    want = {
        "mlp.weight": (1, width),
        "mlp.bias": (1,),
        "layer_final.weight": (2, 3),
        "layer_final.bias": (2,),
    }
    bad = [f"{k} {shapes[k]} (expected {want[k]})" for k in keys if shapes[k] != want[k]]
    if bad:
        raise DetectorError(
            f"conv_weights {str(path)!r} do not fit bins={options['bins']} "
            f"nli_labels={options['nli_labels']}: {'; '.join(bad)}"
        )
    sha = hashlib.sha256(raw).hexdigest()
    return {
        "conv_weight": [float(v) for v in sd["mlp.weight"].reshape(-1)],
        "conv_bias": float(sd["mlp.bias"][0]),
        "final_weight": [[float(v) for v in row] for row in sd["layer_final.weight"]],
        "final_bias": [float(v) for v in sd["layer_final.bias"]],
        "bins": list(bins),
        "nli_labels": nli_labels,
        "n_rows": N_ROWS,
        "source": {"file": path.name, "sha256": sha, "released": sha == RELEASED_CONV_SHA256},
    }
