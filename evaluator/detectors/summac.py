"""SummaC (Laban et al., TACL 2022): NLI between document blocks and summary sentences.

The defaults are the authors' setup (tingofurro/summac, `summac/model_summac.py`, the
configuration of the paper's released models: `vitc` NLI model, sentence granularity):

- `SummaCImager.split_sentences`: nltk's `sent_tokenize`, then sentences of 10 characters or
  fewer dropped (`len(sent) > 10`), in the document and in the summary alike (one granularity
  serves both unless given as "doc-summary"); `build_chunk_dataset`: the first 100 document
  blocks (`max_doc_sents=100`).
- `build_image`: a pair with no document block or no summary sentence left is the zero image
  [3, 1, 1] (SummaC-ZS then scores 0, not NaN); otherwise every (block, sentence) pair goes
  through the NLI model, cut at 500 tokens (`max_input_length = 500`) with `truncation=True`,
  which transformers 4 resolves to longest-first (its legacy `truncation_strategy="only_first"`
  argument is ignored when `truncation` is given; transformers 5 has no such argument), and
  the softmax gives the entailment, contradiction and neutral probabilities: the image
  [3, blocks, sentences]. On CUDA the authors run the NLI model in float16 (`.half()`).
- SummaC-ZS (`image2score`, op1=max, op2=mean): per summary sentence the largest entailment
  over blocks minus the largest contradiction over blocks; the mean over sentences.
- SummaC-Conv (`compute_histogram`, `forward`): per summary sentence (the first 10) a histogram
  of its entailment probabilities over the blocks ('percentile' bins); a linear map of each
  histogram (the 1-D convolution), the mean over the sentences present, a 2-way linear layer:
  P(consistent). Its weights are the authors' released file (`summac_conv_vitc_sent_perc_e.bin`,
  trained on FactCC); training on the benchmark's dev split is FactBoard's variant
  (`conv_weights=dev`).

FactBoard's earlier setup stays reachable as named options (a run that uses them is a variant
on the board): `splitter=pysbd min_chars=0 max_doc_blocks=0 max_length=512
truncation=only_first conv_weights=dev`.

Default checkpoint: the VitaminC-MNLI ALBERT-xlarge the paper's released models use.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from evaluator.detectors.base import (
    DetectorError,
    ModelDetector,
    Opt,
    TruncationLog,
    splitter_opt,
)
from evaluator.detectors.registry import register_detector

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
N_ROWS = 10  # summary sentences the convolution looks at (SummaCConv.n_rows)
LABELS = "ecn"  # image channel order: entailment, contradiction, neutral

# label order of known NLI checkpoints whose configs do not name their labels usefully
KNOWN_LABEL_ORDER: dict[str, tuple[int, int, int]] = {
    # (entailment, contradiction, neutral) indices of the classifier's outputs
    "tals/albert-xlarge-vitaminc-mnli": (0, 1, 2),
    "tals/albert-base-vitaminc-mnli": (0, 1, 2),
    "roberta-large-mnli": (2, 0, 1),
    "FacebookAI/roberta-large-mnli": (2, 0, 1),
    "microsoft/deberta-large-mnli": (2, 0, 1),
    "microsoft/deberta-base-mnli": (2, 0, 1),
}

_ENTAIL = ("entail", "support")
_CONTRA = ("contradict", "refute")
_NEUTRAL = ("neutral", "not enough", "not_enough", "nei")


def label_order_from_config(id2label: dict[int, str]) -> tuple[int, int, int] | None:
    """(entailment, contradiction, neutral) indices from label names, or None if unnamed."""
    found: dict[str, int] = {}
    for idx, name in id2label.items():
        low = str(name).lower()
        for key, words in (("e", _ENTAIL), ("c", _CONTRA), ("n", _NEUTRAL)):
            if any(w in low for w in words):
                found.setdefault(key, int(idx))
    if set(found) == {"e", "c", "n"}:
        return found["e"], found["c"], found["n"]
    return None


# --------------------------------------------------------------------------------------------
# the pure aggregations (tested against straightforward re-computations)


def zs_sentence_scores(image: np.ndarray, use_ent: bool = True, use_con: bool = True) -> np.ndarray:
    """SummaC-ZS per summary sentence (`image2score` before op2): from an image [3, blocks,
    sentences] (channels e, c, n), the max entailment over blocks minus the max contradiction
    (or 1 - max contradiction, or max entailment alone)."""
    ent = image[0].max(axis=0)
    con = image[1].max(axis=0)
    if use_ent and use_con:
        return np.asarray(ent - con)
    if use_ent:
        return np.asarray(ent)
    return np.asarray(1.0 - con)


def zs_score(image: np.ndarray, use_ent: bool = True, use_con: bool = True) -> float:
    """SummaC-ZS from an image [3, blocks, sentences]: the mean over sentences (op2=mean)."""
    return float(zs_sentence_scores(image, use_ent, use_con).mean())


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


def conv_rows(histograms: np.ndarray, state: dict[str, Any]) -> np.ndarray:
    """The convolution's output per histogram row, [N, n_rows] (`self.mlp(histograms)`)."""
    w = np.asarray(state["conv_weight"], dtype=np.float64)  # [width]
    b = float(state["conv_bias"])
    return np.asarray(histograms @ w + b)


