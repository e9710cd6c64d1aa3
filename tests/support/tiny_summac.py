"""Test support for SummaC and the sentence splitter, built offline:

- `write_punkt_tab(root)`: a tiny English punkt model in nltk's punkt_tab format (the files
  `python -m nltk.downloader punkt_tab` installs), so that nltk's own loader finds real punkt
  data under `root` (this machine cannot download the real model);
- `punkt_installed(root)`: a context in which nltk searches only `root` (and nltk's own cached
  tokenizer is dropped before and after, so that no other test sees this model);
- `build_nli_512(root)`: a tiny random-weight NLI classifier (VitaminC's label names) that takes
  512 tokens, so that SummaC's 500-token truncation is exercised for real (the shared tiny NLI
  takes 128).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

# abbreviations the tiny punkt model knows: "zq." is one only for punkt (pysbd splits after it)
PUNKT_ABBREVIATIONS = ("dr", "mr", "zq", "approx")


def write_punkt_tab(root: Path, abbreviations: tuple[str, ...] = PUNKT_ABBREVIATIONS) -> Path:
    """Write tokenizers/punkt_tab/english/ under `root`; returns `root` (an nltk data folder)."""
    lang = root / "tokenizers" / "punkt_tab" / "english"
    lang.mkdir(parents=True, exist_ok=True)
    (lang / "abbrev_types.txt").write_text("".join(f"{a}\n" for a in abbreviations))
    for name in ("collocations.tab", "sent_starters.txt", "ortho_context.tab"):
        (lang / name).write_text("")
    return root


def _clear_nltk_cache() -> None:
    import nltk.tokenize

    cached = getattr(nltk.tokenize, "_get_punkt_tokenizer", None)
    if cached is not None and hasattr(cached, "cache_clear"):
        cached.cache_clear()


@contextlib.contextmanager
def punkt_installed(root: Path | None) -> Iterator[None]:
    """nltk searches only `root` for its data (None: an nltk with no data anywhere)."""
    import nltk.data

    saved = list(nltk.data.path)
    nltk.data.path[:] = [str(root)] if root is not None else [str(Path("/nonexistent-nltk"))]
    _clear_nltk_cache()
    try:
        yield
    finally:
        nltk.data.path[:] = saved
        _clear_nltk_cache()


def build_nli_512(root: Path) -> str:
    """A tiny BERT NLI classifier (labels SUPPORTS, REFUTES, NOT ENOUGH INFO) with 512
    positions and a WordPiece tokenizer whose limit is 512; returns its folder."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    from tests.support.detectors import _train_wordpiece, _wordpiece

    torch.manual_seed(0)
    path = root / "nli-512"
    vocab = len(_wordpiece(_train_wordpiece(), path, 512))
    labels = {0: "SUPPORTS", 1: "REFUTES", 2: "NOT ENOUGH INFO"}
    model = BertForSequenceClassification(
        BertConfig(
            vocab_size=vocab,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            initializer_range=0.5,
            max_position_embeddings=512,
            num_labels=3,
            id2label=labels,
            label2id={v: k for k, v in labels.items()},
        )
    )
    model.save_pretrained(path)
    return str(path)
