"""The detector contract's fidelity and evidence parts (evaluator.detectors.base)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import pytest

from evaluator.detectors.base import ModelDetector, Opt, evidence, evidence_item
from evaluator.detectors.runner import default_model_name


class _Toy(ModelDetector):
    name = "toy"
    display_name = "Toy"
    default_checkpoint = "none"
    KNOWN_DIFFERENCES = ("no model at all",)
    OPTIONS: ClassVar[dict[str, Opt]] = {
        "granularity": Opt(str, "claim", "how", choices=("claim", "sentence"), faithful="claim"),
        "k": Opt(int, 3, "neutral option", minimum=1),
        "precision": Opt(str, "auto", "dtype", choices=("auto", "float32", "float16")),
    }

    def _load(self) -> None:
        pass

    def _score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        scores = [float(len(s)) for s in summaries]
        self.set_evidence(
            [
                evidence("sentence", [evidence_item(s, np.float32(v), d[:5], n=np.int64(2))], "min")
                if v > 1
                else None
                for d, s, v in zip(documents, summaries, scores, strict=True)
            ]
        )
        return scores


def test_faithful_defaults_and_labelled_variants() -> None:
    det = _Toy(device="cpu")
    assert det.deviations() == []
    assert det.fidelity() == {
        "faithful": True,
        "deviations": [],
        "known_differences": ["no model at all"],
    }
    assert default_model_name(det) == "Toy"
    variant = _Toy(device="cpu", granularity="sentence", k=7, precision="float16")
    assert variant.deviations() == ["granularity=sentence", "precision=float16"]
    assert variant.describe()["fidelity"]["faithful"] is False
    assert default_model_name(variant) == "Toy [variant: granularity=sentence, precision=float16]"


def test_evidence_is_returned_per_pair_as_json_values() -> None:
    det = _Toy(device="cpu")
    scores, ev = det.score_with_evidence(["Source one.", "Two."], ["ab", "a"])
    assert scores == [2.0, 1.0]
    assert ev[1] is None
    assert ev[0] == {
        "unit": "sentence",
        "aggregate": "min",
        "items": [{"text": "ab", "score": 2.0, "support": "Sourc", "extra": {"n": 2}}],
    }
    assert type(ev[0]["items"][0]["score"]) is float
    # a later plain score() does not leak the previous call's evidence
    assert det.score_with_evidence(["x"], ["y"])[1] == [None]


def test_evidence_refuses_unknown_units_and_drops_non_finite() -> None:
    with pytest.raises(ValueError, match="unit"):
        evidence("paragraph", [], "min")
    assert evidence_item("s", math.nan)["score"] is None
    assert evidence_item("s", float("inf"), extra_list=[1.5, math.nan])["extra"] == {
        "extra_list": [1.5, None]
    }
