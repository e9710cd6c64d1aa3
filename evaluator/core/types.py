"""The data contracts (docs/ARCHITECTURE.md): samples, predictions, grades, labels, runs, results.

Samples and predictions travel as Arrow/pandas tables (thousands of rows); the dataclasses here
describe one row and the Arrow schemas fix the on-disk layout. Run metadata is a pydantic model so
that a run.json read back from disk is validated field by field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

import pyarrow as pa
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
    with_config,
)

# pydantic validates a TypedDict field only in typing_extensions' form before Python 3.12
from typing_extensions import TypedDict

from evaluator.core.choices import AppliedPolicy
from evaluator.core.sanitize import control_char
from evaluator.core.vocabulary import DOMAIN_SLACK, ModelKind, Origin, metric_domain

Split = Literal["dev", "test"]
Unit = Literal["summary", "sentence", "claim"]

CONSISTENT = 1
INCONSISTENT = 0


class SampleRow(TypedDict):
    """One row of samples.parquet as Arrow takes it (SAMPLE_SCHEMA)."""

    benchmark: str
    sample_id: str
    split: str
    unit: str
    summary_id: str | None
    domain: str | None
    doc_id: str | None
    document: str | None
    summary: str
    seed_summary: str | None
    label: int | None
    human_score: float | None
    error_types: list[str]
    reference_explanation: str | None
    attributes: str  # JSON text of the attributes


@dataclass(frozen=True)
class Sample:
    """One canonical sample (a row of samples.parquet)."""

    benchmark: str
    sample_id: str
    split: str
    unit: str
    summary: str
    domain: str | None = None
    summary_id: str | None = None
    doc_id: str | None = None
    document: str | None = None
    seed_summary: str | None = None
    label: int | None = None
    human_score: float | None = None
    error_types: tuple[str, ...] = ()
    reference_explanation: str | None = None
    attributes: dict[str, str] = field(default_factory=dict)

    def to_row(self) -> SampleRow:
        return {
            "benchmark": self.benchmark,
            "sample_id": self.sample_id,
            "split": self.split,
            "unit": self.unit,
            "summary_id": self.summary_id,
            "domain": self.domain,
            "doc_id": self.doc_id,
            "document": self.document,
            "summary": self.summary,
            "seed_summary": self.seed_summary,
            "label": self.label,
            "human_score": self.human_score,
            "error_types": list(self.error_types),
            "reference_explanation": self.reference_explanation,
            # JSON text, sorted keys: DuckDB reads it (json_extract_string); stable to hash
            "attributes": json.dumps(self.attributes, sort_keys=True, ensure_ascii=False),
        }


SAMPLE_SCHEMA = pa.schema(
    [
        ("benchmark", pa.string()),
        ("sample_id", pa.string()),
        ("split", pa.string()),
        ("unit", pa.string()),
        ("summary_id", pa.string()),
        ("domain", pa.string()),
        ("doc_id", pa.string()),
        ("document", pa.string()),
        ("summary", pa.string()),
        ("seed_summary", pa.string()),
        ("label", pa.int8()),
        ("human_score", pa.float64()),
        ("error_types", pa.list_(pa.string())),
        ("reference_explanation", pa.string()),
        ("attributes", pa.string()),
    ]
)
SAMPLE_COLUMNS: tuple[str, ...] = tuple(SAMPLE_SCHEMA.names)


@dataclass(frozen=True)
class Prediction:
    """One model output for one sample (a row of predictions.parquet)."""

    sample_id: str
    score: float | None = None
    label: int | None = None
    explanation: str | None = None
    raw_output: str | None = None


PREDICTION_SCHEMA = pa.schema(
    [
        ("sample_id", pa.string()),
        ("score", pa.float64()),
        ("label", pa.int8()),
        ("explanation", pa.string()),
        ("raw_output", pa.string()),
    ]
)
PREDICTION_COLUMNS: tuple[str, ...] = tuple(PREDICTION_SCHEMA.names)


# The final label of every prediction the scorer scored (labels.parquet of a run): the
# threshold applied, or the label used as given; for sentence predictions that roll up to
# summaries, one more row per summary (rolled = true). See evaluator/store/runs.py.
LABEL_SCHEMA = pa.schema(
    [
        ("sample_id", pa.string()),
        ("unit", pa.string()),
        ("final_label", pa.int8()),  # 1 consistent, 0 inconsistent, null: no usable label
        ("score", pa.float64()),  # the score it was made from (a summary: its lowest sentence)
        ("rolled", pa.bool_()),  # a summary label rolled up from its sentences
    ]
)
LABEL_COLUMNS: tuple[str, ...] = tuple(LABEL_SCHEMA.names)


@dataclass(frozen=True)
class Grade:
    """A judge's (or a human's) grade of one explanation: 1, 0.5, 0, or None when unparsable."""

    sample_id: str
    judge: str
    protocol: str
    grade: float | None
    rationale: str | None = None
    raw_output: str | None = None


GRADE_SCHEMA = pa.schema(
    [
        ("sample_id", pa.string()),
        ("judge", pa.string()),
        ("protocol", pa.string()),
        ("grade", pa.float64()),
        ("rationale", pa.string()),
        ("raw_output", pa.string()),
    ]
)
GRADE_COLUMNS: tuple[str, ...] = tuple(GRADE_SCHEMA.names)
GRADE_VALUES: tuple[float, ...] = (0.0, 0.5, 1.0)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# Limits on what a run.json may hold: the one rule for the CLI and the app
# (evaluator.store.runs.validate_record); submissions are held to tighter ones
# (evaluator.submissions.validation.check_metadata).
MAX_NAME_CHARS = 120
MAX_SHORT_TEXT = 200
MAX_URL_CHARS = 2000
MAX_TEXT_CHARS = 5000
# a benchmark version as FactBoard writes it (a content hash) or a plain label: shown on pages
VERSION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:+-]{0,63}$"


class ModelInfo(_Frozen):
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    kind: ModelKind
    org: str | None = Field(default=None, max_length=MAX_SHORT_TEXT)
    # "7B", "355M": as the author states it
    params: str | None = Field(default=None, max_length=MAX_SHORT_TEXT)
    url: str | None = Field(default=None, max_length=MAX_URL_CHARS)
    license: str | None = Field(default=None, max_length=MAX_SHORT_TEXT)
    description: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)

    @field_validator("name", "org", "params", "license", "url")
    @classmethod
    def _one_plain_line(cls, v: str | None, info: ValidationInfo) -> str | None:
        """A name, organisation, size, licence or URL is one line of visible text: no control
        character (ESC, BEL), no bidi override (U+202E), no zero-width or line-breaking one."""
        if v is not None:
            _no_hidden(v, f"model {info.field_name}")
        return v

    @field_validator("description")
    @classmethod
    def _visible_text(cls, v: str | None) -> str | None:
        if v is not None:
            _no_hidden(v, "model description", allowed="\n\t")
        return v


def _no_hidden(text: str, what: str, allowed: str = "") -> None:
    found = control_char(text, allowed)
    if found is not None:
        raise ValueError(
            f"{what} contains a control or invisible character (U+{ord(found[1]):04X}) at "
            f"position {found[0] + 1}"
        )


class ThresholdInfo(_Frozen):
    """How scores became labels: the policy applied (labels as given, a threshold tuned on dev,
    a fixed one, one per domain tuned on dev, or none: scores used as they are)."""

    policy: AppliedPolicy
    threshold: float | None = None
    per_domain: dict[str, float] | None = None
    tuned_on: str | None = None  # the split the threshold was chosen on
    tuned_value: float | None = None  # BAcc reached on that split


@with_config(ConfigDict(extra="allow"))  # a key a later version adds is kept, not dropped
class BootstrapSettings(TypedDict, total=False):
    """How a run's CIs were drawn (run.json's `bootstrap`; evaluator.core.scoring writes it)."""

    resamples: int
    seed: int
    level: float  # the CI's level, 0.95
    method: str  # "percentile"
    stratified_by: str | None  # "domain" where the overall number is a mean over domains


@with_config(ConfigDict(extra="allow"))  # an import's source metadata, fingerprints to come
class SubmissionInfo(TypedDict, total=False):
    """Where a submitted or imported run came from (run.json's `submission`; never the contact
    e-mail). A submission names its upload and fingerprints, and its recipe and reproduction
    (checked where they are read: evaluator.submissions.recipes and .verification); an import
    names its Every Eval Ever record and that record's source metadata."""

    # declared in the order the writers write them (a key not declared follows them, in the
    # order given), so that a run.json read and written again keeps its keys' order
    source: str  # an import's: "Every Eval Ever record"
    evaluation_id: str  # an imported run's Every Eval Ever record
    submission_id: str
    file_sha256: str
    filename: str
    predictions_sha: str | None
    labels_sha: str  # what the run scored, as digests (evaluator.store.runs)
    scores_sha: str
    format: str
    rows: int
    submitted_at: str
    recipe: object  # how the predictions were made: a JSON object
    verification: object  # a reproduction's outcome: a JSON object