def conv_probability(histograms: np.ndarray, state: dict[str, Any]) -> np.ndarray:
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
) -> dict[str, Any]:
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


# --------------------------------------------------------------------------------------------
# the authors' segmentation (SummaCImager.split_text / build_chunk_dataset)

GRANULARITIES = ("sentence", "2sents", "paragraph", "document")
# one granularity for document and summary, or "doc-summary" (SummaCImager's `grans`)
GRANULARITY_CHOICES = GRANULARITIES + tuple(
    f"{a}-{b}" for a in GRANULARITIES for b in GRANULARITIES if a != b
)


def split_text(
    text: str, granularity: str, splitter: str = "nltk", min_chars: int = 10
) -> list[str]:
    """SummaCImager.split_text: the blocks of `text`.

    sentence: the splitter's sentences longer than `min_chars` characters (`len(sent) > 10`);
    2sents: those sentences joined in sliding pairs, the last one alone (`sentences[i:i+2]` for
    every i); paragraph: split on blank lines if there are any, else on line breaks, stripped,
    longer than `min_chars`; document: the text as it is. `splitter` is "nltk" (the authors':
    punkt, pysbd where its data is missing) or "pysbd" (FactBoard's, every line break a
    boundary)."""
    from evaluator.detectors.text import split_sentences

    if granularity == "document":
        return [text]
    if granularity == "paragraph":
        parts = text.split("\n\n") if "\n\n" in text else text.split("\n")
        return [p.strip() for p in parts if len(p.strip()) > min_chars]
    if granularity not in ("sentence", "2sents"):
        raise DetectorError(f"unknown SummaC granularity {granularity!r}; known: {GRANULARITIES}")
    sents = [s for s in split_sentences(text, splitter) if len(s) > min_chars]
    if granularity == "2sents":
        return [" ".join(sents[i : i + 2]) for i in range(len(sents))]
    return sents


def segments(
    document: str,
    summary: str,
    granularity: str = "sentence",
    splitter: str = "nltk",
    min_chars: int = 10,
    max_doc_blocks: int = 100,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """SummaCImager.build_chunk_dataset: the document's blocks (the first `max_doc_blocks`;
    0 keeps all) and the summary's, each split at its granularity."""
    gran_doc, _, gran_sum = granularity.partition("-")
    blocks = split_text(document, gran_doc, splitter, min_chars)
    if max_doc_blocks > 0:
        blocks = blocks[:max_doc_blocks]
    sents = split_text(summary, gran_sum or gran_doc, splitter, min_chars)
    return tuple(blocks), tuple(sents)


# --------------------------------------------------------------------------------------------
# the released convolution weights

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


def load_conv_state(path: Path, options: dict[str, Any]) -> dict[str, Any]:
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
    return dict(data)


def _load_torch_conv(path: Path, options: dict[str, Any]) -> dict[str, Any]:
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
    bins = conv_bins(options["bins"])
    width = len(options["nli_labels"]) * (len(bins) - 1)
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
        "nli_labels": options["nli_labels"],
        "n_rows": N_ROWS,
        "source": {"file": path.name, "sha256": sha, "released": sha == RELEASED_CONV_SHA256},
    }


