"""What every model-based detector shares: typed options, lazy loading, run statistics.

A detector is constructed cheaply (options are parsed and checked, nothing is loaded, nothing is
printed or downloaded) and loads its model(s) on the first `score` call. Statistics about the
inputs it saw (how many were truncated, how many pairs it scored, at what speed) are kept in
`stats` so that a run can record them.

Fidelity: every option whose value changes how a score compares with the authors' own code
declares the authors' value (`Opt(..., faithful=VALUE)`); the defaults are the authors' setup, and
a run whose options differ records them as deviations (`deviations()`, in `describe()`), which
the board shows in the model's name. What still differs from the authors' code in the faithful
setup is listed, per detector, in `KNOWN_DIFFERENCES`.

Sentences: a detector that splits text into sentences names the authors' splitting style in
`sentence_style` (a style of `evaluator.detectors.text.split_sentences`: "nltk" or
"nltk-newlines"), puts `splitter_opt(style)` in its OPTIONS as "splitter" (the authors' style,
or "pysbd", FactBoard's own) and splits with `self.sentences(text)`. The run records the splitter
that ran (`fidelity()["splitter"]`, a note in the stats), and a run that asked for the authors'
punkt on a machine without its data is the variant `splitter=pysbd`.

Evidence: besides one score per pair, a detector may say why, per pair (the sentence it flags, the
source sentence that supports it best, a QAGS question and its two answers). `_score` hands it to
`set_evidence` (one dict or None per pair, built with `evidence()` and `evidence_item()`);
`score_with_evidence` returns both, and the run stores them beside the scores.
"""

from __future__ import annotations

import abc
import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, NotRequired, TypedDict

from evaluator.core.errors import DetectorError

# a pair's evidence is a typed record of evaluator.core.evidence; the detectors build it with
# these builders, imported from here
from evaluator.core.evidence import (  # noqa: F401
    EVIDENCE_UNITS,
    Evidence,
    EvidenceItem,
    evidence,
    evidence_item,
)
from evaluator.detectors import text as _text

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
    faithful: Any = None  # the authors' value (None: the option does not change fidelity)

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
    detector: str, spec: Mapping[str, Opt], given: Mapping[str, object] | None
) -> dict[str, Any]:
    """Typed options from `given` (strings from the command line, or Python values), with every
    unknown key refused by name and the known ones listed. Each value has its own Opt's type
    (bool, int, float or str) or is None: the detector that declared the key reads it as such,
    so the mapping's value type is the one thing no annotation here can say (Any)."""
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


def splitter_opt(authors_style: str) -> Opt:
    """The "splitter" option of a detector whose authors split sentences in `authors_style`
    (a style of `split_sentences`): that style (the default, faithful) or "pysbd"."""
    if authors_style not in _text.SENTENCE_STYLES or authors_style == "pysbd":
        raise ValueError(
            f"the authors' sentence style must be one of "
            f"{', '.join(s for s in _text.SENTENCE_STYLES if s != 'pysbd')}, not {authors_style!r}"
        )
    return Opt(
        str,
        authors_style,
        f"sentence splitter: {authors_style} (nltk's punkt as the authors; pysbd where its data "
        "is missing) or pysbd (FactBoard's, every line break a boundary)",
        choices=(authors_style, "pysbd"),
        faithful=authors_style,
    )


# --------------------------------------------------------------------------------------------
# statistics


class StatsRecord(TypedDict):
    """A run's statistics of a detector as run.json records them (config.extra.stats)."""

    samples: int
    model_inputs: int
    inputs_truncated: int
    samples_truncated: int
    max_input_tokens: dict[str, int]
    undefined_scores: int
    seconds: float
    inputs_per_second: float | None
    notes: list[str]


class Fidelity(TypedDict):
    """How a run's setup compares with the authors' (config.extra.fidelity)."""

    faithful: bool
    deviations: list[str]
    known_differences: list[str]
    splitter: NotRequired[str]  # the sentence splitter that ran, for a detector that splits


class Description(TypedDict, total=False):
    """What a detector says of itself for the run (`describe()`): checkpoint, device, dtype,
    batch size, options, fidelity, statistics; SummaC-Conv adds its weights, a wrapped detector
    what it returned (evaluator.detectors.custom) and whatever its own describe() gave."""

    checkpoint: str | None
    device: str | None
    dtype: str | None
    batch_size: int
    options: dict[str, object]
    fidelity: Fidelity
    stats: StatsRecord
    summac_conv: Mapping[str, object] | None
    returns: str


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

    def as_dict(self) -> StatsRecord:
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


