"""Every Eval Ever (EEE, schema version 0.3.0): the schemas, their validation, and the names
FactBoard and EEE share.

An EEE record is one JSON file per evaluation, stored in the community datastore as
`data/{benchmark}/{developer}/{model}/{uuid}.json`, with the per-sample results in a companion
`{uuid}_samples.jsonl` beside it (one instance-level record per line). The schemas are vendored
under `evaluator/interop/schemas/` (MIT, see the LICENSE and SOURCE.md there); every file
FactBoard writes and every file it reads is validated against them with `jsonschema`.

FactBoard keeps what EEE has no field for in the records' `additional_details` (string values),
under keys starting with `factboard_` (run level) and `fb_` (sample level), so that a record
FactBoard wrote comes back as the same run. See docs/ARCHITECTURE.md and README.md
("Every Eval Ever").
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from evaluator.core.errors import FactBoardError

SCHEMA_VERSION = "0.3.0"
SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
RECORD_SCHEMA_FILE = "eval.schema.json"
INSTANCE_SCHEMA_FILE = "instance_level_eval.schema.json"
SAMPLES_SUFFIX = "_samples.jsonl"
LIBRARY = "factboard"
DATASTORE_DIR = "data"

# the size beyond which a file is refused unread (imported files are untrusted)
MAX_RECORD_BYTES = 16 * 1024 * 1024
MAX_SAMPLES_BYTES = 256 * 1024 * 1024
MAX_LINES = 500_000  # lines of a samples file (one per prediction or grade)
MAX_PROBLEMS = 20  # schema violations listed per file

# FactBoard metric name -> EEE metric_id (a canonical global id where one exists)
METRIC_IDS: dict[str, str] = {
    "balanced_accuracy": "balanced_accuracy",
    "accuracy": "accuracy",
    "roc_auc": "auroc",
    "recall": "recall",
    "fpr": "false_positive_rate",
    "fnr": "false_negative_rate",
    "pearson": "pearson_r",
    "spearman": "spearman_rho",
    "kendall_tau": "kendall_tau",
    "cohen_kappa": "cohen_kappa",
}
METRIC_KINDS: dict[str, str] = {
    "roc_auc": "auroc",
    "pearson": "correlation",
    "spearman": "correlation",
    "kendall_tau": "correlation",
    "partial_pearson": "correlation",
    "partial_spearman": "correlation",
    "correlation": "correlation",
    "cohen_kappa": "agreement",
    "runtime_seconds": "latency",
}

# FactBoard model kind <-> EEE model availability
AVAILABILITY: dict[str, str] = {"open-llm": "open_weights", "proprietary-llm": "closed_weights"}
KIND_OF_AVAILABILITY: dict[str, str] = {
    "open_weights": "open-llm",
    "closed_weights": "proprietary-llm",
    "unknown": "non-llm",
}


# ------------------------------------------------------------------------------------------
# the parts of the two schemas that FactBoard writes and reads, as typed JSON shapes (a file
# read in is cast to them only once it has validated against its schema); every
# `additional_details` and a sample's `metadata` holds string values only


class SourceMetadata(TypedDict):
    source_type: str  # "documentation" | "evaluation_run"
    source_organization_name: str
    evaluator_relationship: str
    source_name: NotRequired[str]
    source_organization_url: NotRequired[str]
    additional_details: NotRequired[dict[str, str]]


class EvalLibrary(TypedDict):
    name: str
    version: str
    additional_details: NotRequired[dict[str, str]]


class ModelInfo(TypedDict):
    name: str
    id: str
    additional_details: dict[str, str]  # deployment_type, model_availability, ...
    developer: NotRequired[str]
    inference_platform: NotRequired[str]


class SourceData(TypedDict):
    """One of the schema's three source kinds: a Hub dataset, URLs, or other."""

    dataset_name: str
    source_type: str  # "hf_dataset" | "url" | "other"
    hf_repo: NotRequired[str]
    url: NotRequired[list[str]]
    additional_details: NotRequired[dict[str, str]]


class GenerationConfig(TypedDict, total=False):
    generation_args: dict[str, float]  # temperature
    additional_details: dict[str, str]


class ConfidenceInterval(TypedDict):
    lower: float
    upper: float
    confidence_level: NotRequired[float]
    method: NotRequired[str]


class Uncertainty(TypedDict, total=False):
    num_samples: int
    confidence_interval: ConfidenceInterval
    num_bootstrap_samples: int


class ScoreDetails(TypedDict):
    score: float
    uncertainty: NotRequired[Uncertainty]


class MetricConfig(TypedDict):
    lower_is_better: bool
    evaluation_description: NotRequired[str]
    metric_id: NotRequired[str]
    metric_name: NotRequired[str]
    metric_kind: NotRequired[str]
    metric_unit: NotRequired[str]
    metric_parameters: NotRequired[dict[str, str | float | bool | None]]
    score_type: NotRequired[str]
    min_score: NotRequired[float | str | None]  # a number, "Infinity" or "-Infinity"
    max_score: NotRequired[float | str | None]
    additional_details: NotRequired[dict[str, str]]


class EvaluationResult(TypedDict):
    evaluation_name: str
    source_data: SourceData
    metric_config: MetricConfig
    score_details: ScoreDetails
    evaluation_result_id: NotRequired[str]
    evaluation_timestamp: NotRequired[str]
    generation_config: NotRequired[GenerationConfig]


class SamplesPointer(TypedDict):
    """A record's `detailed_evaluation_results`: where its samples file is."""

    format: str
    file_path: str
    hash_algorithm: NotRequired[str]
    checksum: NotRequired[str]
    total_rows: NotRequired[int]


