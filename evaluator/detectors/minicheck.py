"""MiniCheck (Tang, Laban & Durrett, EMNLP 2024): a small fact-checker trained on synthetic data,
checking a claim against a grounding document.

As the authors' inference code for their RoBERTa, DeBERTa and Flan-T5 checkers does
(Liyan06/MiniCheck, minicheck/inference.py, `Inferencer`):

1. the document is split into sentences line by line, a line break kept as a marker between
   lines (`sent_tokenize_with_newlines`);
2. the sentences are packed greedily into chunks of at most 500 words (Flan-T5) or 400 tokens
   (RoBERTa, DeBERTa; each sentence counted with the checker's tokenizer), a marker joining its
   neighbours with a line break (`inference_per_example`, `chunks`);
3. every chunk is checked against the claim, the **whole summary as one text**
   (`inference`: "Sentences are not splitted and are checked as a single piece of text"): the
   input is `chunk + EOS + claim` ("predict: " first for Flan-T5), cut at 2,048 tokens (512 for
   RoBERTa); the classifiers give P(supported) as the second of two labels, Flan-T5 as the first
   decoded token's probability of id 209 (supported) against id 3 (not), renormalised;
4. the claim's score is the max over chunks (`max_support_prob`), in float32.

FactBoard's sentence-level scoring (every summary sentence checked, the min or mean over
sentences, as the authors' 7B code and their README advise for multi-sentence claims) is the
named variant `aggregate=min|mean`. Decoder-only checkpoints (Bespoke-MiniCheck-7B, Granite
Guardian) are refused here: they have their own detectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from evaluator.detectors.base import (
    DetectorError,
    Evidence,
    ModelDetector,
    Opt,
    TruncationLog,
    evidence,
    evidence_item,
    splitter_opt,
)
from evaluator.detectors.registry import register_detector

if TYPE_CHECKING:
    from torch import Tensor

# the authors' settings per checker (minicheck/minicheck.py and inference.py): input limit in
# tokens, chunk size and what the chunk size counts
AUTHORS_SETUP: dict[str, tuple[int, int, str]] = {
    "flan-t5": (2048, 500, "words"),
    "roberta": (512, 400, "tokens"),
    "deberta": (2048, 400, "tokens"),
}
# model types that are decoder-only language models: the classifier path would give them a new,
# untrained head (and two labels, so nothing else would notice)
DECODER_ONLY_TYPES = frozenset(
    {
        "llama",
        "mistral",
        "mixtral",
        "qwen2",
        "qwen2_moe",
        "qwen3",
        "qwen3_moe",
        "granite",
        "granitemoe",
        "granitemoehybrid",
        "gemma",
        "gemma2",
        "gemma3",
        "gemma3_text",
        "phi",
        "phi3",
        "gpt2",
        "gpt_neox",
        "gptj",
        "falcon",
        "opt",
        "bloom",
        "mpt",
        "olmo",
        "olmo2",
        "starcoder2",
        "cohere",
        "deepseek_v2",
        "deepseek_v3",
    }
)
LINE_BREAK = "\n"  # the marker `sent_tokenize_with_newlines` puts between lines


def minicheck_aggregate(matrix: np.ndarray, how: str = "min") -> float:
    """[chunks, claims] support probabilities -> max over chunks (the authors' aggregation),
    then, over the claims (summary sentences in the sentence variant), the min or the mean. The
    whole-summary setup has one claim, which this returns unchanged."""
    per_claim = matrix.max(axis=0)
    if how == "mean":
        return float(per_claim.mean())
    return float(per_claim.min())


def lines_and_sentences(document: str, style: str = "nltk-newlines") -> tuple[str, ...]:
    """The document's sentences line by line, LINE_BREAK between lines (an empty line adds one
    more), as the authors' `sent_tokenize_with_newlines` ("nltk-newlines": punkt within each
    line, pysbd where its data is missing; "pysbd": FactBoard's splitter within each line);
    [""] when that leaves nothing."""
    from evaluator.detectors.text import split_sentences

    if style == "nltk-newlines":
        return split_sentences(document, style) or ("",)
    out: list[str] = []
    for line in document.split("\n"):
        out.extend(split_sentences(line, style))
        out.append(LINE_BREAK)
    return tuple(out[:-1]) or ("",)


def join_chunk(chunk: str) -> str:
    """A packed chunk's line-break markers become line breaks (the authors:
    `chunk.replace(" \\n ", "\\n").strip()`)."""
    return chunk.replace(" \n ", "\n").strip()


def checker_family(config: Any) -> str:
    """Which of the authors' checkers a config is built like: flan-t5 (any encoder-decoder),
    roberta, deberta (DeBERTa v2/v3), or encoder (any other classifier)."""
    if getattr(config, "is_encoder_decoder", False):
        return "flan-t5"
    mt = str(getattr(config, "model_type", "") or "")
    if mt in ("roberta", "xlm-roberta"):
        return "roberta"
    if mt == "deberta-v2":  # DeBERTa-v3 (relative positions: 2,048 tokens fit)
        return "deberta"
    return "encoder"


def refuse_decoder_only(config: Any, checkpoint: str) -> None:
    """A decoder-only language model cannot be a MiniCheck classifier: loading it through
    AutoModelForSequenceClassification would add a randomly initialised two-label head. The
    message names the detector that runs it."""
    mt = str(getattr(config, "model_type", "") or "")
    archs = [str(a) for a in (getattr(config, "architectures", None) or [])]
    causal = [a for a in archs if a.endswith(("ForCausalLM", "LMHeadModel"))]
    if getattr(config, "is_encoder_decoder", False):
        return
    if not (mt in DECODER_ONLY_TYPES or causal or getattr(config, "is_decoder", False)):
        return
    what = f"model_type {mt!r}" + (f", architectures {', '.join(archs)}" if archs else "")
    name = checkpoint.lower()
    if "granite" in mt or "granite" in name:
        hint = "Granite Guardian's groundedness check runs with --detector granite-guardian"
    elif "bespoke" in name or "minicheck" in name:
        hint = "Bespoke-MiniCheck-7B runs with --detector bespoke-minicheck"
    else:
        hint = (
            "Bespoke-MiniCheck-7B runs with --detector bespoke-minicheck, Granite Guardian with "
            "--detector granite-guardian"
        )
    raise DetectorError(
        f"MiniCheck checkpoint {checkpoint!r} is a decoder-only language model ({what}); the "
        "minicheck detector takes the authors' RoBERTa, DeBERTa or Flan-T5 checkers, and would "
        f"put an untrained classification head on this one. {hint}."
    )


@register_detector("minicheck")
class MiniCheck(ModelDetector):
    name = "minicheck"
    display_name = "MiniCheck"
    default_checkpoint: ClassVar[str | None] = "lytang/MiniCheck-Flan-T5-Large"
    paper = "https://aclanthology.org/2024.emnlp-main.499/"
    description = (
        "Fact-checker of a claim against a document (Tang et al. 2024): the summary is checked "
        "as one claim against each document chunk, max over chunks of P(supported)."
    )
    OPTIONS: ClassVar[dict[str, Opt]] = {
        "chunk_size": Opt(
            int,
            None,
            "chunk size (default as the authors: 500 words Flan-T5, 400 tokens RoBERTa/DeBERTa)",
            minimum=1,
        ),
        "max_length": Opt(
            int,
            None,
            "input tokens (default as the authors: 2048, 512 for RoBERTa)",
            minimum=8,
        ),
        "aggregate": Opt(
            str,
            "whole",
            "whole: the summary as one claim (the authors); min/mean: per summary sentence, "
            "then the min or mean over sentences",
            choices=("whole", "min", "mean"),
            faithful="whole",
        ),
        "support_token_id": Opt(
            int, 209, "Flan-T5: token id read as 'supported'", minimum=0, faithful=209
        ),
        "unsupport_token_id": Opt(
            int, 3, "Flan-T5: token id read as 'not supported'", minimum=0, faithful=3
        ),
        "splitter": splitter_opt("nltk-newlines"),
        "precision": Opt(
            str,
            "auto",
            "model dtype (auto: float32 as the authors; float16 makes Flan-T5 clamp infinities)",
            choices=("auto", "float32", "float16", "bfloat16"),
        ),
    }
    gpu_precision: ClassVar[str] = "float32"  # the authors load every checker in float32
    # documents: sent_tokenize_with_newlines (punkt per line); summary sentences (the sentence
    # variant, as the authors' LLMCheck): sent_tokenize
    sentence_style: ClassVar[str | None] = "nltk-newlines"
    KNOWN_DIFFERENCES: ClassVar[tuple[str, ...]] = (
        "An empty document is checked as one empty chunk (the authors' 7B code does the same; "
        "their RoBERTa/DeBERTa/Flan-T5 code fails on it); an empty summary gets no score.",
        "Batches are length-sorted and padded to their longest input (the authors: batches of 16 "
        "in input order): the same scores up to float rounding.",
    )

    # fidelity ---------------------------------------------------------------------------------

    def deviations(self) -> list[str]:
        """The options away from the authors' setup; an explicit chunk_size or max_length counts
        unless it is the authors' value for this checkpoint's kind of checker (known once the
        model is loaded, or from a config already on disk)."""
        out = super().deviations()
        if self.options.get("max_length") is None and self.options.get("chunk_size") is None:
            return out
        family = getattr(self, "family", None) or self._family_from_disk()
        for key, slot in (("max_length", 0), ("chunk_size", 1)):
            value = self.options.get(key)
            if value is None:
                continue
            authors = AUTHORS_SETUP.get(family or "", (None, None, ""))[slot]
            if value != authors:
                out.append(f"{key}={value}")
        return out

    def _family_from_disk(self) -> str | None:
        try:
            from transformers import AutoConfig

            from evaluator.detectors.base import quiet_transformers

            with quiet_transformers():
                cfg = AutoConfig.from_pretrained(str(self.checkpoint), local_files_only=True)
        except Exception:  # not on disk (or not a config): unknown until loaded
            return None
        return checker_family(cfg)

    # loading ----------------------------------------------------------------------------------

    def _load(self) -> None:
        from transformers import (
            AutoConfig,
            AutoModelForSeq2SeqLM,
            AutoModelForSequenceClassification,
            AutoTokenizer,
        )

        from evaluator.detectors.base import load_pretrained
        from evaluator.detectors.device import place

        ckpt = str(self.checkpoint)
        config = load_pretrained("MiniCheck config", ckpt, AutoConfig.from_pretrained)
        refuse_decoder_only(config, ckpt)
        self.tokenizer = load_pretrained("MiniCheck tokenizer", ckpt, AutoTokenizer.from_pretrained)
        if self.tokenizer.eos_token is None:
            raise DetectorError(f"MiniCheck tokenizer of {ckpt!r} has no EOS token to join with")
        self.family = checker_family(config)
        self.seq2seq = self.family == "flan-t5"
        if self.seq2seq:
            model = load_pretrained("MiniCheck model", ckpt, AutoModelForSeq2SeqLM.from_pretrained)
            vocab = int(model.config.vocab_size)
            for k in ("support_token_id", "unsupport_token_id"):
                if self.options[k] >= vocab:
                    raise DetectorError(
                        f"{k}={self.options[k]} is outside the vocabulary ({vocab})"
                    )
        else:
            model = load_pretrained(
                "MiniCheck model", ckpt, AutoModelForSequenceClassification.from_pretrained
            )
            if int(model.config.num_labels) != 2:
                raise DetectorError(
                    f"MiniCheck classifier {ckpt!r} has {model.config.num_labels} labels, not 2"
                )
        default_len, default_chunk, unit = AUTHORS_SETUP.get(self.family, (2048, 400, "tokens"))
        self.max_length = self.options["max_length"] or default_len
        lim = getattr(self.tokenizer, "model_max_length", None)
        if self.family in ("roberta", "encoder") and isinstance(lim, int) and 0 < lim < 1_000_000:
            # absolute positions: never past the tokenizer's limit (RoBERTa-large: the authors' 512)
            self.max_length = min(self.max_length, lim)
        self.chunk_size = self.options["chunk_size"] or default_chunk
        self.chunk_unit = unit
        self.stats.max_input_tokens["checker"] = self.max_length
        how = self.options["aggregate"]
        self.stats.notes.append(
            f"{self.family} checker: chunks of {self.chunk_size} {self.chunk_unit}, max over "
            "chunks; "
            + (
                "the summary checked as one claim"
                if how == "whole"
                else f"summary sentences checked one by one, {how} over sentences"
            )
        )
        self.model = place(model, self.device)
        if self.seq2seq and self.device.dtype_name == "float16":
            self.stats.notes.append(
                "Flan-T5 in float16 clamps infinite activations: not the authors' float32"
            )
        self._chunk_cache: dict[str, tuple[str, ...]] = {}

    # scoring ----------------------------------------------------------------------------------

    def chunks(self, document: str) -> tuple[str, ...]:
        """The document's chunks as the authors make them (steps 1 and 2 of the module doc)."""
        from evaluator.detectors.text import greedy_chunks

        if document in self._chunk_cache:
            return self._chunk_cache[document]
        sents = lines_and_sentences(document, self.splitter_style() or "nltk-newlines")
        if self.chunk_unit == "words":
            sizes = [len(s.split()) for s in sents]
        else:
            from evaluator.detectors.base import quiet_transformers

            with quiet_transformers():
                enc = self.tokenizer(
                    list(sents),
                    add_special_tokens=False,
                    truncation=True,
                    max_length=self.max_length,
                )
            sizes = [len(ids) for ids in enc["input_ids"]]
        packed = (join_chunk(c) for c in greedy_chunks(sents, sizes, self.chunk_size))
        out = tuple(c for c in packed if c) or ("",)
        self._chunk_cache[document] = out
        return out

    def claims(self, summary: str) -> tuple[str, ...]:
        """What is checked against each chunk: the whole summary as it is (the authors), or its
        sentences (the sentence variant); nothing for an empty summary."""
        if not summary.strip():
            return ()
        if self.options["aggregate"] == "whole":
            return (summary,)
        return self.sentences(summary, "nltk") or (summary.strip(),)

    def matrices(self, documents: Sequence[str], summaries: Sequence[str]) -> list[np.ndarray]:
        """[chunks, claims] support probabilities per pair."""
        from evaluator.detectors.batching import (
            Progress,
            encode,
            pair_grid,
            per_sample_matrices,
            run_batches,
        )

        grid = pair_grid(documents, summaries, self.chunks, self.claims)
        segs, uniq, where, owners = grid.segs, grid.uniq, grid.where, grid.owners
        self.stats.model_inputs += len(uniq)
        eos = self.tokenizer.eos_token
        prefix = "predict: " if self.seq2seq else ""
        texts = [f"{prefix}{c}{eos}{t}" for c, t in uniq]
        rows, flags = encode(self.tokenizer, texts, None, self.max_length)
        if self.seq2seq:
            ids = [self.options["unsupport_token_id"], self.options["support_token_id"]]
            start = int(self.model.config.decoder_start_token_id or 0)

            def forward(batch: dict[str, Tensor]) -> Tensor:
                import torch

                n = batch["input_ids"].shape[0]
                dec = torch.full((n, 1), start, dtype=torch.long, device=batch["input_ids"].device)
                logits = self.model(**batch, decoder_input_ids=dec).logits[:, 0, :]
                return logits[:, ids].float().softmax(dim=-1)[:, 1]

        else:

            def forward(batch: dict[str, Tensor]) -> Tensor:
                return self.model(**batch).logits.float().softmax(dim=-1)[:, 1]

        bar = Progress(len(rows), "minicheck pairs", self.progress, unit="pair")
        probs = run_batches(rows, forward, self.tokenizer, self.device, self.batch_size, bar)
        bar.close()
        log = TruncationLog(len(segs))
        log.mark(owners, [flags[w] for w in where])
        log.add_to(self.stats)
        return per_sample_matrices(segs, where, probs)

    def _score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        how = self.options["aggregate"]
        scores: list[float] = []
        ev: list[Evidence | None] = []
        for d, s, m in zip(documents, summaries, self.matrices(documents, summaries), strict=True):
            if not m.size:
                scores.append(float("nan"))
                ev.append(None)
                continue
            chunks, claims = self.chunks(d), self.claims(s)
            if how == "whole":
                scores.append(float(m[:, 0].max()))
                items = [
                    evidence_item(claims[0], float(m[i, 0]), support=c)
                    for i, c in enumerate(chunks)
                ]
                ev.append(evidence("chunk", items, "max"))
            else:
                scores.append(minicheck_aggregate(m, how))
                best = m.argmax(axis=0)
                items = [
                    evidence_item(t, float(m[best[j], j]), support=chunks[int(best[j])])
                    for j, t in enumerate(claims)
                ]
                ev.append(evidence("sentence", items, how))
        self.set_evidence(ev)
        return scores