# --------------------------------------------------------------------------------------------
# the detectors


class _SummaCBase(ModelDetector):
    default_checkpoint: ClassVar[str | None] = "tals/albert-xlarge-vitaminc-mnli"
    paper: ClassVar[str] = "https://aclanthology.org/2022.tacl-1.10/"
    gpu_precision: ClassVar[str] = "float16"  # SummaCImager.load_nli: model.half() on CUDA
    sentence_style: ClassVar[str | None] = "nltk"  # SummaCImager.split_sentences: sent_tokenize
    OPTIONS: ClassVar[dict[str, Opt]] = {
        "granularity": Opt(
            str,
            "sentence",
            "blocks of document and summary (one granularity, or doc-summary)",
            choices=GRANULARITY_CHOICES,
            faithful="sentence",
        ),
        "splitter": splitter_opt("nltk"),
        "min_chars": Opt(
            int,
            10,
            "drop sentences and paragraphs of this many characters or fewer",
            minimum=0,
            faithful=10,
        ),
        "max_doc_blocks": Opt(
            int, 100, "document blocks kept, the first ones (0: all)", minimum=0, faithful=100
        ),
        "entailment_idx": Opt(int, None, "classifier output index of entailment", minimum=0),
        "contradiction_idx": Opt(int, None, "classifier output index of contradiction", minimum=0),
        "neutral_idx": Opt(int, None, "classifier output index of neutral", minimum=0),
        "max_length": Opt(
            int,
            500,
            "tokens per (block, sentence) pair (at most the model's limit)",
            minimum=8,
            faithful=500,
        ),
        "truncation": Opt(
            str,
            "longest_first",
            "which side of an over-long pair is cut: longest_first, or only_first (the block)",
            choices=("longest_first", "only_first"),
            faithful="longest_first",
        ),
        "precision": Opt(str, "auto", "model dtype", choices=("auto", "float32", "float16")),
    }
    KNOWN_DIFFERENCES: ClassVar[tuple[str, ...]] = (
        "The 500-token limit is lowered to the NLI model's own limit where that is smaller "
        "(the authors' code fails on such a model).",
        "Pairs are deduplicated and run in length-sorted batches (the authors: input order, "
        "batches of 20 or 128), so padding differs; scores agree to float rounding.",
        "The authors' 'mixed' granularity and op1/op2 other than max/mean are not offered.",
    )

    def _check_options(self) -> None:
        idx = [self.options[k] for k in ("entailment_idx", "contradiction_idx", "neutral_idx")]
        given = [i for i in idx if i is not None]
        if given and len(given) != 3:
            raise DetectorError(
                f"detector {self.name}: give all three of entailment_idx, contradiction_idx "
                "and neutral_idx, or none (the order is then read from the checkpoint)"
            )
        if given and len(set(given)) != 3:
            raise DetectorError(f"detector {self.name}: label indices {given} are not distinct")
        self._cache: dict[tuple[str, str], tuple[np.ndarray, bool]] = {}

    # model ----------------------------------------------------------------------------------

    def _load(self) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from evaluator.detectors.base import load_pretrained
        from evaluator.detectors.device import place

        ckpt = str(self.checkpoint)
        self.tokenizer = load_pretrained("NLI tokenizer", ckpt, AutoTokenizer.from_pretrained)
        model = load_pretrained(
            "NLI model", ckpt, AutoModelForSequenceClassification.from_pretrained
        )
        n = int(model.config.num_labels)
        if self.options["entailment_idx"] is not None:
            order = (
                self.options["entailment_idx"],
                self.options["contradiction_idx"],
                self.options["neutral_idx"],
            )
            source = "options"
        else:
            named = label_order_from_config(dict(model.config.id2label or {}))
            known = KNOWN_LABEL_ORDER.get(ckpt)
            order = named or known  # type: ignore[assignment]
            source = "config labels" if named else "known checkpoint"
            if order is None:
                raise DetectorError(
                    f"cannot tell the label order of NLI checkpoint {ckpt!r} (labels "
                    f"{dict(model.config.id2label or {})}); give entailment_idx, "
                    "contradiction_idx and neutral_idx"
                )
        if max(order) >= n:
            raise DetectorError(
                f"label indices {order} out of range for {ckpt!r}, which has {n} outputs"
            )
        self.label_order = tuple(int(i) for i in order)
        self.stats.notes.append(
            f"NLI label order (entailment, contradiction, neutral) = {self.label_order} "
            f"from {source}"
        )
        limit = _model_limit(self.tokenizer, model.config)
        self.max_length = min(self.options["max_length"], limit)
        if self.max_length < self.options["max_length"]:
            self.stats.notes.append(
                f"pairs cut at {self.max_length} tokens, the NLI model's limit "
                f"(max_length={self.options['max_length']} asked)"
            )
        self.stats.max_input_tokens["nli"] = self.max_length
        self.model = place(model, self.device)

    def _segments(self, document: str, summary: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        o = self.options
        return segments(
            document,
            summary,
            o["granularity"],
            self.splitter_style() or "nltk",
            o["min_chars"],
            o["max_doc_blocks"],
        )

    def images(self, documents: Sequence[str], summaries: Sequence[str]) -> list[np.ndarray]:
        """The NLI image [3, blocks, sentences] of every pair (channels e, c, n)."""
        return [img for img, _, _ in self.pair_images(documents, summaries)]

    def pair_images(
        self, documents: Sequence[str], summaries: Sequence[str]
    ) -> list[tuple[np.ndarray, tuple[str, ...], tuple[str, ...]]]:
        """Per pair: its NLI image, its document blocks and its summary sentences. A pair with
        no block or no sentence is the authors' zero image [3, 1, 1] with no blocks or
        sentences. (block, sentence) pairs shared between samples are scored once, and kept
        for later calls (SummaC-Conv trains, then scores)."""
        from evaluator.detectors.batching import Progress, encode, run_batches, unique

        self.ensure_loaded()
        segs = [self._segments(d, s) for d, s in zip(documents, summaries, strict=True)]
        keys: list[tuple[str, str]] = []
        owners: list[int] = []
        for i, (blocks, sents) in enumerate(segs):
            for b in blocks:
                for s in sents:
                    keys.append((b, s))
                    owners.append(i)
        todo = [k for k in unique(keys)[0] if k not in self._cache]
        self.stats.model_inputs += len(todo)
        if todo:
            rows, flags = encode(
                self.tokenizer,
                [k[0] for k in todo],
                [k[1] for k in todo],
                self.max_length,
                self.options["truncation"],
            )
            e, c, n = self.label_order
            bar = Progress(len(rows), f"{self.name} NLI pairs", self.progress, unit="pair")

            def forward(batch: dict[str, Any]) -> Any:
                # the softmax in the model's dtype, as the authors' (float16 on a GPU)
                return self.model(**batch).logits.softmax(dim=-1)[:, [e, c, n]]

            probs = run_batches(rows, forward, self.tokenizer, self.device, self.batch_size, bar)
            bar.close()
            for k, p, f in zip(todo, probs, flags, strict=True):
                self._cache[k] = (p, f)
        log = TruncationLog(len(segs))
        log.mark(owners, [self._cache[k][1] for k in keys])
        log.add_to(self.stats)
        out: list[tuple[np.ndarray, tuple[str, ...], tuple[str, ...]]] = []
        pos = 0
        for blocks, sents in segs:
            if not blocks or not sents:  # build_image: np.zeros((3, 1, 1))
                out.append((np.zeros((3, 1, 1), dtype=np.float64), (), ()))
                continue
            img = np.zeros((3, len(blocks), len(sents)), dtype=np.float64)
            for bi in range(len(blocks)):
                for si in range(len(sents)):
                    img[:, bi, si] = self._cache[keys[pos]][0]
                    pos += 1
            out.append((img, blocks, sents))
        return out


_EMPTY_NOTE = (
    "no document block or no summary sentence longer than the minimum: the authors' zero image"
)


@register_detector("summac-zs")
class SummaCZS(_SummaCBase):
    name = "summac-zs"
    display_name = "SummaC-ZS"
    description = (
        "NLI between document sentences and summary sentences; mean over summary sentences "
        "of max entailment minus max contradiction (Laban et al. 2022)."
    )
    OPTIONS: ClassVar[dict[str, Opt]] = {
        **_SummaCBase.OPTIONS,
        "use_ent": Opt(bool, True, "use the entailment channel", faithful=True),
        "use_con": Opt(bool, True, "use the contradiction channel", faithful=True),
    }

    def _check_options(self) -> None:
        super()._check_options()
        if not (self.options["use_ent"] or self.options["use_con"]):
            raise DetectorError("summac-zs: use_ent and use_con cannot both be false")

    def _score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        from evaluator.detectors.base import evidence, evidence_item

        ue, uc = self.options["use_ent"], self.options["use_con"]
        out, evs = [], []
        for img, blocks, sents in self.pair_images(documents, summaries):
            out.append(zs_score(img, ue, uc))
            if not sents:
                evs.append(evidence("sentence", [], "mean", note=_EMPTY_NOTE))
                continue
            per = zs_sentence_scores(img, ue, uc)
            # the block that supports the sentence best: argmax of its e - c column
            column = np.zeros(img.shape[1:])
            if ue:
                column += img[0]
            if uc:
                column -= img[1]
            items = []
            for j, sent in enumerate(sents):
                best = int(np.argmax(column[:, j]))
                items.append(
                    evidence_item(
                        sent,
                        float(per[j]),
                        blocks[best],
                        support_score=float(column[best, j]),
                        entailment=float(img[0, :, j].max()),
                        contradiction=float(img[1, :, j].max()),
                        block=best,
                    )
                )
            evs.append(evidence("sentence", items, "mean"))
        self.set_evidence(evs)
        return out


@register_detector("summac-conv")
class SummaCConv(_SummaCBase):
    name = "summac-conv"
    display_name = "SummaC-Conv"
    description = (
        "SummaC's learned convolution over each summary sentence's histogram of NLI "
        "entailment probabilities, with the authors' released weights (Laban et al. 2022)."
    )
    OPTIONS: ClassVar[dict[str, Opt]] = {
        **_SummaCBase.OPTIONS,
        "bins": Opt(
            str, "percentile", "histogram bins: percentile or evenN", faithful="percentile"
        ),
        "nli_labels": Opt(
            str, "e", "channels histogrammed", choices=("e", "c", "n", "ec", "ecn"), faithful="e"
        ),
        "conv_weights": Opt(
            str,
            "released",
            "released (the authors' weights file), dev (train on the benchmark's dev split), "
            "or a file: the authors' .bin or FactBoard's JSON / run.json",
            faithful="released",
        ),
        "epochs": Opt(int, 200, "training epochs with conv_weights=dev (full batch)", minimum=1),
        "lr": Opt(float, 0.01, "Adam learning rate with conv_weights=dev", minimum=0.0),
        "seed": Opt(int, 0, "initialisation seed with conv_weights=dev"),
    }
    KNOWN_DIFFERENCES: ClassVar[tuple[str, ...]] = (
        *_SummaCBase.KNOWN_DIFFERENCES,
        "The convolution and the final layer run in float64 NumPy on the CPU (the authors: "
        "float32 torch on the device): differences of the order of 1e-7.",
    )

    def _check_options(self) -> None:
        super()._check_options()
        self.bins = conv_bins(self.options["bins"])
        self.state: dict[str, Any] | None = None
        self._fitted = False  # fit() replaced the weights the options name
        given = self.options["conv_weights"]
        if given == "released":
            found = find_released_conv()  # a local copy only: nothing is downloaded here
            if found is not None:
                self.state = load_conv_state(found, self.options)
        elif given != "dev":
            self.state = load_conv_state(Path(given).expanduser(), self.options)
            self.bins = tuple(self.state["bins"])

    @property
    def needs_fit(self) -> bool:
        return self.options["conv_weights"] == "dev" and self.state is None

    def deviations(self) -> list[str]:
        out = [d for d in super().deviations() if not d.startswith("conv_weights=")]
        given = self.options["conv_weights"]
        if given == "dev" or self._fitted:
            out.append("conv_weights=dev")
        elif given != "released" and not self._released_state():
            out.append(f"conv_weights={Path(given).name}")
        return out

    def _released_state(self) -> bool:
        src = (self.state or {}).get("source") or {}
        return bool(src.get("released")) and src.get("sha256") == RELEASED_CONV_SHA256

    def score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        if self.state is None and self.options["conv_weights"] == "released":
            # before the NLI model loads: a missing file fails at once, saying what to pass
            self.state = load_conv_state(fetch_released_conv(), self.options)
        return super().score(documents, summaries)

    def histograms(self, documents: Sequence[str], summaries: Sequence[str]) -> np.ndarray:
        imgs = self.images(documents, summaries)
        return np.stack([conv_histogram(i, self.bins, self.options["nli_labels"]) for i in imgs])

    def fit(
        self, documents: Sequence[str], summaries: Sequence[str], labels: Sequence[int]
    ) -> dict[str, Any]:
        """Train the convolution on labelled pairs (the benchmark's dev split)."""
        if len(labels) != len(documents):
            raise DetectorError(f"{len(labels)} labels for {len(documents)} training pairs")
        h = self.histograms(documents, summaries)
        st = train_conv(h, labels, self.options["epochs"], self.options["lr"], self.options["seed"])
        st.update(
            {"bins": list(self.bins), "nli_labels": self.options["nli_labels"], "n_rows": N_ROWS}
        )
        self.state = st
        self._fitted = True
        return st

    def _score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        from evaluator.detectors.base import evidence, evidence_item

        if self.state is None:
            raise DetectorError(
                "summac-conv is not trained: call fit() on labelled dev pairs (the runner does "
                "this on the benchmark's dev split with conv_weights=dev) or give option "
                "conv_weights=FILE"
            )
        pairs = self.pair_images(documents, summaries)
        labels = self.options["nli_labels"]
        h = np.stack([conv_histogram(img, self.bins, labels) for img, _, _ in pairs])
        p = conv_probability(h, self.state)
        rows = conv_rows(h, self.state)
        agg = "mean of the first 10 sentences' convolution outputs, then P(consistent)"
        evs = []
        for (img, blocks, sents), r in zip(pairs, rows, strict=True):
            if not sents:
                evs.append(evidence("sentence", [], agg, note=_EMPTY_NOTE))
                continue
            items = []
            for j, sent in enumerate(sents):
                best = int(np.argmax(img[0, :, j]))  # the block that entails the sentence most
                items.append(
                    evidence_item(
                        sent,
                        float(r[j]) if j < N_ROWS else None,
                        blocks[best],
                        support_score=float(img[0, best, j]),
                        block=best,
                        in_model=j < N_ROWS,
                    )
                )
            evs.append(evidence("sentence", items, agg))
        self.set_evidence(evs)
        return [float(v) for v in p]

    def describe(self) -> dict[str, Any]:
        d = super().describe()
        d["summac_conv"] = self.state
        return d


def _model_limit(tokenizer: Any, config: Any) -> int:
    """The longest input the model takes: the tokenizer's limit, else the position table."""
    lim = getattr(tokenizer, "model_max_length", None)
    if isinstance(lim, int) and 0 < lim < 1_000_000:
        return lim
    pos = getattr(config, "max_position_embeddings", None)
    if isinstance(pos, int) and pos > 0:
        # RoBERTa-style position tables reserve padding_idx + 1 slots
        return pos - 2 if getattr(config, "model_type", "") in ("roberta", "xlm-roberta") else pos
    return 512