def board_name(base: str, checkpoint: Any, default: Any, deviations: Sequence[str]) -> str:
    """A run's name on the board: `base` alone with the default checkpoint, else followed by
    the checkpoint (hub id, or folder name of a local path), e.g. SummaC-ZS (nli); a setup off
    the authors' is `[variant: ...]`. At most 120 characters."""
    if checkpoint and checkpoint != default:
        p = Path(str(checkpoint))
        base = f"{base} ({p.name if p.exists() else checkpoint})"
    if deviations:  # not the authors' setup: the board says so in the name
        base = f"{base} [variant: {', '.join(deviations)}]"
    return base[:120]


class Detector(abc.ABC):
    """The contract between a detector and the runner (evaluator.detectors.runner).

    A detector gives `score(documents, summaries) -> list[float]`, higher = more consistent,
    deterministic for the same inputs. The rest has defaults that say "nothing of that kind",
    and a detector overrides what it has: its name on the board (`board_name`), how it departs
    from its authors' setup (`deviations`), what the run records of it (`describe`, with the
    entries named in RECORDED), training on the dev split (`needs_fit`, `fit`, what it learnt
    in `trained_state`, recorded under TRAINED_ON), the files a Ray actor needs to build the
    same detector (`actor_files`), the sentence splitter that ran where the pairs were scored
    (`record_splitter`), and its own progress bar (`quiet`)."""

    name: str = ""
    display_name: str = ""
    kind: str = "non-llm"
    paper: str = ""  # citation URL
    description: str | None = ""
    # the describe() entries a run records in config.extra (beside device, dtype and options)
    RECORDED: ClassVar[tuple[str, ...]] = ("fidelity",)
    # config.extra's key for what a detector that trains on dev was trained on
    TRAINED_ON: ClassVar[str] = "trained_on"

    @abc.abstractmethod
    def score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        """The contract every detector fulfils: one score per (document, summary) pair (a
        subclass that leaves it out cannot be instantiated)."""

    @property
    def needs_fit(self) -> bool:
        """True when the detector must be trained (`fit`) on labelled dev pairs first."""
        return False

    def fit(self, documents: Sequence[str], summaries: Sequence[str], labels: Sequence[int]) -> Any:
        raise DetectorError(f"detector {self.name} does not train")

    def trained_state(self) -> Mapping[str, object] | None:
        """What `fit` learnt (or the weights given in its place), JSON-ready; None: nothing."""
        return None

    def actor_files(self) -> dict[str, str]:
        """Option name -> the text of a file the detector read here, for a Ray actor on a node
        that does not share this machine's disk."""
        return {}

    def deviations(self) -> list[str]:
        """The options set away from the authors' value, as `key=value` (empty: faithful)."""
        return []

    def describe(self) -> Description:
        """What the run records: checkpoint, device, dtype, options, fidelity, statistics."""
        return {}

    def record_splitter(self, used: str | None) -> None:
        """The sentence splitter the detector that scored reported (see ModelDetector)."""
        return None

    def quiet(self) -> None:
        """Turn the detector's own progress bar off (the run's bar counts pairs)."""
        return None

    def board_name(self) -> str:
        return board_name(self.display_name or self.name, None, None, self.deviations())

    def model_card(self) -> tuple[str, str | None, str | None]:
        """(model kind, paper URL, description) for the run's model."""
        cls = type(self)
        return cls.kind, cls.paper or None, self.description or None


