"""FactCG (Lei, Li et al., NAACL 2025): a DeBERTa-v3-large fact checker trained on synthetic
multi-hop claims generated from context graphs (CG2C); `yaxili96/FactCG-DeBERTa-v3-Large`.

As in the authors' inference code (the FactCG repository's `Inferencer`):
- the document is split into sentences and packed greedily into chunks of at most 550 tokens,
  counted with NLTK's word tokenizer, a chunk's sentences joined by line breaks; a sentence that
  would overflow starts a new chunk (and when the very first sentence alone is over the limit,
  their loop first emits an empty chunk, which is scored too);
- the claim (here the whole summary: the authors never split it) is checked against every chunk
  through one instruction text,

      {chunk}\\n\\nChoose your answer: based on the paragraph above can we conclude that
      "{claim}"?\\n\\nOPTIONS:\\n- Yes\\n- No\\nI think the answer is

  (one line in the code), tokenized as a single sequence cut at 2,048 tokens from the right;
- the 2-way classifier's softmax index 1 is "supported"; the claim's score is the max over
  chunks of P(supported), and the best chunk is the evidence the code returns beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

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

FACTCG_TEMPLATE = (
    '{text_a}\n\nChoose your answer: based on the paragraph above can we conclude that "{text_b}"?'
    "\n\nOPTIONS:\n- Yes\n- No\nI think the answer is "
)
SUPPORTED_INDEX = 1  # softmax(logits)[:, 1] is P(supported)
FACTCG_MODEL_TYPE = "deberta-v2"


def factcg_input(chunk: str, claim: str) -> str:
    """The classifier's text for one (chunk, claim) pair (the authors fill it with str.format)."""
    return FACTCG_TEMPLATE.format(text_a=chunk, text_b=claim)


def nltk_token_count(sentence: str) -> int:
    """Tokens of one sentence as NLTK's word_tokenize counts them (its Treebank-style word
    tokenizer, which needs no downloaded data)."""
    from nltk.tokenize import NLTKWordTokenizer

    return len(NLTKWordTokenizer().tokenize(sentence))


def factcg_chunks(sentences: Sequence[str], sizes: Sequence[int], limit: int) -> tuple[str, ...]:
    """The authors' chunking of a document's sentences (token counts in `sizes`): greedy packing
    within `limit`, sentences joined by line breaks; an empty chunk first when the first
    sentence alone is over the limit (their loop flushes its empty start chunk)."""
    from evaluator.detectors.text import greedy_chunks

    if not sentences:
        return ()
    packed = greedy_chunks(tuple(sentences), list(sizes), limit, sep="\n")
    return (("",) if sizes[0] > limit else ()) + packed


