"""LongDocFACTScore (Bishop et al., LREC-COLING 2024, §2): BARTScore made to scale to long
documents.

Both texts are split into sentences and embedded with a sentence-embedding model
(bert-base-nli-mean-tokens in the paper). For each summary sentence s_j the K = 3 source
sentences most similar to it (cosine) are taken, each with one sentence of context either side
(s_{k-1} + s_k + s_{k+1}); the metric (BARTScore, facebook/bart-large) is computed between each
snippet and s_j, the best snippet counts, and the summary's score is the mean over its
sentences:  (1/J) sum_j max_k metric(s_j | s*_k).

option context=released (the default, the authors' setup) builds the snippets as the released
package does (longdocfactscore 1.0.0, `get_surrounding_sentences`): it slices `[k-1 : k+1]`,
i.e. the previous sentence and s_k only (the first two sentences for k = 0), and the published
numbers come from that code. context=paper is the variant that follows the paper's text
(s_{k-1} + s_k + s_{k+1}).

Evidence: per summary sentence, its score (the best snippet's BARTScore), the best snippet as
support, and every retrieved snippet with its score.

Faster than the released package with the same scores: each distinct document is split and
embedded once (not once per summary), all summary sentences are embedded in one call, and the
(snippet, sentence) pairs of the whole run are scored in length-sorted batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from evaluator.detectors.base import (
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


def snippet(sentences: Sequence[str], k: int, context: str = "paper") -> str:
    """Source sentence k with its context, as the paper defines it or as the package does."""
    n = len(sentences)
    if context == "paper":
        return " ".join(sentences[max(k - 1, 0) : k + 2])
    if 0 < k < n - 1:
        return " ".join(sentences[k - 1 : k + 1])
    if k == 0:
        return " ".join(sentences[:2])
    return " ".join(sentences[k - 1 :])


def top_k(similarities: np.ndarray, k: int) -> list[int]:
    """Indices of the k largest similarities, best first (ties: earlier sentence first)."""
    return [int(i) for i in np.argsort(-similarities, kind="stable")[:k]]


def ldfacts_aggregate(per_sentence_snippet_scores: Sequence[Sequence[float]]) -> float:
    """mean over summary sentences of the max over that sentence's snippets."""
    return float(np.mean([max(s) for s in per_sentence_snippet_scores]))


