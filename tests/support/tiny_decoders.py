"""Tiny random-weight decoder-only chat models for the Bespoke-MiniCheck and Granite Guardian
tests, built offline: a Qwen2 causal LM with a ChatML chat template, and a Granite causal LM,
both with one byte-level BPE tokenizer whose vocabulary holds "Yes", "No", "yes" and "no" as
single tokens and the two families' role markers as special tokens.

The output rows of the yes/no tokens are scaled up, so that these tokens are often (not always)
among the likeliest next tokens of a random model: the probabilities the detectors read then vary
with the input instead of being zero everywhere."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from tests.support.detectors import CORPUS

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SPECIALS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|start_of_role|>",
    "<|end_of_role|>",
    "<|end_of_text|>",
]
VERDICT_WORDS = ("Yes", "No", "yes", "no")
CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
EXTRA = [
    "Yes No yes no Yes. No. Yes, no. Document: Claim: <score> yes </score> <score> no </score>",
    "Determine whether the provided claim is consistent with the corresponding document.",
    "A text is considered ungrounded or unfaithful if it includes information lacking support.",
    "yes",
    "no",
    "Yes",
    "No",
    "(yes) (no) (Yes) (No)",
] * 6


def _train_bpe() -> str:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(CORPUS) + EXTRA, trainer)
    return tok.to_str()


def _tokenizer(trained: str, path: Path, *, eos: str, pad: str, chat_template: str | None):
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(trained),
        eos_token=eos,
        pad_token=pad,
        model_max_length=8192,
    )
    if chat_template is not None:
        fast.chat_template = chat_template
    for w in VERDICT_WORDS:
        if len(fast(w, add_special_tokens=False)["input_ids"]) != 1:
            raise RuntimeError(f"the tiny tokenizer splits {w!r}: retrain with more examples")
    fast.save_pretrained(path)
    return fast


def _boost_verdicts(model, tokenizer, factor: float = 6.0) -> None:
    import torch

    vocab = tokenizer.get_vocab()
    words = [w for v in VERDICT_WORDS for w in (v, "Ġ" + v) if w in vocab]
    with torch.no_grad():
        head = model.get_output_embeddings().weight
        for w in words:
            head[vocab[w]] *= factor


def build_tiny_decoders(root: Path) -> dict[str, str]:
    """Build the tiny Qwen2 ("qwen2-chat") and Granite ("granite") models under `root`;
    returns name -> local path."""
    import torch
    from transformers import GraniteConfig, GraniteForCausalLM, Qwen2Config, Qwen2ForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    root.mkdir(parents=True, exist_ok=True)
    trained = _train_bpe()
    small = dict(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        initializer_range=0.5,
        tie_word_embeddings=False,
    )
    paths: dict[str, str] = {}

    torch.manual_seed(0)
    d = root / "qwen2-chat"
    tok = _tokenizer(trained, d, eos="<|im_end|>", pad="<|endoftext|>", chat_template=CHATML)
    qwen = Qwen2ForCausalLM(
        Qwen2Config(
            vocab_size=len(tok),
            eos_token_id=tok.eos_token_id,
            pad_token_id=tok.pad_token_id,
            **small,
        )
    )
    _boost_verdicts(qwen, tok)
    qwen.save_pretrained(d)
    paths["qwen2-chat"] = str(d)

    torch.manual_seed(1)
    d = root / "granite"
    tok = _tokenizer(trained, d, eos="<|end_of_text|>", pad="<|end_of_text|>", chat_template=None)
    granite = GraniteForCausalLM(
        GraniteConfig(
            vocab_size=len(tok),
            eos_token_id=tok.eos_token_id,
            pad_token_id=tok.pad_token_id,
            bos_token_id=tok.eos_token_id,
            **small,
        )
    )
    _boost_verdicts(granite, tok)
    granite.save_pretrained(d)
    paths["granite"] = str(d)
    return paths


@functools.lru_cache(maxsize=4)
def _loaded(path: str):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    return tok, AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()


def reference_steps(
    path: str, prompt: str, max_new_tokens: int, top_k: int
) -> list[list[tuple[str, float]]]:
    """The model at `path` run the plain way, one prompt, no batching, no cache: greedy steps
    until its EOS, each step's top-k (decoded token, log-probability) over the whole vocabulary
    (what an OpenAI-compatible server returns as logprobs)."""
    return _greedy(path, prompt, max_new_tokens, top_k)[1]


def reference_text(path: str, prompt: str, max_new_tokens: int) -> str:
    """The greedy text of `reference_steps`, special tokens skipped (a server's `text`)."""
    tok, _ = _loaded(path)
    return str(tok.decode(_greedy(path, prompt, max_new_tokens, 1)[0], skip_special_tokens=True))


def _greedy(
    path: str, prompt: str, max_new_tokens: int, top_k: int
) -> tuple[list[int], list[list[tuple[str, float]]]]:
    import torch

    tok, model = _loaded(path)
    ids = list(tok(prompt)["input_ids"])
    new: list[int] = []
    steps: list[list[tuple[str, float]]] = []
    with torch.inference_mode():
        for _ in range(max_new_tokens):
            logits = model(input_ids=torch.tensor([ids + new])).logits[0, -1].float()
            lp = logits.log_softmax(-1)
            vals, idx = lp.topk(top_k)
            steps.append([(tok.decode([int(i)]), float(v)) for v, i in zip(vals, idx, strict=True)])
            nxt = int(logits.argmax())
            new.append(nxt)
            if nxt == tok.eos_token_id:
                break
    return new, steps