@register_detector("factcg")
class FactCG(ModelDetector):
    name = "factcg"
    display_name = "FactCG-DeBERTa-L"
    default_checkpoint: ClassVar[str | None] = "yaxili96/FactCG-DeBERTa-v3-Large"
    paper = "https://arxiv.org/abs/2501.17144"
    description = (
        "DeBERTa-v3-large fact checker (Lei et al. 2025): the claim against document chunks of "
        "<= 550 NLTK tokens in an instruction text, P(supported) max over chunks."
    )
    OPTIONS: ClassVar[dict[str, Opt]] = {
        "chunk_size": Opt(
            int, 550, "document chunk size in NLTK word tokens", minimum=1, faithful=550
        ),
        "max_length": Opt(
            int,
            2048,
            "tokens per (chunk, claim) input, cut from the right",
            minimum=16,
            faithful=2048,
        ),
        "splitter": splitter_opt("nltk"),
        "precision": Opt(
            str, "auto", "model dtype", choices=("auto", "float32", "float16", "bfloat16")
        ),
    }
    gpu_precision: ClassVar[str] = "float32"  # the authors load and run it in float32
    sentence_style: ClassVar[str | None] = "nltk"  # chunking_src: sent_tokenize(src)
    KNOWN_DIFFERENCES: ClassVar[tuple[str, ...]] = (
        "Token counts for chunking use NLTK's word tokenizer per sentence (punkt not re-run).",
    )

    def _load(self) -> None:
        from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

        from evaluator.detectors.base import load_pretrained
        from evaluator.detectors.device import place

        ckpt = str(self.checkpoint)
        config = load_pretrained("FactCG config", ckpt, AutoConfig.from_pretrained)
        mtype = getattr(config, "model_type", None)
        archs = list(getattr(config, "architectures", None) or [])
        if mtype != FACTCG_MODEL_TYPE or (
            archs and "DebertaV2ForSequenceClassification" not in archs
        ):
            what = ", ".join(archs) or f"model_type {mtype!r}"
            raise DetectorError(
                f"checkpoint {ckpt!r} is {what}, not FactCG's DeBERTa-v3 classifier "
                "(DebertaV2ForSequenceClassification)"
            )
        if int(getattr(config, "num_labels", 0)) != 2:
            raise DetectorError(
                f"FactCG classifier {ckpt!r} has {config.num_labels} labels, not 2 "
                "(index 1 = supported)"
            )
        self.tokenizer = load_pretrained("FactCG tokenizer", ckpt, AutoTokenizer.from_pretrained)
        model = load_pretrained(
            "FactCG model", ckpt, AutoModelForSequenceClassification.from_pretrained
        )
        self.model = place(model, self.device)
        self.max_length = int(self.options["max_length"])
        self.chunk_size = int(self.options["chunk_size"])
        self.stats.max_input_tokens["checker"] = self.max_length
        self.stats.notes.append(
            f"document chunks of <= {self.chunk_size} NLTK tokens (sentences joined by line "
            "breaks); the whole summary is the claim; score = max over chunks of "
            f"softmax(logits)[{SUPPORTED_INDEX}] = P(supported)"
        )
        self._chunk_cache: dict[str, tuple[str, ...]] = {}

    def chunks(self, document: str) -> tuple[str, ...]:
        if document not in self._chunk_cache:
            sents = self.sentences(document)
            sizes = [nltk_token_count(s) for s in sents]
            self._chunk_cache[document] = factcg_chunks(sents, sizes, self.chunk_size)
        return self._chunk_cache[document]

    def chunk_scores(
        self, documents: Sequence[str], summaries: Sequence[str]
    ) -> list[tuple[tuple[str, ...], np.ndarray]]:
        """Per pair: its document chunks and P(supported) of the claim against each."""
        from evaluator.detectors.batching import Progress, encode, run_batches, unique

        per_pair = []
        keys: list[tuple[str, str]] = []
        owners: list[int] = []
        for i, (d, s) in enumerate(zip(documents, summaries, strict=True)):
            chunks = self.chunks(d)
            per_pair.append(chunks)
            for c in chunks:
                keys.append((c, s))
                owners.append(i)
        uniq, where = unique(keys)
        self.stats.model_inputs += len(uniq)
        texts = [factcg_input(c, s) for c, s in uniq]
        rows, flags = encode(self.tokenizer, texts, None, self.max_length)

        def forward(batch: dict[str, Tensor]) -> Tensor:
            return self.model(**batch).logits.float().softmax(dim=-1)[:, SUPPORTED_INDEX]

        bar = Progress(len(rows), "factcg pairs", self.progress, unit="pair")
        probs = run_batches(rows, forward, self.tokenizer, self.device, self.batch_size, bar)
        bar.close()
        log = TruncationLog(len(per_pair))
        log.mark(owners, [flags[w] for w in where])
        log.add_to(self.stats)
        out = []
        pos = 0
        for chunks in per_pair:
            vals = np.asarray([probs[w] for w in where[pos : pos + len(chunks)]], np.float64)
            out.append((chunks, vals))
            pos += len(chunks)
        return out

    def _score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        scores: list[float] = []
        ev: list[Evidence | None] = []
        for s, (chunks, vals) in zip(
            summaries, self.chunk_scores(documents, summaries), strict=True
        ):
            if not len(vals):  # a document without sentences: the method has no score
                scores.append(float("nan"))
                ev.append(None)
                continue
            best = int(vals.argmax())
            scores.append(float(vals[best]))
            item = evidence_item(
                s.strip(),
                vals[best],
                chunks[best],
                chunk=best,
                chunks=len(chunks),
                chunk_scores=[float(v) for v in vals],
            )
            note = f"the summary checked whole against {len(chunks)} document chunk(s)"
            ev.append(evidence("chunk", [item], "max over chunks", note=note))
        self.set_evidence(ev)
        return scores
