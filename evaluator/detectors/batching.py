"""Batched inference: inputs are tokenized once, deduplicated, sorted by length (longest first, so
that an out-of-memory error shows on the first batch) and padded per batch, so that a batch of
short inputs does not pay for the longest input of the whole run. A progress bar reports the
throughput."""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:
    from torch import Tensor

K = TypeVar("K", bound=Hashable)
_ROW_KEYS = ("input_ids", "attention_mask", "token_type_ids")  # what a token row keeps


class Progress:
    """A tqdm bar on stderr (inputs per second), or nothing when disabled."""

    def __init__(self, total: int, desc: str, enabled: bool, unit: str = "input", initial: int = 0):
        self.bar: Any = None
        if enabled and total > 0:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total,
                initial=initial,
                desc=desc,
                unit=unit,
                file=sys.stderr,
                dynamic_ncols=True,
                leave=True,
            )

    def update(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def unique(keys: Sequence[K]) -> tuple[list[K], list[int]]:
    """Distinct keys in first-seen order, and for each input the index of its key."""
    pos: dict[K, int] = {}
    where = []
    for k in keys:
        if k not in pos:
            pos[k] = len(pos)
        where.append(pos[k])
    return list(pos), where


def length_sorted_batches(
    lengths: Sequence[int], batch_size: int, max_tokens: int | None = None
) -> list[list[int]]:
    """Indices grouped into batches of similar length, longest first; ties keep input order
    (stable: the same inputs always give the same batches). `max_tokens` caps batch size x
    longest length (padded tokens per batch)."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    cur: list[int] = []
    for i in order:
        longest = lengths[cur[0]] if cur else lengths[i]
        full = len(cur) >= batch_size
        over = max_tokens is not None and cur and (len(cur) + 1) * longest > max_tokens
        if cur and (full or over):
            batches.append(cur)
            cur = []
        cur.append(i)
    if cur:
        batches.append(cur)
    return batches


def encode(
    tokenizer: Any,
    firsts: Sequence[str],
    seconds: Sequence[str] | None,
    max_length: int,
    truncation: str = "only_first",
    *,
    fallback: str | None = None,
    fell_back: list[int] | None = None,
) -> tuple[list[dict[str, list[int]]], list[bool]]:
    """Tokenize texts (or text pairs) without padding; inputs longer than `max_length` tokens are
    cut (`truncation`: which side) and flagged, so the caller can record it.

    A pair whose second text alone leaves no room (`only_first` cannot cut enough) is cut with
    `fallback` instead (e.g. "longest_first", as AlignScore's released code retries with
    `truncation=True`), its index appended to `fell_back`; without a fallback it is an error
    naming the pair."""
    from evaluator.detectors.base import quiet_transformers

    if not firsts:
        return [], []
    with quiet_transformers():
        if seconds is None:
            full = tokenizer(list(firsts), add_special_tokens=True, truncation=False)
        else:
            full = tokenizer(list(firsts), list(seconds), add_special_tokens=True, truncation=False)
        names = [k for k in _ROW_KEYS if k in full]
        rows = [{k: full[k][i] for k in names} for i in range(len(firsts))]
        flags = [len(r["input_ids"]) > max_length for r in rows]
        long = [i for i, f in enumerate(flags) if f]
        if long:
            a = [firsts[i] for i in long]
            if seconds is None:
                cut = tokenizer(a, truncation=True, max_length=max_length)
                for j, i in enumerate(long):
                    rows[i] = {k: cut[k][j] for k in names}
            else:
                b = [seconds[i] for i in long]
                try:
                    cut = tokenizer(a, b, truncation=truncation, max_length=max_length)
                    for j, i in enumerate(long):
                        rows[i] = {k: cut[k][j] for k in names}
                except Exception:  # the fast tokenizers raise a bare Exception
                    for i in long:
                        rows[i], used_fallback = _cut_pair(
                            tokenizer, firsts[i], seconds[i], i, max_length, truncation, fallback
                        )
                        if used_fallback and fell_back is not None:
                            fell_back.append(i)
    return rows, flags


def _cut_pair(
    tokenizer: Any,
    first: str,
    second: str,
    index: int,
    max_length: int,
    truncation: str,
    fallback: str | None,
) -> tuple[dict[str, list[int]], bool]:
    """One over-long pair cut with `truncation`, else with `fallback` (True: it was)."""
    try:
        enc = tokenizer(first, second, truncation=truncation, max_length=max_length)
        return {k: enc[k] for k in _ROW_KEYS if k in enc}, False
    except Exception as e:
        if fallback is None:
            from evaluator.core.errors import DetectorError

            raise DetectorError(
                f"input pair #{index} cannot be cut to {max_length} tokens with truncation="
                f"{truncation}: {str(e).strip() or type(e).__name__} (its second text is "
                f"{len(tokenizer(second, add_special_tokens=False)['input_ids'])} tokens)"
            ) from None
    enc = tokenizer(first, second, truncation=fallback, max_length=max_length)
    return {k: enc[k] for k in _ROW_KEYS if k in enc}, True


def pad_batch(rows: Sequence[dict[str, list[int]]], pad_id: int, device: Any) -> dict[str, Tensor]:
    """Right-pad token rows into tensors on the device (attention_mask marks the real tokens;
    token_type_ids, when present, are padded with 0). Much faster than tokenizer.pad."""
    import torch

    n, width = len(rows), max(len(r["input_ids"]) for r in rows)
    ids = np.full((n, width), pad_id, dtype=np.int64)
    mask = np.zeros((n, width), dtype=np.int64)
    types = np.zeros((n, width), dtype=np.int64) if "token_type_ids" in rows[0] else None
    for j, r in enumerate(rows):
        k = len(r["input_ids"])
        ids[j, :k] = r["input_ids"]
        mask[j, :k] = 1
        if types is not None:
            types[j, :k] = r["token_type_ids"]
    out = {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask)}
    if types is not None:
        out["token_type_ids"] = torch.from_numpy(types)
    return {k: v.to(device.torch_device) for k, v in out.items()}


def run_batches(
    rows: Sequence[dict[str, list[int]]],
    forward: Callable[[dict[str, Tensor]], Tensor],
    tokenizer: Any,
    device: Any,
    batch_size: int,
    progress: Progress | None = None,
    max_tokens: int | None = None,
) -> np.ndarray:
    """Pad each length-sorted batch, run `forward(batch_tensors) -> tensor [b, ...]` on the
    device without gradients, and return the float32 results in input order."""
    import torch

    if not rows:
        return np.zeros((0,), dtype=np.float32)
    lengths = [len(r["input_ids"]) for r in rows]
    pad_id = tokenizer.pad_token_id
    if pad_id is None:
        from evaluator.core.errors import DetectorError

        raise DetectorError(f"tokenizer {type(tokenizer).__name__} has no padding token")
    out: list[Any] = [None] * len(rows)
    with torch.inference_mode():
        for idx in length_sorted_batches(lengths, batch_size, max_tokens):
            batch = pad_batch([rows[i] for i in idx], int(pad_id), device)
            res = forward(batch).float().cpu().numpy()
            for j, i in enumerate(idx):
                out[i] = res[j]
            if progress is not None:
                progress.update(len(idx))
    return np.stack(out).astype(np.float32)


def chunked(seq: Sequence[Any], n: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


@dataclass(frozen=True)
class PairGrid:
    """Every (chunk, sentence) input of a batch of samples, deduplicated.

    segs: per sample, its document chunks and summary sentences (or claims); pairs are made
    chunk-major. uniq: the distinct (chunk, sentence) inputs to score; where: for each pair in
    order, its index in uniq; owners: for each pair, its sample."""

    segs: list[tuple[list[str], list[str]]]
    uniq: list[tuple[str, str]]
    where: list[int]
    owners: list[int]


def pair_grid(
    documents: Sequence[str],
    summaries: Sequence[str],
    chunks: Callable[[str], Sequence[str]],
    sentences: Callable[[str], Sequence[str]],
) -> PairGrid:
    """The (chunk, sentence) grid of AlignScore, MiniCheck and the decoder checkers: each
    document's `chunks` against each summary's `sentences`, deduplicated across the batch."""
    segs: list[tuple[list[str], list[str]]] = []
    keys: list[tuple[str, str]] = []
    owners: list[int] = []
    for i, (d, s) in enumerate(zip(documents, summaries, strict=True)):
        cs, ts = list(chunks(d)), list(sentences(s))
        segs.append((cs, ts))
        for c in cs:
            for t in ts:
                keys.append((c, t))
                owners.append(i)
    uniq, where = unique(keys)
    return PairGrid(segs, uniq, where, owners)


def per_sample_matrices(
    segs: Sequence[tuple[Sequence[Any], Sequence[Any]]],
    where: Sequence[int],
    probs: Sequence[float] | np.ndarray,
) -> list[np.ndarray]:
    """Reassemble flat per-pair results into one (chunks x sentences) matrix per sample.

    segs: per sample, its document chunks and summary sentences (pairs were made chunk-major);
    where: for each pair in that order, the index of its result in probs (pairs deduplicated)."""
    out = []
    pos = 0
    for chunks, sents in segs:
        n = len(chunks) * len(sents)
        vals = np.asarray([probs[w] for w in where[pos : pos + n]], dtype=np.float64)
        out.append(vals.reshape(len(chunks), len(sents)))
        pos += n
    return out
