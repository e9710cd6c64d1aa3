"""Tiny random-weight models for the HHEM-2.1-open and FactCG detectors, built offline.

- HHEM: a flan-t5-like "foundation" folder (a T5 config with gated-GELU and untied head, and a
  T5-style tokenizer: no BOS, `</s>` appended, `<pad>` a special token) and a checkpoint folder in
  the released layout: config.json naming HHEMv2ForSequenceClassification, its `foundation` and
  `prompt`, and model.safetensors whose keys are `t5.transformer.*` / `t5.classifier.*` (the tied
  input embedding stored once, as `t5.transformer.shared.weight`).
- FactCG: a DeBERTa-v2 sequence classifier (relative attention only, as DeBERTa-v3) with two
  labels, saved with save_pretrained beside a WordPiece tokenizer ([CLS] ... [SEP]).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.detectors import _train_bpe, _train_wordpiece, _wordpiece

HHEM_CONFIG_PROMPT = (
    "<pad> Determine if the hypothesis is true given the premise?\n\n"
    "Premise: {text1}\n\nHypothesis: {text2}"
)


def _t5_tokenizer(path: Path, max_len: int = 512):
    """A byte-level BPE tokenizer laid out like T5's: `$A </s>`, `<pad>` special."""
    from tokenizers import Tokenizer, processors
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer.from_str(_train_bpe())
    eos = tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", eos)]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        model_max_length=max_len,
    )
    fast.save_pretrained(path)
    return fast


def build_hhem(root: Path, seed: int = 0) -> dict[str, str]:
    """The foundation folder and the HHEM checkpoint folder; returns their paths."""
    import torch
    from safetensors.torch import save_file
    from transformers import T5Config, T5ForTokenClassification

    root.mkdir(parents=True, exist_ok=True)
    foundation, ckpt = root / "flan-t5-tiny", root / "hhem"
    tok = _t5_tokenizer(foundation)
    cfg = T5Config(
        vocab_size=len(tok),
        d_model=32,
        d_kv=16,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=2,
        feed_forward_proj="gated-gelu",
        tie_word_embeddings=False,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.pad_token_id,
        initializer_factor=1.0,
    )
    cfg.save_pretrained(foundation)
    torch.manual_seed(seed)
    model = T5ForTokenClassification(T5Config.from_pretrained(foundation, num_labels=2))
    torch.nn.init.normal_(model.classifier.weight, std=0.2)
    state = {
        f"t5.{k}": v.detach().clone().contiguous()
        for k, v in model.state_dict().items()
        if k != "transformer.encoder.embed_tokens.weight"  # tied to shared: stored once
    }
    ckpt.mkdir(exist_ok=True)
    save_file(state, str(ckpt / "model.safetensors"), metadata={"format": "pt"})
    config = {
        "architectures": ["HHEMv2ForSequenceClassification"],
        "auto_map": {
            "AutoConfig": "configuration_hhem_v2.HHEMv2Config",
            "AutoModelForSequenceClassification": (
                "modeling_hhem_v2.HHEMv2ForSequenceClassification"
            ),
        },
        "foundation": str(foundation),
        "id2label": {"0": "hallucinated", "1": "consistent"},
        "label2id": {"hallucinated": 0, "consistent": 1},
        "model_type": "HHEMv2Config",
        "prompt": HHEM_CONFIG_PROMPT,
        "torch_dtype": "float32",
    }
    (ckpt / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return {"hhem": str(ckpt), "hhem-foundation": str(foundation)}


def build_factcg(root: Path, seed: int = 0) -> dict[str, str]:
    """A tiny DeBERTa-v2 two-label classifier with its tokenizer; returns its path."""
    import torch
    from transformers import DebertaV2Config, DebertaV2ForSequenceClassification

    root.mkdir(parents=True, exist_ok=True)
    path = root / "factcg"
    tok = _wordpiece(_train_wordpiece(), path, 512)
    torch.manual_seed(seed)
    model = DebertaV2ForSequenceClassification(
        DebertaV2Config(
            vocab_size=len(tok),
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=512,
            relative_attention=True,
            position_buckets=64,
            pos_att_type=["p2c", "c2p"],
            position_biased_input=False,
            pad_token_id=tok.pad_token_id,
            num_labels=2,
            initializer_range=0.5,
        )
    )
    model.save_pretrained(path)
    return {"factcg": str(path)}


def build_tiny_checkers(root: Path) -> dict[str, str]:
    """Both detectors' tiny checkpoints under `root`: role -> local path."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    return {**build_hhem(root / "hhem"), **build_factcg(root / "factcg")}