class RunConfig(_Frozen):
    detector: str | None = None
    checkpoint: str | None = None
    llm: str | None = None
    prompt_id: str | None = None
    temperature: float | None = None
    # what the run kind records beside (a detector's description and statistics, an LLM run's
    # parsing and agreement, judges, an import's source): an open JSON object that each kind's
    # readers index by their own keys
    extra: dict[str, Any] = Field(default_factory=dict)


class Counts(_Frozen):
    n: int = Field(ge=0)  # benchmark samples in the scored split(s)
    predicted: int = Field(ge=0)  # samples with a usable prediction
    missing: int = Field(ge=0)  # samples with no prediction
    unparsable: int = Field(
        default=0, ge=0
    )  # predictions present but with no usable label or score
    failed: int = Field(default=0, ge=0)  # requests that failed for good (LLM runs)


class SliceResult(_Frozen):
    """One number on the board: a metric over one slice of one split, with its 95% CI and n."""

    split: str = Field(max_length=MAX_SHORT_TEXT)
    unit: str = Field(max_length=MAX_SHORT_TEXT)
    slice_kind: str = Field(max_length=MAX_SHORT_TEXT)
    slice_value: str = Field(max_length=MAX_TEXT_CHARS)
    metric: str = Field(max_length=MAX_SHORT_TEXT)
    # finite (pydantic's own check: NaN and infinities are refused where they are parsed)
    value: float | None = Field(allow_inf_nan=False)
    ci_low: float | None = Field(default=None, allow_inf_nan=False)
    ci_high: float | None = Field(default=None, allow_inf_nan=False)
    n: int
    coverage: list[str] | None = None  # the domains the number covers
    grader: str | None = None  # "judge/protocol" for explanation metrics (ES, JS)
    aggregation: str | None = None  # "mean_over_domains" when overall = mean of domain values

    @model_validator(mode="after")
    def _in_domain(self) -> SliceResult:
        """Every number within its metric's domain (vocabulary.metric_domain), a CI with its
        low bound at most its high bound, n not negative."""
        lo, hi = metric_domain(self.metric)
        low, high, v = self.ci_low, self.ci_high, self.value
        a, b = lo - DOMAIN_SLACK, hi + DOMAIN_SLACK
        if (  # the common case, in one test (asked of every number a replica reads)
            (v is None or a <= v <= b)
            and (low is None or a <= low <= b)
            and (high is None or (a <= high <= b and (low is None or low <= high)))
            and self.n >= 0
        ):
            return self
        for name in ("value", "ci_low", "ci_high"):
            v = getattr(self, name)
            if v is not None and not (lo - DOMAIN_SLACK <= v <= hi + DOMAIN_SLACK):
                raise ValueError(
                    f"{name} {v!r} of {self.metric} ({self.slice_kind}={self.slice_value!r}) "
                    f"is outside the metric's range [{lo:g}, {hi:g}]"
                )
        if self.ci_low is not None and self.ci_high is not None and self.ci_low > self.ci_high:
            raise ValueError(
                f"the CI of {self.metric} ({self.slice_kind}={self.slice_value!r}) has its low "
                f"bound {self.ci_low!r} above its high bound {self.ci_high!r}"
            )
        if self.n < 0:
            raise ValueError(f"n of {self.metric} is negative ({self.n})")
        return self


