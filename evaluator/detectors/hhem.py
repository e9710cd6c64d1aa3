"""HHEM-2.1-open (Vectara's Hughes Hallucination Evaluation Model, the open model behind Vectara's
hallucination leaderboard; `vectara/hallucination_evaluation_model`, Apache-2.0).

What the model is (its model card, config.json and the remote code it ships): a flan-t5-base
encoder with a two-way linear head on every token (transformers' T5ForTokenClassification, under
the attribute `t5`, so the checkpoint's keys read `t5.transformer.*` and `t5.classifier.*`). The
premise (the source) and the hypothesis (the summary or claim) are written into one prompt,

    <pad> Determine if the hypothesis is true given the premise?\\n\\n
    Premise: {text1}\\n\\nHypothesis: {text2}

(one line in the code), tokenized with flan-t5-base's tokenizer (the checkpoint's config names
it, `foundation`), and the head's logits at the first position (the literal `<pad>` token) go
through a softmax; index 1 is "consistent" (the config's id2label: 0 hallucinated, 1
consistent), so the score is P(consistent), higher = more consistent. The authors neither chunk
nor truncate (the model card: no context limit; their `predict` tokenizes with padding only),
and neither does this detector by default; `--option max_length=N` is a named variant that
shortens the premise to fit.

The hub checkpoint needs `trust_remote_code`; here the architecture is built from transformers'
own T5 classes and the checkpoint's weights are mapped onto it, so no remote code runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from evaluator.detectors.base import (
    DetectorError,
    ModelDetector,
    Opt,
    TruncationLog,
    evidence,
    evidence_item,
)
from evaluator.detectors.registry import register_detector

if TYPE_CHECKING:
    from torch import Tensor

# the prompt of the released config / remote code ({text1}: premise, {text2}: hypothesis)
HHEM_PROMPT = (
    "<pad> Determine if the hypothesis is true given the premise?\n\n"
    "Premise: {text1}\n\nHypothesis: {text2}"
)
HHEM_ARCHITECTURE = "HHEMv2ForSequenceClassification"
HHEM_FOUNDATION = "google/flan-t5-base"
CONSISTENT_INDEX = 1  # id2label {0: hallucinated, 1: consistent}
PREFIX = "t5."  # the released weights live under the remote model's `t5` attribute
UNLIMITED = 1 << 62


def hhem_prompt(premise: str, hypothesis: str, template: str = HHEM_PROMPT) -> str:
    """The model's input for one pair (the authors fill the template with str.format)."""
    return template.format(text1=premise, text2=hypothesis)


def hhem_state_dict(state: dict[str, Tensor], where: str) -> dict[str, Tensor]:
    """The released state dict (`t5.transformer.*`, `t5.classifier.*`) as the keys of
    transformers' T5ForTokenClassification; the tied input embedding is filled from whichever
    of its two names the file kept."""
    sub = {k[len(PREFIX) :]: v for k, v in state.items() if k.startswith(PREFIX)}
    has_embedding = (
        "transformer.shared.weight" in sub or "transformer.encoder.embed_tokens.weight" in sub
    )
    if "classifier.weight" not in sub or not has_embedding:
        some = ", ".join(sorted(state)[:3]) or "no tensors"
        raise DetectorError(
            f"{where} does not hold HHEM-2.1-open weights (t5.classifier.*, "
            f"t5.transformer.shared.weight); it has {some}, ..."
        )
    emb = sub.get("transformer.shared.weight")
    if emb is None:
        emb = sub["transformer.encoder.embed_tokens.weight"]
    sub.setdefault("transformer.shared.weight", emb)
    sub.setdefault("transformer.encoder.embed_tokens.weight", emb)
    return sub