class Record(TypedDict):
    """One EEE record (`{uuid}.json`)."""

    schema_version: str
    evaluation_id: str
    retrieved_timestamp: str
    source_metadata: SourceMetadata
    model_info: ModelInfo
    eval_library: EvalLibrary
    evaluation_results: list[EvaluationResult]
    evaluation_timestamp: NotRequired[str]
    detailed_evaluation_results: NotRequired[SamplesPointer]


class Input(TypedDict):
    raw: str
    reference: list[str]


class Output(TypedDict):
    raw: list[str]


class Attribution(TypedDict):
    turn_idx: int
    source: str
    extracted_value: str
    extraction_method: str
    is_terminal: bool


class Evaluation(TypedDict):
    score: float
    is_correct: bool


class InstanceLine(TypedDict):
    """One line of a samples file (`{uuid}_samples.jsonl`)."""

    schema_version: str
    evaluation_id: str
    model_id: str
    evaluation_name: str
    sample_id: str
    interaction_type: str
    input: Input
    answer_attribution: list[Attribution]
    evaluation: Evaluation
    sample_hash: NotRequired[str | None]
    output: NotRequired[Output | None]
    metadata: NotRequired[dict[str, str] | None]
    evaluation_result_id: NotRequired[str]
    error: NotRequired[str | None]


class SchemaViolation(FactBoardError):
    """A file that does not validate against an EEE schema; `problems` lists the violations."""

    def __init__(self, what: str, problems: list[str]):
        self.what = what
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(
            f"{what} does not validate against the EEE {SCHEMA_VERSION} schema:\n{lines}"
        )


def schema_dir() -> Path:
    """The folder holding the two schemas: $FACTBOARD_EEE_SCHEMAS, else the vendored copy."""
    env = os.environ.get("FACTBOARD_EEE_SCHEMAS")
    return Path(env).expanduser().resolve() if env else SCHEMA_DIR


@functools.lru_cache(maxsize=8)
def _validator(path: str) -> Any:
    import jsonschema

    try:
        schema = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise FactBoardError(f"cannot read the EEE schema {path}: {e}") from None
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
    cls.check_schema(schema)
    return cls(schema)


def record_validator() -> Any:
    return _validator(str(schema_dir() / RECORD_SCHEMA_FILE))


def instance_validator() -> Any:
    return _validator(str(schema_dir() / INSTANCE_SCHEMA_FILE))


def problems(validator: Any, obj: object, limit: int = MAX_PROBLEMS) -> list[str]:
    """Every violation (up to `limit`) as 'at <path>: <message>', in document order."""
    out = []
    errors = sorted(validator.iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path])
    for e in errors[:limit]:
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        msg = e.message if len(e.message) <= 300 else e.message[:300] + "..."
        out.append(f"at {where}: {msg}")
    if len(errors) > limit:
        out.append(f"... and {len(errors) - limit} more")
    return out


def check_record(record: object, what: str = "the record") -> None:
    found = problems(record_validator(), record)
    if found:
        raise SchemaViolation(what, found)


def check_instance(line: object, what: str = "a sample line") -> None:
    found = problems(instance_validator(), line)
    if found:
        raise SchemaViolation(what, found)


# ------------------------------------------------------------------------------------------
# names, ids, paths

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def path_part(text: str, default: str = "unknown") -> str:
    """A datastore folder name: letters, digits, '.', '_' and '-' only (no '..')."""
    s = _UNSAFE.sub("-", text).strip("-.")
    return s[:100] or default


def record_uuid(key: str) -> str:
    """A version-4-shaped UUID derived from `key`, so that exporting a run twice gives the same
    file names (the schema's file_path pattern requires version 4)."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()[:16]
    return str(uuid.UUID(bytes=digest, version=4))


def record_path(benchmark: str, developer: str, model: str, uid: str) -> str:
    """data/{benchmark}/{developer}/{model}/{uuid}.json (the datastore layout)."""
    return "/".join(
        (DATASTORE_DIR, path_part(benchmark), path_part(developer), path_part(model), f"{uid}.json")
    )


def samples_path(record_file: str) -> str:
    return record_file.removesuffix(".json") + SAMPLES_SUFFIX


def sample_hash(raw: str, reference: list[str]) -> str:
    """sha256 of input.raw + input.reference (the schema's definition of sample_hash)."""
    return hashlib.sha256((raw + "".join(reference)).encode("utf-8")).hexdigest()


def metric_id(name: str) -> str:
    return METRIC_IDS.get(name, f"{LIBRARY}.{name}")


def metric_from_id(mid: str) -> str:
    """The FactBoard metric an EEE metric_id names (the inverse of `metric_id`)."""
    for name, m in METRIC_IDS.items():
        if m == mid:
            return name
    return mid.removeprefix(f"{LIBRARY}.")


def fmt_float(x: float) -> str:
    """A float as text that reads back to the same float."""
    return repr(float(x))


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def loads(text: str) -> object:
    """json.loads without NaN and Infinity (which JSON does not have)."""
    return json.loads(text, parse_constant=_no_constant)


def iter_jsonl(data: bytes, what: str) -> Iterator[tuple[int, object]]:
    """(line number, parsed object) for every non-empty line; FactBoardError names a bad line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FactBoardError(f"{what} is not UTF-8 ({e})") from None
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        raise FactBoardError(f"{what} has {len(lines):,} lines, over the {MAX_LINES:,} limit")
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield no, loads(line)
        except (ValueError, RecursionError) as e:
            raise FactBoardError(f"{what} line {no} is not JSON ({e})") from None
