"""The tables' layout (SCHEMA), run.json's structure as DuckDB reads it, the columns of the runs
and results tables, the snapshot's layout digest, and the connection.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import types
import typing
from typing import Any

import duckdb
from pydantic import BaseModel
from typing_extensions import is_typeddict

from evaluator.core.types import RunRecord, SliceResult

Con = duckdb.DuckDBPyConnection


SCHEMA = """
CREATE TABLE IF NOT EXISTS samples (
    benchmark VARCHAR, sample_id VARCHAR, split VARCHAR, unit VARCHAR, summary_id VARCHAR,
    domain VARCHAR, doc_id VARCHAR, document VARCHAR, summary VARCHAR, seed_summary VARCHAR,
    label TINYINT, human_score DOUBLE, error_types VARCHAR[], reference_explanation VARCHAR,
    attributes VARCHAR, topic_type VARCHAR, n_edit_types VARCHAR, sent_idx INTEGER,
    ix INTEGER
);
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR, folder VARCHAR, benchmark VARCHAR, benchmark_version VARCHAR,
    model_name VARCHAR, model_kind VARCHAR, model_org VARCHAR, model_params VARCHAR,
    model_url VARCHAR, model_license VARCHAR, model_description VARCHAR, origin VARCHAR,
    config VARCHAR, policy VARCHAR, threshold DOUBLE, per_domain VARCHAR, tuned_on VARCHAR,
    tuned_value DOUBLE, splits VARCHAR[], created_at VARCHAR, n_total BIGINT, predicted BIGINT,
    missing BIGINT, unparsable BIGINT, failed BIGINT, hidden BOOLEAN, submission VARCHAR,
    moderated BOOLEAN, supersedes VARCHAR
);
CREATE TABLE IF NOT EXISTS results_new (
    run_id VARCHAR, split VARCHAR, unit VARCHAR, slice_kind VARCHAR, slice_value VARCHAR,
    metric VARCHAR, value DOUBLE, ci_low DOUBLE, ci_high DOUBLE, n BIGINT,
    coverage VARCHAR[], grader VARCHAR, aggregation VARCHAR
);
CREATE TABLE IF NOT EXISTS snapshot_gone (run_id VARCHAR);
CREATE TABLE IF NOT EXISTS run_dimensions (
    benchmark VARCHAR, unit VARCHAR, slice_kind VARCHAR, slice_value VARCHAR, metric VARCHAR,
    grader VARCHAR, n BIGINT
);
CREATE OR REPLACE VIEW results AS SELECT * FROM results_new;
CREATE TABLE IF NOT EXISTS predictions (
    run_id VARCHAR, sample_id VARCHAR, score DOUBLE, label TINYINT, explanation VARCHAR
);
CREATE TABLE IF NOT EXISTS labels (
    run_id VARCHAR, sample_id VARCHAR, unit VARCHAR, gold TINYINT, score DOUBLE,
    pred TINYINT, rolled BOOLEAN, ix INTEGER
);
CREATE TABLE IF NOT EXISTS grades (
    run_id VARCHAR, sample_id VARCHAR, judge VARCHAR, protocol VARCHAR, grade DOUBLE,
    rationale VARCHAR
);
CREATE TABLE IF NOT EXISTS sample_stats (
    benchmark VARCHAR, version VARCHAR, unit VARCHAR, sample_id VARCHAR, n_runs BIGINT,
    n_wrong BIGINT
);
CREATE TABLE IF NOT EXISTS run_units (
    benchmark VARCHAR, run_id VARCHAR, unit VARCHAR, n_labelled BIGINT, n_rows BIGINT,
    n_scored BIGINT
);
CREATE TABLE IF NOT EXISTS reported (
    model VARCHAR, kind VARCHAR, benchmark VARCHAR, split VARCHAR, unit VARCHAR,
    slice_kind VARCHAR, slice_value VARCHAR, metric VARCHAR, value DOUBLE, n BIGINT,
    coverage VARCHAR, source VARCHAR, note VARCHAR, file VARCHAR
);
"""

# run.json as a from_json structure, derived from the engine's pydantic models (missing keys read
# as NULL). Free-form objects (dicts, and the run's config) stay JSON text.
_KEPT_AS_JSON = frozenset({"config"})


def _duck_type(annotation: Any) -> Any:
    """The from_json structure of one pydantic field annotation."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType) and len(args) == 1:
        return _duck_type(args[0])
    if origin is typing.Literal:
        return "VARCHAR"
    if origin is list and args:
        return [_duck_type(args[0])]
    if origin is dict or annotation is Any or annotation is dict or is_typeddict(annotation):
        return "JSON"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return model_structure(annotation)
    simple = {str: "VARCHAR", int: "BIGINT", float: "DOUBLE", bool: "BOOLEAN"}
    if annotation in simple:
        return simple[annotation]
    raise TypeError(f"no DuckDB type for the run.json field type {annotation!r}")


