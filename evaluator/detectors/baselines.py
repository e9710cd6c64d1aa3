"""Reference-free baselines of the field: ROUGE and BERTScore of the summary against its source
document (the LongDocFACTScore and QAGS papers' baseline rows).

- rouge-1 / rouge-2 / rouge-l: Google's `rouge-score` (Porter stemming), target = document,
  prediction = summary. Default measure: precision (the share of the summary's n-grams found in
  the document); option measure=fmeasure gives the F1 the papers' tables report.
- bertscore: the `bert-score` package with any encoder; precision of the summary's tokens
  against the document's (each summary token's best cosine match in the document). Documents
  longer than the encoder's limit (512 tokens for BERT/RoBERTa) are cut by bert-score; the run
  counts them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from evaluator.detectors.base import (
    Description,
    Detector,
    DetectorError,
    ModelDetector,
    Opt,
    board_name,
    check_pairs,
    parse_options,
)
from evaluator.detectors.registry import register_detector

MEASURES = ("precision", "recall", "fmeasure")


class _Rouge(Detector):
    """ROUGE needs no model: constructed and scored on the CPU, anywhere."""

    rouge_type: ClassVar[str] = ""
    kind = "baseline"
    default_checkpoint: ClassVar[str | None] = None
    paper = "https://aclanthology.org/W04-1013/"
    KNOWN_DIFFERENCES: ClassVar[tuple[str, ...]] = (
        "Scored against the source document (reference-free); the papers' ROUGE rows compare "
        "with reference summaries.",
    )
    OPTIONS: ClassVar[dict[str, Opt]] = {
        "measure": Opt(str, "precision", "which ROUGE figure", choices=MEASURES),
        "stemmer": Opt(bool, True, "Porter stemming"),
    }

    def __init__(self, *, options: Mapping[str, object] | None = None, **more: object) -> None:
        self.options = parse_options(self.name, self.OPTIONS, {**(options or {}), **more})
        self.description = (
            f"{self.rouge_type.upper()} {self.options['measure']} of the summary against the "
            "source document (rouge-score package)."
        )
        self._scorer: Any = None

    def score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        check_pairs(documents, summaries)
        if self._scorer is None:
            from rouge_score import rouge_scorer

            self._scorer = rouge_scorer.RougeScorer(
                [self.rouge_type], use_stemmer=self.options["stemmer"]
            )
        out = []
        for d, s in zip(documents, summaries, strict=True):
            sc = self._scorer.score(d, s)[self.rouge_type]
            out.append(float(getattr(sc, self.options["measure"])))
        return out

    def deviations(self) -> list[str]:
        return []  # Google's rouge-score computes it; no option departs from the package

    def board_name(self) -> str:
        base = self.display_name or self.name
        if self.options.get("measure") != "precision":
            base = f"{base} {self.options['measure']}"
        return board_name(base, None, None, self.deviations())

    def describe(self) -> Description:
        return {
            "checkpoint": None,
            "device": "cpu",
            "options": dict(self.options),
            "fidelity": {
                "faithful": True,
                "deviations": [],
                "known_differences": list(self.KNOWN_DIFFERENCES),
            },
        }


@register_detector("rouge-1")
class Rouge1(_Rouge):
    name = "rouge-1"
    display_name = "ROUGE-1"
    rouge_type = "rouge1"


@register_detector("rouge-2")
class Rouge2(_Rouge):
    name = "rouge-2"
    display_name = "ROUGE-2"
    rouge_type = "rouge2"


@register_detector("rouge-l")
class RougeL(_Rouge):
    name = "rouge-l"
    display_name = "ROUGE-L"
    rouge_type = "rougeL"


@register_detector("bertscore")
class BERTScore(ModelDetector):
    name = "bertscore"
    display_name = "BERTScore"
    kind = "baseline"
    default_checkpoint: ClassVar[str | None] = "roberta-large"
    paper = "https://openreview.net/forum?id=SkeHuCVFDr"
    description = (
        "BERTScore precision of the summary against the source document (bert-score package)."
    )
    default_batch_size = 16
    KNOWN_DIFFERENCES: ClassVar[tuple[str, ...]] = (
        "Scored against the source document (reference-free); the papers' BERTScore rows "
        "compare with reference summaries (QAGS: BERT-large uncased; LongDocFACTScore: "
        "bert-base-uncased F1).",
        "Documents longer than the encoder's limit are cut by bert-score (counted in the run).",
    )
    OPTIONS: ClassVar[dict[str, Opt]] = {
        "num_layers": Opt(
            int, None, "encoder layer used (default: bert-score's for the model)", minimum=0
        ),
        "measure": Opt(
            str, "precision", "which BERTScore figure", choices=("precision", "recall", "f1")
        ),
    }

    def _load(self) -> None:
        from bert_score import BERTScorer
        from bert_score.utils import model2layers

        from evaluator.detectors.base import load_pretrained

        ckpt = str(self.checkpoint)
        layers = self.options["num_layers"]
        if layers is None:
            if ckpt not in model2layers:
                raise DetectorError(
                    f"bertscore: give option num_layers for {ckpt!r} (bert-score knows the best "
                    "layer only for the models it lists)"
                )
            layers = int(model2layers[ckpt])
        self.layers = layers
        self.scorer = load_pretrained(
            "BERTScore encoder",
            ckpt,
            lambda c, **kw: BERTScorer(model_type=c, **kw),
            num_layers=layers,
            batch_size=self.batch_size,
            device=self.device.name,
            idf=False,
        )
        lim = getattr(self.scorer._tokenizer, "model_max_length", 512)
        self.max_length = lim if isinstance(lim, int) and 0 < lim < 1_000_000 else 512
        self.stats.max_input_tokens["document"] = self.max_length
        if self.device.dtype_name != "float32":
            self.stats.notes.append("bert-score runs in float32 on every device")

    def _score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        from evaluator.detectors.base import quiet_transformers

        tok = self.scorer._tokenizer
        with quiet_transformers():
            lens = [len(ids) for ids in tok(list(documents), truncation=False)["input_ids"]]
        cut = [n > self.max_length for n in lens]
        self.stats.inputs_truncated += sum(cut)
        self.stats.samples_truncated += sum(cut)
        self.stats.model_inputs += len(documents) + len(summaries)
        with quiet_transformers():
            p, r, f = self.scorer.score(
                list(summaries), list(documents), verbose=False, batch_size=self.batch_size
            )
        pick = {"precision": p, "recall": r, "f1": f}[self.options["measure"]]
        return [float(v) for v in pick]

    def describe(self) -> Description:
        d = super().describe()
        d["options"] = {**d["options"], "num_layers": getattr(self, "layers", None)}
        return d