def _read_weights(checkpoint: str) -> tuple[dict[str, Tensor], str]:
    """The checkpoint's tensors (model.safetensors, else pytorch_model.bin, read weights-only)
    from a local folder or the Hugging Face cache / hub."""
    from transformers.utils import cached_file

    from evaluator.detectors.base import load_pretrained

    def find(name: str) -> Any:
        return load_pretrained(
            "HHEM weights",
            checkpoint,
            lambda c: cached_file(c, name, _raise_exceptions_for_missing_entries=False),
        )

    path = find("model.safetensors")
    if path is not None:
        from safetensors.torch import load_file

        try:
            return dict(load_file(path)), str(path)
        except Exception as e:  # safetensors raises SafetensorError, OSError, ...
            raise DetectorError(
                f"cannot read HHEM weights {path!r}: {str(e).splitlines()[0]}"
            ) from None
    path = find("pytorch_model.bin")
    if path is not None:
        import torch

        try:
            return dict(torch.load(path, map_location="cpu", weights_only=True)), str(path)
        except Exception as e:  # torch raises UnpicklingError, RuntimeError, ...
            raise DetectorError(
                f"cannot read HHEM weights {path!r}: {str(e).splitlines()[0]}"
            ) from None
    raise DetectorError(
        f"HHEM checkpoint {checkpoint!r} has no model.safetensors or pytorch_model.bin"
    )