def model_structure(
    model: type[BaseModel], as_json: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """{field: DuckDB type or nested structure} of a pydantic model."""
    return {
        name: "JSON" if name in as_json else _duck_type(f.annotation)
        for name, f in model.model_fields.items()
    }


RUN_JSON_STRUCTURE = json.dumps(model_structure(RunRecord, _KEPT_AS_JSON))

# where each column of the runs table comes from in run.json (a dotted path; None: not from
# run.json). tests/explorer/test_explorer_store.py checks these against RunRecord.
RUN_COLUMNS: dict[str, str | None] = {
    "run_id": "run_id",
    "folder": None,  # the run folder's name
    "benchmark": "benchmark",
    "benchmark_version": "benchmark_version",
    "model_name": "model.name",
    "model_kind": "model.kind",
    "model_org": "model.org",
    "model_params": "model.params",
    "model_url": "model.url",
    "model_license": "model.license",
    "model_description": "model.description",
    "origin": "origin",
    "config": "config",
    "policy": "threshold.policy",
    "threshold": "threshold.threshold",
    "per_domain": "threshold.per_domain",
    "tuned_on": "threshold.tuned_on",
    "tuned_value": "threshold.tuned_value",
    "splits": "splits",
    "created_at": "created_at",
    "n_total": "counts.n",
    "predicted": "counts.predicted",
    "missing": "counts.missing",
    "unparsable": "counts.unparsable",
    "failed": "counts.failed",
    "hidden": None,  # moderated OR superseded (apply_supersession)
    "submission": "submission",
    "moderated": "hidden",
    "supersedes": "supersedes",
}
# the results table: run_id, then one column per field of a result (run.json's results[])
RESULT_COLUMNS: dict[str, str | None] = {
    "run_id": "run_id",
    **{name: f"results.{name}" for name in SliceResult.model_fields},
}

# the run folder's name is the second-to-last path component of any file in it
FOLDER_OF_FILE = r"regexp_extract(filename, '([^/\\]+)[/\\][^/\\]+$', 1)"


# the store's snapshot of the runs and results tables (explorer.store.snapshot_file): its
# name carries this digest of the tables' layout and of the state it notes per run (2: with
# the run folder's own mtime; 3: with the results' dimensions beside them; 4: with the pack a
# pulled run is read from), so a changed layout never reads an old one
SNAPSHOT_LAYOUT = hashlib.sha1(f"4\x1f{SCHEMA}\x1f{RUN_JSON_STRUCTURE}".encode()).hexdigest()[:10]


def connect() -> Con:
    con = duckdb.connect(":memory:")
    con.execute(SCHEMA)
    # the snapshot's results are read in place on every query: keep their footers
    with contextlib.suppress(duckdb.Error):
        con.execute("SET parquet_metadata_cache = true")
    # memory freed by a query (a store's first load of thousands of runs) goes back to the
    # system within a second or two, not at the next allocation
    with contextlib.suppress(duckdb.Error):
        con.execute("SET allocator_background_threads = true")
    # warm up the JSON reader (its first use costs ~0.5 s) outside any user request
    con.execute("SELECT json_extract('{\"a\": 1}', '$.a')").fetchall()
    return con
