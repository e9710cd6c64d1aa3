"""Tiny random-weight checkers shaped like the authors' MiniCheck models, built offline for the
fidelity tests: a Flan-T5-like seq2seq checker (decoder start id 0, as Flan-T5), a RoBERTa
classifier with RoBERTa-large's 512-token limit, a DeBERTa-v2 classifier (relative positions,
so the authors' 2,048 tokens fit), and decoder-only models (Qwen2 with weights, Llama and
Granite configs) that the classifier path must refuse. Tokenizers come from
tests/support/detectors.py."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.detectors import _bpe, _train_bpe

os.environ.setdefault("HF_HUB_OFFLINE", "1")

_SMALL = dict(hidden_size=32, num_attention_heads=2, intermediate_size=64)


def build_minicheck_checkers(root: Path) -> dict[str, str]:
    """Build the checkers under `root`; returns name -> local path (flan-t5, roberta, deberta,
    qwen2, llama, granite)."""
    import torch
    from transformers import (
        DebertaV2Config,
        DebertaV2ForSequenceClassification,
        GraniteConfig,
        LlamaConfig,
        Qwen2Config,
        Qwen2ForCausalLM,
        RobertaConfig,
        RobertaForSequenceClassification,
        T5Config,
        T5ForConditionalGeneration,
    )
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    root.mkdir(parents=True, exist_ok=True)
    trained = _train_bpe()
    vocab = len(_bpe(trained, root / "_bpe", 512))
    paths: dict[str, str] = {}

    def save(model: object, name: str, max_len: int) -> None:
        d = root / name
        _bpe(trained, d, max_len)
        model.save_pretrained(d)  # type: ignore[attr-defined]
        paths[name] = str(d)

    torch.manual_seed(1)
    t5 = T5Config(
        vocab_size=vocab,
        d_model=32,
        d_kv=16,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=1,
        num_heads=2,
        pad_token_id=0,  # Flan-T5: pad = decoder start = 0 (the authors feed zeros)
        decoder_start_token_id=0,
        eos_token_id=2,
        initializer_factor=1.0,
    )
    save(T5ForConditionalGeneration(t5), "flan-t5", 2048)
    roberta = RobertaConfig(
        vocab_size=vocab,
        num_hidden_layers=2,
        max_position_embeddings=514,  # RoBERTa-large: 512 tokens
        pad_token_id=1,
        num_labels=2,
        initializer_range=0.5,
        **_SMALL,
    )
    save(RobertaForSequenceClassification(roberta), "roberta", 512)
    deberta = DebertaV2Config(
        vocab_size=vocab,
        num_hidden_layers=2,
        max_position_embeddings=512,
        relative_attention=True,
        position_buckets=64,
        pos_att_type=["p2c", "c2p"],
        position_biased_input=False,
        pad_token_id=1,
        num_labels=2,
        initializer_range=0.5,
        **_SMALL,
    )
    save(DebertaV2ForSequenceClassification(deberta), "deberta", 1_000_000_000_000)
    qwen = Qwen2Config(
        vocab_size=vocab,
        num_hidden_layers=1,
        num_key_value_heads=1,
        max_position_embeddings=512,
        pad_token_id=1,
        **_SMALL,
    )
    save(Qwen2ForCausalLM(qwen), "qwen2", 512)
    for name, cfg in (
        ("llama", LlamaConfig(vocab_size=vocab, num_hidden_layers=1, **_SMALL)),
        ("granite", GraniteConfig(vocab_size=vocab, num_hidden_layers=1, **_SMALL)),
    ):
        d = root / name
        cfg.save_pretrained(d)  # a config alone: the guard refuses before any weight loads
        paths[name] = str(d)
    return paths