@register_detector("hhem")
class HHEM(ModelDetector):
    name = "hhem"
    display_name = "HHEM-2.1-open"
    default_checkpoint: ClassVar[str | None] = "vectara/hallucination_evaluation_model"
    paper = "https://huggingface.co/vectara/hallucination_evaluation_model"
    description = (
        "Vectara's HHEM-2.1-open: flan-t5-base encoder + two-way head over a premise/hypothesis "
        "prompt, P(consistent) at the first token; whole document, no chunking."
    )
    OPTIONS: ClassVar[dict[str, Opt]] = {
        "foundation": Opt(
            str,
            None,
            "hub id or path of the flan-t5-base config + tokenizer (default: the checkpoint "
            "config's `foundation`)",
        ),
        "max_length": Opt(
            int,
            0,
            "input tokens; 0 = no limit, as the authors (else the premise is shortened to fit)",
            minimum=0,
            faithful=0,
        ),
        # no float16: T5's activations overflow it (NaN scores)
        "precision": Opt(str, "auto", "model dtype", choices=("auto", "float32", "bfloat16")),
    }
    # the released config says float32 and the authors' code never casts
    gpu_precision: ClassVar[str] = "float32"
    KNOWN_DIFFERENCES: ClassVar[tuple[str, ...]] = (
        "Batches are length-sorted and padded per batch, not in input order (padding is masked).",
    )

    def _check_options(self) -> None:
        n = self.options["max_length"]
        if 0 < n < 32:
            raise DetectorError(
                f"option max_length={n} of detector hhem: too short for the prompt (0 = no limit)"
            )

    def _load(self) -> None:
        import torch
        from transformers import AutoConfig, AutoTokenizer, T5Config, T5ForTokenClassification
        from transformers.utils import cached_file

        from evaluator.detectors.base import load_pretrained, quiet_transformers
        from evaluator.detectors.device import place

        ckpt = str(self.checkpoint)
        cfg_path = load_pretrained("HHEM config", ckpt, lambda c: cached_file(c, "config.json"))
        try:
            with open(cfg_path, encoding="utf-8") as f:
                cfg = json.load(f)
        except (OSError, ValueError) as e:
            raise DetectorError(f"cannot read HHEM config {cfg_path!r}: {e}") from None
        if not isinstance(cfg, dict):
            raise DetectorError(f"HHEM config {cfg_path!r} is not a JSON object")
        archs = cfg.get("architectures") or []
        if HHEM_ARCHITECTURE not in archs:
            what = ", ".join(map(str, archs)) or f"model_type {cfg.get('model_type')!r}"
            raise DetectorError(
                f"checkpoint {ckpt!r} is {what}, not HHEM-2.1-open ({HHEM_ARCHITECTURE})"
            )
        foundation = self.options["foundation"] or cfg.get("foundation") or HHEM_FOUNDATION
        template = cfg.get("prompt") or HHEM_PROMPT
        if not isinstance(template, str) or "{text1}" not in template or "{text2}" not in template:
            raise DetectorError(
                f"HHEM config {cfg_path!r}: prompt {template!r} lacks {{text1}} or {{text2}}"
            )
        self.template = template
        t5cfg = load_pretrained("HHEM foundation config", foundation, AutoConfig.from_pretrained)
        if not isinstance(t5cfg, T5Config):
            raise DetectorError(
                f"HHEM foundation {foundation!r} is a {type(t5cfg).__name__}, not a T5 config"
            )
        t5cfg.num_labels = 2
        self.tokenizer = load_pretrained(
            "HHEM tokenizer", foundation, AutoTokenizer.from_pretrained
        )
        state, wpath = _read_weights(ckpt)
        sub = hhem_state_dict(state, f"HHEM weights {wpath!r}")
        with quiet_transformers():
            model = T5ForTokenClassification(t5cfg)
        want = model.state_dict()
        bad = [
            f"{k} {tuple(v.shape)} (model {tuple(want[k].shape)})"
            for k, v in sub.items()
            if k in want and tuple(v.shape) != tuple(want[k].shape)
        ]
        missing = sorted(set(want) - set(sub))
        unexpected = sorted(set(sub) - set(want))
        if bad or missing or unexpected:
            raise DetectorError(
                f"HHEM weights {wpath!r} do not fit a T5 token classifier built from "
                f"{foundation!r}: shapes {bad[:3]}, missing {missing[:3]}, unexpected "
                f"{unexpected[:3]}"
            )
        with torch.no_grad():
            model.load_state_dict(sub, strict=True)
        self.model = place(model, self.device)
        limit = self.options["max_length"]
        self.max_length = limit or UNLIMITED
        if limit:
            self.stats.max_input_tokens["classifier"] = limit
        self.stats.notes.append(
            f"HHEM prompt from {'the checkpoint config' if cfg.get('prompt') else 'the code'}; "
            f"tokenizer and T5 config from {foundation}; score = softmax(logits at token 0)"
            f"[{CONSISTENT_INDEX}] = P(consistent) (labels 0 hallucinated, 1 consistent)"
        )
        self.stats.notes.append(
            "no chunking; no input limit (as the authors)"
            if not limit
            else f"premise shortened to fit {limit} tokens (the authors do not truncate)"
        )

    # inputs ---------------------------------------------------------------------------------

    def _rows(
        self, pairs: Sequence[tuple[str, str]]
    ) -> tuple[list[dict[str, list[int]]], list[bool]]:
        """Token rows of the prompts; with a token limit, an over-long premise is cut (at a
        token boundary of the premise alone) until the prompt fits."""
        from evaluator.detectors.batching import encode

        texts = [hhem_prompt(p, h, self.template) for p, h in pairs]
        rows, flags = encode(self.tokenizer, texts, None, self.max_length)
        if not any(flags):
            return rows, flags
        from evaluator.detectors.base import quiet_transformers

        for i, cut in enumerate(flags):
            if not cut:
                continue
            premise, hyp = pairs[i]
            with quiet_transformers():
                full = self.tokenizer(premise, add_special_tokens=False)["input_ids"]
            keep = len(full)
            ids: list[int] = []
            for _ in range(4):
                with quiet_transformers():
                    ids = self.tokenizer(hhem_prompt(premise, hyp, self.template))["input_ids"]
                over = len(ids) - self.max_length
                if over <= 0 or keep <= 0:
                    break
                keep = max(keep - over, 0)
                with quiet_transformers():
                    premise = self.tokenizer.decode(full[:keep], skip_special_tokens=True)
            ids = ids[: self.max_length]  # a hypothesis alone over the limit: cut at the end
            rows[i] = {"input_ids": ids, "attention_mask": [1] * len(ids)}
        return rows, flags

    def _score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        from evaluator.detectors.batching import Progress, run_batches, unique

        pairs = list(zip(documents, summaries, strict=True))
        uniq, where = unique(pairs)
        self.stats.model_inputs += len(uniq)
        rows, flags = self._rows(uniq)

        def forward(batch: dict[str, Tensor]) -> Tensor:
            logits = self.model(**batch).logits[:, 0, :]
            return logits.float().softmax(dim=-1)[:, CONSISTENT_INDEX]

        bar = Progress(len(rows), "hhem pairs", self.progress, unit="pair")
        # long prompts go in smaller batches (attention memory grows with the square)
        budget = self.batch_size * 512
        probs = run_batches(
            rows, forward, self.tokenizer, self.device, self.batch_size, bar, max_tokens=budget
        )
        bar.close()
        log = TruncationLog(len(pairs))
        log.mark(list(range(len(pairs))), [flags[w] for w in where])
        log.add_to(self.stats)
        scores = [float(probs[w]) for w in where]
        note = "HHEM reads the whole document and the summary as one input: one verdict"
        self.set_evidence(
            [
                evidence("claim", [evidence_item(s.strip(), v)], "single", note=note)
                for s, v in zip(summaries, scores, strict=True)
            ]
        )
        return scores