class RunRecord(_Frozen):
    """The content of run.json."""

    schema_version: int = 1
    run_id: str = Field(min_length=1, max_length=MAX_SHORT_TEXT)
    benchmark: str = Field(min_length=1, max_length=MAX_SHORT_TEXT)
    benchmark_version: str = Field(pattern=VERSION_PATTERN)
    model: ModelInfo
    origin: Origin
    config: RunConfig = Field(default_factory=RunConfig)
    threshold: ThresholdInfo
    splits: list[str]
    created_at: str = Field(max_length=64)
    counts: Counts
    bootstrap: BootstrapSettings = Field(default_factory=lambda: BootstrapSettings())
    results: list[SliceResult] = Field(default_factory=list)
    hidden: bool = False
    submission: SubmissionInfo | None = None
    # a run derived from another (e.g. the same predictions with judge grades added) names it;
    # the board shows the newest run of such a chain (runs stay immutable)
    supersedes: str | None = None

    def result(
        self,
        metric: str,
        slice_kind: str = "overall",
        slice_value: str = "",
        unit: str | None = None,
        split: str | None = None,
    ) -> SliceResult:
        """The one result matching the keys; raises KeyError naming what was asked."""
        for r in self.results:
            if (
                r.metric == metric
                and r.slice_kind == slice_kind
                and r.slice_value == slice_value
                and (unit is None or r.unit == unit)
                and (split is None or r.split == split)
            ):
                return r
        raise KeyError(f"run {self.run_id} has no result {metric} for {slice_kind}={slice_value!r}")