class ModelDetector(Detector, abc.ABC):
    """Base of the detectors that load models. Subclasses set the class attributes and implement
    `_load()` and `_score(documents, summaries)`."""

    default_checkpoint: ClassVar[str | None] = None
    OPTIONS: ClassVar[dict[str, Opt]] = {}
    default_batch_size: ClassVar[int] = 16
    # the dtype the authors run on a GPU ("auto" precision picks it; the CPU is always float32)
    gpu_precision: ClassVar[str] = "float32"
    # what still differs from the authors' code in the faithful setup (README's detector table)
    KNOWN_DIFFERENCES: ClassVar[tuple[str, ...]] = ()
    # the authors' sentence-splitting style (see the module's docstring); None: no sentences
    sentence_style: ClassVar[str | None] = None

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
        self._evidence: list[Evidence | None] | None = None
        self._loaded = False
        self.device: Any = None  # evaluator.detectors.device.DeviceChoice once loaded
        self._check_options()

    # hooks ----------------------------------------------------------------------------------

    def _check_options(self) -> None:
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
            self.device = resolve_device(
                self.requested_device, self.options.get("precision"), gpu=self.gpu_precision
            )
            used = self.splitter_used()
            note = f"sentence splitter: {used}"
            if used is not None and note not in self.stats.notes:
                self.stats.notes.append(note)
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

    def score_with_evidence(
        self, documents: Sequence[str], summaries: Sequence[str]
    ) -> tuple[list[float], list[Evidence | None]]:
        """The scores, and per pair the evidence `_score` gave (None where it gave none)."""
        self._evidence = None
        scores = self.score(documents, summaries)
        ev: list[Evidence | None] = (
            self._evidence if self._evidence is not None else [None] * len(scores)
        )
        self._evidence = None
        return scores, ev

    def set_evidence(self, per_pair: Sequence[Evidence | None]) -> None:
        """Called by `_score`: one evidence record (see `evidence()`) or None per pair."""
        self._evidence = list(per_pair)

    def deviations(self) -> list[str]:
        """The options set away from the authors' value, as `key=value` (empty: faithful). The
        authors' splitter asked for on a machine without punkt data is `splitter=pysbd`."""
        out = []
        for key, opt in self.OPTIONS.items():
            value = self.options.get(key)
            if key == "precision":
                if value not in (None, "auto", "float32", self.gpu_precision):
                    out.append(f"precision={value}")
                continue
            if key == "splitter" and self.splitter_used() == _text.PUNKT_MISSING:
                out.append("splitter=pysbd")  # the authors' punkt asked for, its data missing
                continue
            if opt.faithful is not None and value != opt.faithful:
                out.append(f"{key}={value}")
        return out

    def fidelity(self) -> Fidelity:
        devs = self.deviations()
        out: Fidelity = {
            "faithful": not devs,
            "deviations": devs,
            "known_differences": list(self.KNOWN_DIFFERENCES),
        }
        used = self.splitter_used()
        if used is not None:
            out["splitter"] = used
        return out

    # sentences ------------------------------------------------------------------------------

    def splitter_style(self, authors_style: str | None = None) -> str | None:
        """The style `sentences` splits in: the authors' (`authors_style`, default the class's
        `sentence_style`) unless option splitter=pysbd; None for a detector without sentences."""
        authors = authors_style or self.sentence_style
        if authors is None:
            return None
        return "pysbd" if self.options.get("splitter") == "pysbd" else authors

    def sentences(self, text: str, authors_style: str | None = None) -> tuple[str, ...]:
        """The sentences of `text` in the chosen style (see `splitter_style`; `authors_style`
        names the authors' style for this text where a detector uses two, e.g. MiniCheck's
        "nltk" for summary sentences beside "nltk-newlines" for documents)."""
        style = self.splitter_style(authors_style)
        if style is None:
            raise DetectorError(f"detector {self.name} names no sentence style")
        return _text.split_sentences(text, style)

    def splitter_used(self) -> str | None:
        """The splitter that runs here: "nltk-punkt", "pysbd (punkt data not found)" or "pysbd";
        None for a detector that splits no sentences. After `record_splitter`, the splitter that
        ran where the pairs were scored."""
        style = self.splitter_style()
        if style is None:
            return None
        ran = getattr(self, "_splitter_ran", None)
        return str(ran) if ran is not None else _text.splitter_used(style)

    def record_splitter(self, used: str | None) -> None:
        """The splitter the detector that scored reported (a Ray actor, maybe on a machine with
        or without punkt data): this detector's description and board name then say what ran
        there, and this process need not load nltk to tell."""
        self._splitter_ran = used

    def quiet(self) -> None:
        self.progress = False

    def board_name(self) -> str:
        return board_name(
            self.display_name or self.name,
            self.checkpoint,
            self.default_checkpoint,
            self.deviations(),
        )

    def reset_stats(self) -> None:
        """Zero the counters (what was learnt at load time, limits and notes, is kept)."""
        self.stats = Stats(
            max_input_tokens=dict(self.stats.max_input_tokens), notes=list(self.stats.notes)
        )

    def describe(self) -> Description:
        """What the run records: checkpoint, device, options, and the statistics."""
        dev = self.device
        return {
            "checkpoint": self.checkpoint,
            "device": dev.name if dev is not None else self.requested_device,
            "dtype": dev.dtype_name if dev is not None else None,
            "batch_size": self.batch_size,
            "options": dict(self.options),
            "fidelity": self.fidelity(),
            "stats": self.stats.as_dict(),
        }


# --------------------------------------------------------------------------------------------
# evidence


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
