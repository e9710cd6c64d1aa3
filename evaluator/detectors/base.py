"""What every model-based detector shares: typed options, lazy loading, run statistics.

A detector is constructed cheaply (options are parsed and checked, nothing is loaded, nothing is
printed or downloaded) and loads its model(s) on the first `score` call. Statistics about the
inputs it saw (how many were truncated, how many pairs it scored, at what speed) are kept in
`stats` so that a run can record them.
"""

from __future__ import annotations

import abc
import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from evaluator.core.errors import FactBoardError


class DetectorError(FactBoardError):
    """A detector that cannot run: bad option, unloadable checkpoint, unusable input."""


# --------------------------------------------------------------------------------------------
# options


def _parse_bool(v: str) -> bool:
    s = v.strip().lower()
    if s in ("1", "true", "yes", "on"):
        return True
    if s in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{v!r} is not a boolean (true/false)")


@dataclass(frozen=True)
class Opt:
    """One detector option: its type, default and help. `choices` restricts string values."""

    type: type
    default: Any
    help: str
    choices: tuple[str, ...] | None = None
    minimum: float | None = None

    def parse(self, detector: str, key: str, value: Any) -> Any:
        where = f"option {key}={value!r} of detector {detector}"
        if value is None:
            return None
        try:
            if self.type is bool:
                v: Any = value if isinstance(value, bool) else _parse_bool(str(value))
            elif self.type is int:
                if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                    raise ValueError("not an integer")
                v = int(value)
            elif self.type is float:
                v = float(value)
            else:
                v = str(value)
        except (TypeError, ValueError) as e:
            raise DetectorError(f"{where}: {e}") from None
        if self.choices is not None and v not in self.choices:
            raise DetectorError(f"{where}: must be one of {', '.join(self.choices)}")
        if self.minimum is not None and v < self.minimum:
            raise DetectorError(f"{where}: must be at least {self.minimum:g}")
        return v