@register_detector("longdocfactscore")
class LongDocFACTScore(ModelDetector):
    name = "longdocfactscore"
    display_name = "LongDocFACTScore"
    default_checkpoint: ClassVar[str | None] = "facebook/bart-large"
    paper = "https://aclanthology.org/2024.lrec-main.941/"
    description = (
        "BARTScore between each summary sentence and the K=3 most similar source sentences "
        "(sentence embeddings) with their neighbours; max over snippets, mean over sentences "
        "(Bishop et al. 2024)."
    )
    default_batch_size = 16
    gpu_precision: ClassVar[str] = "float32"  # the package never casts its models
    sentence_style: ClassVar[str | None] = "nltk"  # the package's sent_tokenize, source and summary
    KNOWN_DIFFERENCES: ClassVar[tuple[str, ...]] = (
        "Equally similar source sentences are ranked earlier-first; the package's argsort "
        "(quicksort) breaks such ties in no fixed order.",
    )
    OPTIONS: ClassVar[dict[str, Opt]] = {
        "embedding_model": Opt(
            str,
            "sentence-transformers/bert-base-nli-mean-tokens",
            "sentence-transformers model (hub id or path)",
        ),
        "k": Opt(
            int, 3, "most similar source sentences per summary sentence", minimum=1, faithful=3
        ),
        "context": Opt(
            str,
            "released",
            "snippet window: the released package's (released) or the paper's text (paper)",
            choices=("paper", "released"),
            faithful="released",
        ),
        "max_length": Opt(int, 1024, "scoring model tokens", minimum=8, faithful=1024),
        "splitter": splitter_opt("nltk"),
        "embedding_batch_size": Opt(int, 64, "sentences per embedding batch", minimum=1),
        "precision": Opt(str, "auto", "model dtype", choices=("auto", "float32", "float16")),
    }

    def _load(self) -> None:
        from evaluator.detectors.bartscore import Seq2SeqLogLikelihood

        self.embedder = load_sentence_model(self.options["embedding_model"], self.device)
        self.lm = Seq2SeqLogLikelihood(
            str(self.checkpoint), self.device, self.options["max_length"]
        )
        self.stats.max_input_tokens["scoring"] = self.lm.max_length
        self._emb: dict[str, Tensor] = {}  # sentence -> its embedding, on the CPU

    def embed(self, sentences: Sequence[str]) -> None:
        """Embed the sentences not embedded yet (one batched call)."""
        todo = list(dict.fromkeys(s for s in sentences if s not in self._emb))
        if not todo:
            return
        vecs = self.embedder.encode(
            todo,
            batch_size=self.options["embedding_batch_size"],
            show_progress_bar=False,
            convert_to_tensor=True,
        )
        for s, v in zip(todo, vecs, strict=True):
            self._emb[s] = v.float().cpu()

    def _score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        import torch

        from evaluator.detectors.batching import Progress, unique

        k, context = self.options["k"], self.options["context"]
        doc_sents = {d: self.sentences(d) for d in dict.fromkeys(documents)}
        sum_sents = [self.sentences(s) for s in summaries]
        self.embed(
            [s for ss in doc_sents.values() for s in ss] + [s for ss in sum_sents for s in ss]
        )
        doc_matrix = {
            d: torch.nn.functional.normalize(torch.stack([self._emb[s] for s in ss]), dim=1)
            for d, ss in doc_sents.items()
            if ss
        }
        keys: list[tuple[str, str]] = []
        owners: list[int] = []
        layout: list[list[int] | None] = []  # per sample: snippets per summary sentence
        for i, (d, sents) in enumerate(zip(documents, sum_sents, strict=True)):
            src = doc_sents[d]
            if not src or not sents:
                layout.append(None)
                continue
            counts = []
            mat = doc_matrix[d]
            for s in sents:
                q = torch.nn.functional.normalize(self._emb[s].unsqueeze(0), dim=1)
                sims = (q @ mat.T)[0].numpy()
                idx = top_k(sims, k)
                counts.append(len(idx))
                for j in idx:
                    keys.append((snippet(src, j, context), s))
                    owners.append(i)
            layout.append(counts)
        uniq, where = unique(keys)
        self.stats.model_inputs += len(uniq)
        bar = Progress(len(uniq), "longdocfactscore snippets", self.progress, unit="pair")
        vals, flags = self.lm.score(
            [u[0] for u in uniq], [u[1] for u in uniq], self.batch_size, bar
        )
        bar.close()
        log = TruncationLog(len(documents))
        log.mark(owners, [flags[w] for w in where])
        log.add_to(self.stats)
        out: list[float] = []
        ev: list[Evidence | None] = []
        pos = 0
        for per_sample, sents in zip(layout, sum_sents, strict=True):
            if per_sample is None:
                out.append(float("nan"))
                ev.append(None)
                continue
            per_sentence = []
            items = []
            for s, c in zip(sents, per_sample, strict=True):
                scores = [float(vals[w]) for w in where[pos : pos + c]]
                snippets = [uniq[w][0] for w in where[pos : pos + c]]
                per_sentence.append(scores)
                best = int(np.argmax(scores))
                items.append(
                    evidence_item(
                        s,
                        scores[best],
                        snippets[best],
                        snippets=[
                            {"text": t, "score": v} for t, v in zip(snippets, scores, strict=True)
                        ],
                    )
                )
                pos += c
            out.append(ldfacts_aggregate(per_sentence))
            ev.append(
                evidence(
                    "sentence",
                    items,
                    "mean over summary sentences of the best snippet's BARTScore",
                    note=f"snippets: the K={k} most similar source sentences, window {context}",
                )
            )
        self.set_evidence(ev)
        return out


def load_sentence_model(name: str, device: Any) -> Any:
    """A sentence-transformers model by hub id or local path, on the device, eval mode."""
    from evaluator.detectors.base import DetectorError, quiet_transformers

    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise DetectorError(
            "sentence-transformers is not installed (pip install -r requirements-detectors.txt)"
        ) from None
    try:
        with quiet_transformers():
            model = SentenceTransformer(name, device=device.name)
    except (OSError, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DetectorError(f"cannot load the sentence-embedding model {name!r}: {first}") from None
    if device.dtype_name == "float16":
        model = model.half()
    model.eval()
    return model
