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

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from evaluator.detectors.base import (
    Description,
    DetectorError,
    ModelDetector,
    Opt,
    TruncationLog,
    splitter_opt,
)
from evaluator.detectors.registry import register_detector
from evaluator.detectors.summac_conv import (
    N_ROWS,
    RELEASED_CONV_SHA256,
    ConvState,
    conv_bins,
    conv_histogram,
    conv_probability,
    conv_rows,
    fetch_released_conv,
    find_released_conv,
    load_conv_state,
    train_conv,
)

if TYPE_CHECKING:
    from torch import Tensor

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


# --------------------------------------------------------------------------------------------
# the detectors


class _SummaCBase(ModelDetector):
    default_checkpoint: ClassVar[str | None] = "tals/albert-xlarge-vitaminc-mnli"
    paper = "https://aclanthology.org/2022.tacl-1.10/"
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

            def forward(batch: dict[str, Tensor]) -> Tensor:
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
        self.state: ConvState | None = None
        self._fitted = False  # fit() replaced the weights the options name
        given = self.options["conv_weights"]
        if given == "released":
            found = find_released_conv()  # a local copy only: nothing is downloaded here
            if found is not None:
                self.state = load_conv_state(found, self.options)
        elif given != "dev":
            self.state = load_conv_state(Path(given).expanduser(), self.options)
            self.bins = tuple(self.state["bins"])

    RECORDED = ("fidelity", "summac_conv")
    TRAINED_ON = "summac_conv_trained_on"

    @property
    def needs_fit(self) -> bool:
        return self.options["conv_weights"] == "dev" and self.state is None

    def trained_state(self) -> ConvState | None:
        return self.state

    def actor_files(self) -> dict[str, str]:
        # the weights trained here, or read here from --option conv_weights, as that file's text
        return {} if self.state is None else {"conv_weights": json.dumps(self.state)}

    def deviations(self) -> list[str]:
        out = [d for d in super().deviations() if not d.startswith("conv_weights=")]
        given = self.options["conv_weights"]
        if given == "dev" or self._fitted:
            out.append("conv_weights=dev")
        elif given != "released" and not self._released_state():
            out.append(f"conv_weights={Path(given).name}")
        return out

    def _released_state(self) -> bool:
        src = self.state.get("source") if self.state is not None else None
        return (
            src is not None
            and bool(src.get("released"))
            and src.get("sha256") == RELEASED_CONV_SHA256
        )

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
    ) -> ConvState:
        """Train the convolution on labelled pairs (the benchmark's dev split)."""
        if len(labels) != len(documents):
            raise DetectorError(f"{len(labels)} labels for {len(documents)} training pairs")
        h = self.histograms(documents, summaries)
        st: ConvState = {
            **train_conv(
                h, labels, self.options["epochs"], self.options["lr"], self.options["seed"]
            ),
            "bins": list(self.bins),
            "nli_labels": self.options["nli_labels"],
            "n_rows": N_ROWS,
        }
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

    def describe(self) -> Description:
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
