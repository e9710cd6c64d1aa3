"""AlignScore (Zha et al., ACL 2023): a RoBERTa alignment model with three heads (binary,
3-way, regression) on the pooled [CLS] output, trained on many alignment tasks.

For factual consistency the paper splits the document into chunks of about 350 words (runs of
whole sentences) and the summary into sentences, scores every (chunk, sentence) pair with the
3-way head's ALIGNED probability ("nli_sp" in the released code), takes the max over chunks for
each sentence and the mean over sentences.

As the released code does (src/alignscore/inference.py, `Inferencer.inference_per_example` and
`batch_tokenize`): each pair is tokenized as (chunk, sentence) cut `only_first` at the
tokenizer's limit (512 for RoBERTa), and a pair whose sentence alone is too long for that is cut
`longest_first` instead (their `truncation=True` retry) rather than failing; float32 on every
device (their Inferencer never casts the model).

Checkpoint: the released Lightning file (`yzha/AlignScore`, AlignScore-large.ckpt on
roberta-large, or AlignScore-base.ckpt on roberta-base), given as a local path or as
`HUB_REPO:FILE`; its weights are loaded into a model built from `base_model`'s config.
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


def alignscore_aggregate(matrix: np.ndarray) -> float:
    """[chunks, sentences] aligned probabilities -> max over chunks, mean over sentences."""
    return float(matrix.max(axis=0).mean())


def summary_sentences(summary: str, style: str = "nltk") -> tuple[str, ...]:
    """The summary's sentences, each checked against every chunk (the released code:
    `sent_tokenize(hypo)`); none for an empty summary, which then has no score."""
    from evaluator.detectors.text import split_sentences

    return split_sentences(summary, style) or ((summary.strip(),) if summary.strip() else ())


def resolve_ckpt_file(checkpoint: str) -> str:
    """A local .ckpt path, or HUB_REPO:FILE fetched through the Hugging Face cache."""
    from pathlib import Path

    p = Path(checkpoint).expanduser()
    if p.is_file():
        return str(p)
    if ":" in checkpoint and not p.exists():
        repo, fname = checkpoint.rsplit(":", 1)
        try:
            from huggingface_hub import hf_hub_download

            return str(hf_hub_download(repo, fname))
        except Exception as e:  # the hub client raises many error types
            raise DetectorError(
                f"cannot fetch AlignScore checkpoint {checkpoint!r}: {str(e).splitlines()[0]}"
            ) from None
    raise DetectorError(
        f"AlignScore checkpoint {checkpoint!r} is neither a file nor HUB_REPO:FILE "
        "(e.g. yzha/AlignScore:AlignScore-large.ckpt)"
    )


@register_detector("alignscore")
class AlignScore(ModelDetector):
    name = "alignscore"
    display_name = "AlignScore"
    default_checkpoint: ClassVar[str | None] = "yzha/AlignScore:AlignScore-large.ckpt"
    paper = "https://aclanthology.org/2023.acl-long.634/"
    description = (
        "RoBERTa alignment model; document chunks of ~350 words vs summary sentences, max over "
        "chunks of the 3-way head's aligned probability, mean over sentences (Zha et al. 2023)."
    )
    OPTIONS: ClassVar[dict[str, Opt]] = {
        "base_model": Opt(
            str, "roberta-large", "hub id or path of the backbone's config+tokenizer"
        ),
        "head": Opt(
            str,
            "tri",
            "tri: 3-way ALIGNED prob (nli_sp); bin: binary head",
            ("tri", "bin"),
            faithful="tri",
        ),
        "chunk_words": Opt(int, 350, "words per document chunk", minimum=1, faithful=350),
        "max_length": Opt(
            int,
            512,
            "tokens per (chunk, sentence) pair (capped at the tokenizer's limit)",
            minimum=8,
            faithful=512,
        ),
        "precision": Opt(
            str, "auto", "model dtype (float32 as the authors)", ("auto", "float32", "float16")
        ),
        "splitter": splitter_opt("nltk"),
        "trust_checkpoint": Opt(bool, False, "allow a pickled (non weights-only) .ckpt"),
    }
    gpu_precision: ClassVar[str] = "float32"  # the released Inferencer never casts the model
    sentence_style: ClassVar[str | None] = "nltk"  # sent_tokenize(premise), sent_tokenize(hypo)
    KNOWN_DIFFERENCES: ClassVar[tuple[str, ...]] = (
        "A pair whose summary sentence leaves no room for the chunk is cut longest-first on its "
        "own; the authors retry their whole mini-batch (the example's pairs, batch_size at a "
        "time) with truncation=True, which cuts other long pairs of that batch longest-first "
        "too.",
        "Batches are length-sorted and padded to their longest pair (the authors pad every pair "
        "to 512): the same scores up to float rounding.",
    )

    def _load(self) -> None:
        import torch
        from transformers import AutoConfig, AutoModel, AutoTokenizer

        from evaluator.detectors.base import load_pretrained, quiet_transformers
        from evaluator.detectors.device import place

        base = self.options["base_model"]
        self.tokenizer = load_pretrained(
            "AlignScore tokenizer", base, AutoTokenizer.from_pretrained
        )
        config = load_pretrained("AlignScore backbone config", base, AutoConfig.from_pretrained)
        path = resolve_ckpt_file(str(self.checkpoint))
        try:
            ck = torch.load(
                path, map_location="cpu", weights_only=not self.options["trust_checkpoint"]
            )
        except Exception as e:  # torch raises UnpicklingError, RuntimeError, ...
            raise DetectorError(
                f"cannot read AlignScore checkpoint {path!r}: {str(e).splitlines()[0]} (if you "
                "trust the file, option trust_checkpoint=true loads pickled objects too)"
            ) from None
        state = ck.get("state_dict", ck) if isinstance(ck, dict) else None
        if not isinstance(state, dict):
            raise DetectorError(f"AlignScore checkpoint {path!r} holds no state_dict")
        with quiet_transformers():
            backbone = AutoModel.from_config(config, add_pooling_layer=True)
        sub = {k[len("base_model.") :]: v for k, v in state.items() if k.startswith("base_model.")}
        missing, unexpected = backbone.load_state_dict(sub, strict=False)
        missing = [k for k in missing if not k.endswith("position_ids")]
        if missing or not sub:
            raise DetectorError(
                f"AlignScore checkpoint {path!r} does not fit backbone {base!r}: missing "
                f"{missing[:5] or 'every base_model.* weight'}"
            )
        hidden = int(config.hidden_size)
        heads = {}
        for name, n_out in (("tri_layer", 3), ("bin_layer", 2)):
            lin = torch.nn.Linear(hidden, n_out)
            w, b = state.get(f"{name}.weight"), state.get(f"{name}.bias")
            if w is None or b is None or tuple(w.shape) != (n_out, hidden):
                raise DetectorError(
                    f"AlignScore checkpoint {path!r} has no {name} [{n_out}x{hidden}]"
                )
            lin.load_state_dict({"weight": w, "bias": b})
            heads[name] = lin
        self.backbone = place(backbone, self.device)
        self.head = place(
            heads["tri_layer" if self.options["head"] == "tri" else "bin_layer"], self.device
        )
        self.aligned_col = 0 if self.options["head"] == "tri" else 1
        lim = getattr(self.tokenizer, "model_max_length", 512)
        lim = lim if isinstance(lim, int) and 0 < lim < 1_000_000 else 512
        self.max_length = min(self.options["max_length"], lim)
        self.stats.max_input_tokens["alignment"] = self.max_length

    def chunks(self, document: str) -> tuple[str, ...]:
        """The document's chunks of about `chunk_words` words, whole sentences split in the
        chosen style (the authors: nltk's sent_tokenize on the whole text)."""
        from evaluator.detectors.text import alignscore_chunks

        style = self.splitter_style() or "nltk"
        return alignscore_chunks(document, self.options["chunk_words"], style)

    def summary_sentences(self, summary: str) -> tuple[str, ...]:
        """The summary's sentences in the chosen style (see `summary_sentences`)."""
        return summary_sentences(summary, self.splitter_style() or "nltk")

    def matrices(self, documents: Sequence[str], summaries: Sequence[str]) -> list[np.ndarray]:
        """[chunks, sentences] aligned probabilities per pair."""
        from evaluator.detectors.batching import (
            Progress,
            encode,
            pair_grid,
            per_sample_matrices,
            run_batches,
        )

        grid = pair_grid(documents, summaries, self.chunks, self.summary_sentences)
        segs, uniq, where, owners = grid.segs, grid.uniq, grid.where, grid.owners
        self.stats.model_inputs += len(uniq)
        fell_back: list[int] = []
        rows, flags = encode(
            self.tokenizer,
            [k[0] for k in uniq],
            [k[1] for k in uniq],
            self.max_length,
            "only_first",
            fallback="longest_first",
            fell_back=fell_back,
        )
        note = (
            "pairs whose summary sentence is too long for only_first truncation at "
            f"{self.max_length} tokens were cut longest_first (the authors' retry)"
        )
        if fell_back and note not in self.stats.notes:
            self.stats.notes.append(note)
        col = self.aligned_col

        def forward(batch: dict[str, Tensor]) -> Tensor:
            pooled = self.backbone(**batch).pooler_output
            return self.head(pooled).float().softmax(dim=-1)[:, col]

        bar = Progress(len(rows), "alignscore pairs", self.progress, unit="pair")
        probs = run_batches(rows, forward, self.tokenizer, self.device, self.batch_size, bar)
        bar.close()
        log = TruncationLog(len(segs))
        log.mark(owners, [flags[w] for w in where])
        log.add_to(self.stats)
        return per_sample_matrices(segs, where, probs)

    def _score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        scores: list[float] = []
        ev: list[Evidence | None] = []
        for d, s, m in zip(documents, summaries, self.matrices(documents, summaries), strict=True):
            if not m.size:
                scores.append(float("nan"))
                ev.append(None)
                continue
            scores.append(alignscore_aggregate(m))
            chunks = self.chunks(d)
            best = m.argmax(axis=0)
            items = [
                evidence_item(sent, float(m[best[j], j]), support=chunks[int(best[j])])
                for j, sent in enumerate(self.summary_sentences(s))
            ]
            ev.append(evidence("sentence", items, "mean"))
        self.set_evidence(ev)
        return scores
