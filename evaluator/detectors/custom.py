"""A detector that is not FactBoard's: a plain function `score(documents, summaries)`, an object
with that method, or a class with it (from evaluator.evaluate, or an installed package's entry
point, evaluator.detectors.registry). The function may return scores (higher = more consistent)
or labels (1/True = consistent, 0/False = inconsistent); the adapter tells which from the values
and the run scores labels as labels. Light: no pandas, no torch."""

from __future__ import annotations

import inspect
import numbers
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from evaluator.core.errors import DetectorError
from evaluator.detectors.base import (
    Description,
    Detector,
    Opt,
    Stats,
    board_name,
    check_pairs,
)

RETURNS = ("scores", "labels")


def _score_of(obj: Any) -> Callable[..., Any]:
    fn = getattr(obj, "score", None)
    if callable(fn):
        return fn  # type: ignore[no-any-return]
    if callable(obj) and not isinstance(obj, type):
        return obj  # type: ignore[no-any-return]
    raise DetectorError(
        f"{obj!r} is not a detector: give a function score(documents, summaries), or an object "
        "or class with that method"
    )


def name_of(obj: Any) -> str:
    """A readable name for a detector given as a function or an object."""
    for attr in ("name", "__name__"):
        v = getattr(obj, attr, None)
        if isinstance(v, str) and v and v != "<lambda>":
            return v
    return type(obj).__name__ if not callable(obj) or hasattr(obj, "score") else "detector"


class CallableDetector(Detector):
    """Wraps `score(documents, summaries)` into FactBoard's detector contract: the pairs are
    checked, the reply's length and values too, and `describe()` says what it returned."""

    kind = "non-llm"

    def __init__(self, detector: Any, name: str | None = None, labels: bool | None = None):
        self.fn = _score_of(detector)
        self.target = detector
        self.name = name or name_of(detector)
        self.display_name = str(getattr(detector, "display_name", "") or self.name)
        self.description = getattr(detector, "description", None)
        self.paper = getattr(detector, "paper", "") or getattr(detector, "url", "")
        self.checkpoint = getattr(detector, "checkpoint", None)
        self.kind = str(getattr(detector, "kind", None) or "non-llm")
        self.labels = labels  # None: tell from the values
        self.returned: set[str] = set()  # "labels" and/or "scores", from the values seen
        self.stats = Stats()

    def reset_stats(self) -> None:
        self.stats = Stats()

    def score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        check_pairs(documents, summaries)
        t0 = time.perf_counter()
        try:
            out = list(self.fn(list(documents), list(summaries)))
        except TypeError as e:
            if "iter" in str(e):
                raise DetectorError(f"detector {self.name} returned no list ({e})") from None
            raise
        self.stats.seconds += time.perf_counter() - t0
        if len(out) != len(documents):
            raise DetectorError(
                f"detector {self.name} returned {len(out)} values for {len(documents)} pairs"
            )
        values = []
        for i, v in enumerate(out):
            values.append(self._value(i, v))
        self.stats.samples += len(values)
        self.stats.model_inputs += len(values)
        self.stats.undefined += sum(1 for v in values if v != v)
        return values

    def _value(self, i: int, v: Any) -> float:
        if v is None:
            return float("nan")
        is_int = isinstance(v, (bool, numbers.Integral)) or type(v).__name__ == "bool_"
        if is_int and int(v) in (0, 1):
            self.returned.add("labels")
            return float(int(v))
        if not isinstance(v, numbers.Real):
            try:
                v = float(v)  # numpy / torch scalars
            except (TypeError, ValueError):
                raise DetectorError(
                    f"detector {self.name} returned {type(v).__name__} for pair #{i}, not a number"
                ) from None
        self.returned.add("scores")
        return float(v)

    @property
    def returns(self) -> str:
        """ "labels" when every value was 0/1 or a bool (or labels=True was given), else
        "scores"."""
        if self.labels is not None:
            return "labels" if self.labels else "scores"
        return "labels" if self.returned == {"labels"} else "scores"

    def board_name(self) -> str:
        return board_name(self.display_name or self.name, self.checkpoint, None, [])

    def describe(self) -> Description:
        """What the run records; a wrapped object's own `describe()` first where it has one
        (its entries are the package's own, recorded as given)."""
        own = getattr(self.target, "describe", None)
        out = cast(Description, dict(own())) if callable(own) else Description()
        out.setdefault("checkpoint", self.checkpoint)
        out.setdefault("options", {})
        out["returns"] = self.returns
        out["stats"] = self.stats.as_dict()
        return out


def detector_factory(obj: Any, name: str) -> Callable[..., Any]:
    """What the registry holds for an entry point: a builder taking FactBoard's detector
    arguments (evaluator.detectors.build). A class is constructed with those of its parameters
    it has and the run's options as keyword arguments (typed from the parameter's default:
    `--option cap=0.5` gives a float where the default is one); a function, or an object with
    `score`, is wrapped (CallableDetector)."""
    if not inspect.isclass(obj):
        _score_of(obj)  # refused now if it cannot score

        def wrap() -> CallableDetector:
            return CallableDetector(obj, name)

        return wrap
    if not callable(getattr(obj, "score", None)):
        raise DetectorError(f"entry point {name}: class {obj.__name__} has no score method")
    params = inspect.signature(obj).parameters
    takes_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())

    def build(
        checkpoint: str | None = None,
        *,
        device: str | None = None,
        batch_size: int | None = None,
        options: Mapping[str, object] | None = None,
        progress: bool = False,
    ) -> Any:
        # the package's own constructor's keyword arguments: whatever its parameters take
        kwargs: dict[str, Any] = {}
        given: dict[str, object] = {
            "checkpoint": checkpoint,
            "device": device,
            "batch_size": batch_size,
            "progress": progress,
        }
        for key, value in given.items():
            if key in params:
                kwargs[key] = value
            elif key == "device" and str(value or "cpu").lower() in ("cpu", "auto"):
                continue
            elif value not in (None, False):
                raise DetectorError(f"detector {name} takes no {key}")
        for key, value in (options or {}).items():
            p = params.get(key)
            if p is None and not takes_kwargs:
                known = [k for k in params if k not in given]
                raise DetectorError(
                    f"unknown option {key!r} for detector {name}; known: "
                    f"{', '.join(known) or '(none)'}"
                )
            default = p.default if p is not None else inspect.Parameter.empty
            if isinstance(default, (bool, int, float, str)) and isinstance(value, str):
                value = Opt(type(default), default, "").parse(name, key, value)
            kwargs[key] = value
        return CallableDetector(obj(**kwargs), name)

    return build
