"""Building a detector by name: what a run does in its own process and what each Ray actor
does in its constructor. Kept apart from evaluator.detectors.runner (which loads benchmarks,
scores and writes runs: pandas, scipy and the scoring engine) so that an actor imports only the
registry and the detector's own module.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Mapping
from typing import Any

from evaluator.detectors.base import DetectorError
from evaluator.detectors.registry import get_detector


def build_detector(
    name: str,
    *,
    checkpoint: str | None = None,
    device: str | None = None,
    batch_size: int | None = None,
    options: Mapping[str, object] | None = None,
    progress: bool = False,
) -> Any:
    """Construct detector `name` with the arguments it takes; an argument it does not take
    (a checkpoint for a weight-free baseline) is refused by name, not ignored."""
    cls = get_detector(name)
    params = inspect.signature(cls).parameters
    takes_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    opts = dict(options) if options else None
    given: dict[str, object] = {
        "checkpoint": checkpoint,
        "device": device,
        "batch_size": batch_size,
        "options": opts,
        "progress": progress,
    }
    kwargs: dict[str, object] = {}
    for key, value in given.items():
        if key in params:
            kwargs[key] = value
        elif key == "options" and opts and takes_kwargs:
            kwargs.update(opts)
        elif key == "device" and str(value or "cpu").lower() in ("cpu", "auto"):
            continue  # a weight-free detector runs on the CPU anyway
        elif value not in (None, False) and key != "progress":
            what = f"options {', '.join(sorted(opts or {}))}" if key == "options" else key
            raise DetectorError(f"detector {name} takes no {what} (it needs no model)")
    return cls(**kwargs)


def library_versions() -> dict[str, str]:
    """Versions of the model libraries this process has loaded (what a run records)."""
    out = {}
    for mod in ("torch", "transformers", "sentence_transformers", "bert_score", "rouge_score"):
        m = sys.modules.get(mod)
        if m is not None and hasattr(m, "__version__"):
            out[mod] = str(m.__version__)
    return out