def parse_options(
    detector: str, spec: Mapping[str, Opt], given: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Typed options from `given` (strings from the command line, or Python values), with every
    unknown key refused by name and the known ones listed."""
    given = dict(given or {})
    unknown = sorted(set(given) - set(spec))
    if unknown:
        raise DetectorError(
            f"unknown option {unknown[0]!r} for detector {detector}; known: "
            f"{', '.join(sorted(spec)) or '(none)'}"
        )
    out = {}
    for key, opt in spec.items():
        out[key] = opt.parse(detector, key, given[key]) if key in given else opt.default
    return out


# --------------------------------------------------------------------------------------------
# statistics


@dataclass
class Stats:
    """What a detector saw: recorded in the run's config so that truncation is never silent."""

    samples: int = 0
    model_inputs: int = 0  # sequences (or pairs) fed to a model
    inputs_truncated: int = 0
    samples_truncated: int = 0
    max_input_tokens: dict[str, int] = field(default_factory=dict)  # model role -> limit
    undefined: int = 0  # samples the method gives no score for (NaN), e.g. QAGS without answers
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        rate = self.model_inputs / self.seconds if self.seconds > 0 else None
        return {
            "samples": self.samples,
            "model_inputs": self.model_inputs,
            "inputs_truncated": self.inputs_truncated,
            "samples_truncated": self.samples_truncated,
            "max_input_tokens": dict(self.max_input_tokens),
            "undefined_scores": self.undefined,
            "seconds": round(self.seconds, 3),
            "inputs_per_second": round(rate, 2) if rate is not None else None,
            "notes": list(self.notes),
        }


class TruncationLog:
    """Marks which samples had at least one model input cut at the model's limit."""

    def __init__(self, n_samples: int):
        self.flags = [False] * n_samples
        self.inputs = 0

    def mark(self, owners: Sequence[int], truncated: Sequence[bool]) -> None:
        for owner, t in zip(owners, truncated, strict=True):
            if t:
                self.inputs += 1
                self.flags[owner] = True

    def add_to(self, stats: Stats) -> None:
        stats.inputs_truncated += self.inputs
        stats.samples_truncated += sum(self.flags)


# --------------------------------------------------------------------------------------------
# the base class


class ModelDetector(abc.ABC):
    """Base of the detectors that load models. Subclasses set the class attributes and implement
    `_load()` and `_score(documents, summaries)`."""

    name: ClassVar[str] = ""
    display_name: ClassVar[str] = ""
    kind: ClassVar[str] = "non-llm"
    default_checkpoint: ClassVar[str | None] = None
    paper: ClassVar[str] = ""  # citation URL
    description: ClassVar[str] = ""
    OPTIONS: ClassVar[dict[str, Opt]] = {}
    default_batch_size: ClassVar[int] = 16

    def __init__(
        self,
        checkpoint: str | None = None,
        *,
        device: str | None = None,
        batch_size: int | None = None,
        progress: bool = False,
        options: Mapping[str, Any] | None = None,
        **more_options: Any,
    ) -> None:
        self.checkpoint = checkpoint or self.default_checkpoint
        if self.checkpoint is None:
            raise DetectorError(f"detector {self.name} needs a checkpoint (hub id or local path)")
        if batch_size is not None and batch_size < 1:
            raise DetectorError(f"batch size must be at least 1, got {batch_size}")
        self.requested_device = device
        self.batch_size = batch_size or self.default_batch_size
        self.progress = progress
        merged = {**dict(options or {}), **more_options}
        self.options = parse_options(self.name, self.OPTIONS, merged)
        self.stats = Stats()
        self._loaded = False
        self.device: Any = None  # evaluator.detectors.device.DeviceChoice once loaded
        self._check_options()

    # hooks ----------------------------------------------------------------------------------

    def _check_options(self) -> None:  # noqa: B027 (optional hook: no checks by default)
        """Cross-option checks (raise DetectorError). Runs in the constructor: loads nothing."""

    @abc.abstractmethod
    def _load(self) -> None:
        """Load the models (called once, on the first score)."""

    @abc.abstractmethod
    def _score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        """One score per pair, higher = more consistent."""

    # public ---------------------------------------------------------------------------------

    def ensure_loaded(self) -> None:
        if not self._loaded:
            from evaluator.detectors.device import resolve_device, seed_everything

            seed_everything(0)
            self.device = resolve_device(self.requested_device, self.options.get("precision"))
            self._load()
            self._loaded = True

    def score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        """One score per (document, summary) pair; higher = more consistent. NaN where the
        method defines no score (counted in stats.undefined)."""
        check_pairs(documents, summaries)
        self.ensure_loaded()
        t0 = time.perf_counter()
        out = self._score(list(documents), list(summaries))
        self.stats.seconds += time.perf_counter() - t0
        self.stats.samples += len(out)
        self.stats.undefined += sum(1 for v in out if v != v)
        return out

    def reset_stats(self) -> None:
        """Zero the counters (what was learnt at load time, limits and notes, is kept)."""
        self.stats = Stats(
            max_input_tokens=dict(self.stats.max_input_tokens), notes=list(self.stats.notes)
        )

    def describe(self) -> dict[str, Any]:
        """What the run records: checkpoint, device, options, and the statistics."""
        dev = self.device
        return {
            "checkpoint": self.checkpoint,
            "device": dev.name if dev is not None else self.requested_device,
            "dtype": dev.dtype_name if dev is not None else None,
            "batch_size": self.batch_size,
            "options": dict(self.options),
            "stats": self.stats.as_dict(),
        }


def check_pairs(documents: Sequence[str], summaries: Sequence[str]) -> None:
    if len(documents) != len(summaries):
        raise DetectorError(f"{len(documents)} documents for {len(summaries)} summaries")
    for i, (d, s) in enumerate(zip(documents, summaries, strict=True)):
        if not isinstance(d, str):
            raise DetectorError(f"document #{i} is {type(d).__name__}, not text")
        if not isinstance(s, str):
            raise DetectorError(f"summary #{i} is {type(s).__name__}, not text")


# --------------------------------------------------------------------------------------------
# loading checkpoints


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """Silence transformers' own progress bars and length warnings while we load and tokenize
    (our progress bar is the one that counts); the previous state is restored."""
    from transformers.utils import logging as hf_logging

    bar = hf_logging.is_progress_bar_enabled()
    level = hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bar:
            hf_logging.enable_progress_bar()


def load_pretrained(what: str, checkpoint: str, loader: Callable[..., Any], **kwargs: Any) -> Any:
    """`loader(checkpoint, **kwargs)` (a from_pretrained), with a failure that names the detector
    role and the checkpoint instead of a long traceback."""
    try:
        with quiet_transformers():
            return loader(checkpoint, **kwargs)
    except (ConnectionError, TimeoutError):
        raise  # the network: worth retrying (the worker treats these as transient)
    except (OSError, ValueError, KeyError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DetectorError(
            f"cannot load the {what} from {checkpoint!r}: {first} (a hub id needs the network "
            "or a local copy in the Hugging Face cache; a local path must hold the model files)"
        ) from None
