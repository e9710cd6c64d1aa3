"""Every Eval Ever records -> FactBoard: runs scored here, or published-number rows.

`import_eee(path)` reads one record (`{uuid}.json`) or every record under a folder (a datastore
checkout). Each record is untrusted: it is refused unread beyond a size limit, validated against
the EEE schemas, and matched against a benchmark FactBoard has ingested.

- A record with per-sample results (`detailed_evaluation_results`: the `_samples.jsonl` beside
  it) becomes a run with origin "imported": its predictions are scored by FactBoard's own scorer
  (evaluator.scorer), and the record's source is kept in the run's `submission` field. A record
  FactBoard wrote carries its scoring settings (threshold policy, splits, bootstrap), so the
  imported run has the same per-slice numbers as the original.
- A record with aggregates only becomes rows of a published-number CSV in the data root's
  reported folder (`<data root>/reported`, which the board reads), with the record's source.

Anything refused (unknown benchmark, sample ids or texts that do not match the benchmark, a
schema violation, a file over the size limit, a record already imported) is named with its
reason, and nothing of the whole import is stored. See README.md ("Every Eval Ever").
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NoReturn, TypedDict, TypeVar, cast

import pandas as pd
from pydantic import BaseModel, ValidationError

from evaluator.benchmarks import registry
from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core import vocabulary as V
from evaluator.core.errors import FactBoardError
from evaluator.core.scoring import ScoreOptions
from evaluator.core.types import (
    GRADE_COLUMNS,
    PREDICTION_COLUMNS,
    ModelInfo,
    RunConfig,
    RunRecord,
    ThresholdInfo,
)
from evaluator.interop import eee
from evaluator.store import atomic, fingerprints, ingested, layout, runs
from evaluator.submissions import validation

SHOW_FIRST = 5


class ImportRefused(FactBoardError):
    """One or more records were refused; `reasons` names each file and why. Nothing was stored."""

    def __init__(self, reasons: list[str]):
        self.reasons = reasons
        lines = "\n".join(f"  - {r}" for r in reasons)
        super().__init__(f"{len(reasons)} record(s) refused; nothing was imported:\n{lines}")


@dataclass
class Imported:
    """What one record became."""

    record: Path
    evaluation_id: str
    benchmark: str
    kind: str  # "run" | "reported"
    path: Path | None = None  # the run folder or the CSV
    rows: int = 0  # predictions (run) or published numbers (reported)
    notes: list[str] = field(default_factory=list)


@dataclass
class _RunPlan:
    item: Imported
    spec: BenchmarkSpec
    version: str
    samples: pd.DataFrame
    predictions: pd.DataFrame
    grades: pd.DataFrame | None
    model: ModelInfo
    config: RunConfig
    options: ScoreOptions
    submission: dict[str, str]  # where the record came from (the run's `submission`)
    expected: dict[str, float]  # evaluation_result_id -> score, from a record FactBoard wrote


class _Prediction(TypedDict, total=False):
    """A prediction from another harness's sample line: a score (correlation) or a label."""

    sample_id: str
    raw_output: str | None
    score: float
    label: int | None


class _ReportedRow(TypedDict):
    """One published number, in the columns of a reported CSV (layout.REPORTED_COLUMNS)."""

    model: str
    kind: str
    benchmark: str
    split: str
    unit: str
    slice_kind: str
    slice_value: str
    metric: str
    value: float
    n: int | None
    coverage: str
    source: str
    note: str


@dataclass
class _ReportedPlan:
    item: Imported
    rows: pd.DataFrame
    target: Path


# ------------------------------------------------------------------------------------------
# reading


def record_files(path: Path) -> list[Path]:
    """The record(s) at `path`: the file itself, or every `*.json` under a folder."""
    if path.is_file():
        return [path]
    if path.is_dir():
        found = sorted(p for p in path.rglob("*.json") if p.is_file())
        if not found:
            raise FactBoardError(f"no EEE record (*.json) under {path}")
        return found
    raise FactBoardError(f"no such file or folder: {path}")


def _read_limited(path: Path, limit: int, what: str) -> bytes:
    size = path.stat().st_size
    if size > limit:
        raise FactBoardError(
            f"{what} is {size / 2**20:.1f} MiB, over the {limit / 2**20:.0f} MiB limit; "
            "refused unread"
        )
    return path.read_bytes()


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.casefold())


def benchmark_of(record: eee.Record, override: str | None = None) -> str:
    """The FactBoard benchmark a record is about: --benchmark, else the name FactBoard wrote,
    else the dataset names (or Hub ids) of its results, which must all name one benchmark."""
    if override:
        return registry.get(override).name
    lib = record["eval_library"].get("additional_details") or {}
    if lib.get("factboard_benchmark"):
        return registry.get(str(lib["factboard_benchmark"])).name
    by_key = {_key(n): n for n in registry.names()}
    by_hub = {s.hub_id: s.name for s in registry.specs() if s.hub_id}
    found: set[str] = set()
    unknown: list[str] = []
    for r in record["evaluation_results"]:
        sd = r["source_data"]
        given = (sd.get("additional_details") or {}).get("factboard_benchmark") or sd[
            "dataset_name"
        ]
        name = by_key.get(_key(str(given))) or by_hub.get(sd.get("hf_repo") or "")
        if name:
            found.add(name)
        elif given not in unknown:
            unknown.append(str(given))
    known = ", ".join(registry.names())
    if unknown:
        _refuse_unknown(unknown, known)
    if len(found) != 1:
        raise FactBoardError(
            f"the record's results name {len(found)} benchmarks ({', '.join(sorted(found))}); "
            "import one benchmark at a time with --benchmark"
        )
    return found.pop()


def _refuse_unknown(names: list[str], known: str) -> NoReturn:
    raise FactBoardError(
        f"unknown benchmark {', '.join(map(repr, names[:SHOW_FIRST]))}; known: {known} "
        "(pass --benchmark if the record is about one of them under another name)"
    )


def _json_detail(details: dict[str, str], key: str) -> object:
    try:
        return json.loads(details[key])
    except (KeyError, TypeError, ValueError, RecursionError):
        raise FactBoardError(
            f"eval_library.additional_details.{key} is missing or not JSON"
        ) from None


_M = TypeVar("_M", bound=BaseModel)


def _pydantic(model: type[_M], data: object, what: str) -> _M:
    try:
        return model.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        raise FactBoardError(f"{what}: field {loc!r}: {first['msg']}") from None


def _written_by_factboard(record: eee.Record) -> bool:
    lib = record["eval_library"]
    return lib["name"] == eee.LIBRARY and "factboard_threshold" in (
        lib.get("additional_details") or {}
    )


def _model(record: eee.Record) -> ModelInfo:
    if _written_by_factboard(record):
        data = _json_detail(
            record["eval_library"].get("additional_details") or {}, "factboard_model"
        )
        return _pydantic(ModelInfo, data, "the record's model")
    mi = record["model_info"]
    details = mi.get("additional_details") or {}
    kind = details.get("factboard_kind") or eee.KIND_OF_AVAILABILITY.get(
        str(details.get("model_availability")), "non-llm"
    )
    return _pydantic(
        ModelInfo,
        {"name": mi["name"], "kind": kind, "org": mi.get("developer")},
        "the record's model_info",
    )


def _check_model(
    model: ModelInfo, benchmark: str, version: str, root: Path | None, is_run: bool
) -> None:
    """An imported model is held to the submission rules: a name and organisation as a
    submission may give them (one line of letters, digits and plain punctuation: no control,
    bidi or zero-width character, no markup), no look-alike of a name already on the
    benchmark's board, and (a run) no second run under a name that already has one on the
    same benchmark version. Published numbers may name a model that also has runs."""
    problems = validation.check_name(model.name, "model name") + validation.check_name(
        model.org, "organisation", required=False
    )
    if problems:
        raise FactBoardError("; ".join(problems))
    listing = runs.list_runs(
        root, benchmark=benchmark, include_hidden=True, include_superseded=True
    )
    for r in listing.runs:
        if V.lookalike(model.name, r.model.name):
            raise FactBoardError(
                f"model name {model.name!r} only looks like {r.model.name!r} (run {r.run_id}): "
                "it mixes letters of another script in; name the model in one script"
            )
    for r in listing.runs if is_run else []:
        if r.benchmark_version == version and V.model_key(r.model.name) == V.model_key(model.name):
            raise FactBoardError(
                f"a model named {model.name!r} already has a run on {benchmark} (same benchmark "
                f"version): run {r.run_id}; an import follows the submission rules: give the "
                "record another model name, or remove the earlier run first"
            )


def _source(record: eee.Record, rec_file: Path, data: bytes) -> dict[str, str]:
    sm = record["source_metadata"]
    lib = record["eval_library"]
    out = {
        "source": "Every Eval Ever record",
        "evaluation_id": record["evaluation_id"],
        "source_name": sm.get("source_name"),
        "source_organization_name": sm["source_organization_name"],
        "source_organization_url": sm.get("source_organization_url"),
        "source_type": sm["source_type"],
        "evaluator_relationship": sm["evaluator_relationship"],
        "eval_library": f"{lib['name']} {lib['version']}",
        "model_id": record["model_info"]["id"],
        "record_file": rec_file.name,
        "record_sha256": hashlib.sha256(data).hexdigest(),
    }
    details = sm.get("additional_details") or {}
    for k in ("factboard_run_id", "factboard_origin"):
        if k in details:
            out["original_" + k.removeprefix("factboard_")] = details[k]
    return {k: v for k, v in out.items() if v is not None}


def _already_imported(evaluation_id: str, root: Path | None) -> str | None:
    listing = runs.list_runs(root, include_hidden=True, include_superseded=True)
    for r in listing.runs:
        if r.origin == "imported" and (r.submission or {}).get("evaluation_id") == evaluation_id:
            return r.run_id
    return None


# ------------------------------------------------------------------------------------------
# one record


def prepare(
    rec_file: Path, benchmark: str | None = None, root: Path | None = None
) -> _RunPlan | _ReportedPlan:
    """Everything about one record short of storing it; FactBoardError says why it is refused."""
    data = _read_limited(rec_file, eee.MAX_RECORD_BYTES, "the record")
    try:
        parsed = eee.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise FactBoardError(f"the record is not JSON ({e})") from None
    eee.check_record(parsed, "the record")
    assert isinstance(parsed, dict)  # the schema's top level is an object
    record = cast(eee.Record, parsed)  # it validated against the record schema
    name = benchmark_of(record, benchmark)
    spec = registry.get(name)
    meta = ingested.load_meta(name, root)
    item = Imported(rec_file, str(record["evaluation_id"]), name, "run")
    runs_too = bool(record.get("detailed_evaluation_results"))
    done = _already_imported(item.evaluation_id, root) if runs_too else None
    if done:
        raise FactBoardError(f"evaluation {item.evaluation_id!r} is already imported as run {done}")
    _check_model(_model(record), spec.name, meta["version"], root, runs_too)
    if runs_too:
        return _run_plan(record, rec_file, data, spec, meta["version"], item, root)
    item.kind = "reported"
    return _reported_plan(record, spec, item, root)


def _run_plan(
    record: eee.Record,
    rec_file: Path,
    data: bytes,
    spec: BenchmarkSpec,
    version: str,
    item: Imported,
    root: Path | None,
) -> _RunPlan:
    ours = _written_by_factboard(record)
    pointer = record["detailed_evaluation_results"]
    # the samples file sits beside the record (datastore layout); only its name is used
    sfile = rec_file.parent / PurePosixPath(pointer["file_path"]).name
    if not sfile.is_file():
        raise FactBoardError(
            f"its samples file {sfile.name} (detailed_evaluation_results) is not beside it"
        )
    body = _read_limited(sfile, eee.MAX_SAMPLES_BYTES, f"the samples file {sfile.name}")
    algo, checksum = pointer.get("hash_algorithm"), pointer.get("checksum")
    if algo and checksum and hashlib.new(algo, body).hexdigest() != checksum:
        raise FactBoardError(f"the samples file {sfile.name} does not match the record's checksum")
    lines = _lines(body, sfile.name, item.evaluation_id)
    if pointer.get("total_rows") is not None and pointer["total_rows"] != len(lines):
        raise FactBoardError(
            f"the samples file {sfile.name} has {len(lines)} lines; the record says "
            f"{pointer['total_rows']}"
        )
    samples = ingested.load_samples(spec.name, root)
    preds, grades = (
        _factboard_rows(lines) if ours else _foreign_rows(lines, spec, samples, sfile.name)
    )
    _match_samples(spec, samples, lines, preds, grades, ours, version)
    item.rows = len(preds)
    lib = record["eval_library"].get("additional_details") or {}
    if ours:
        config = _pydantic(RunConfig, _json_detail(lib, "factboard_config"), "the run's config")
        options = _options(lib, config)
        if lib.get("factboard_benchmark_version") not in (None, version):
            item.notes.append(
                f"scored against {spec.name} version {version}; the record was made on version "
                f"{lib['factboard_benchmark_version']} (the samples it uses are unchanged)"
            )
    else:
        config = RunConfig(extra={"eee_model_id": record["model_info"]["id"]})
        options = ScoreOptions()
    expected = (
        {
            r["evaluation_result_id"]: float(r["score_details"]["score"])
            for r in record["evaluation_results"]
            if r.get("evaluation_result_id")
        }
        if ours
        else {}
    )
    return _RunPlan(
        item,
        spec,
        version,
        samples,
        preds,
        grades,
        _model(record),
        config,
        options,
        _source(record, rec_file, data),
        expected,
    )


def _lines(body: bytes, name: str, evaluation_id: str) -> list[eee.InstanceLine]:
    validator = eee.instance_validator()
    out = []
    for no, obj in eee.iter_jsonl(body, f"the samples file {name}"):
        found = eee.problems(validator, obj)
        if found:
            raise eee.SchemaViolation(f"line {no} of the samples file {name}", found)
        assert isinstance(obj, dict)
        if obj["evaluation_id"] != evaluation_id:
            raise FactBoardError(
                f"line {no} of {name} belongs to evaluation {obj['evaluation_id']!r}, not "
                f"{evaluation_id!r}"
            )
        out.append(cast(eee.InstanceLine, obj))  # it validated against the instance schema
    if not out:
        raise FactBoardError(f"the samples file {name} has no lines")
    return out


def _float(text: str | None) -> float | None:
    if text is None:
        return None
    x = float(text)
    if not math.isfinite(x):
        raise ValueError(text)
    return x


def _factboard_rows(lines: list[eee.InstanceLine]) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Predictions and grades exactly as the exporting FactBoard stored them."""
    preds, grades = [], []
    for i, line in enumerate(lines, 1):
        m = line.get("metadata") or {}
        try:
            if m.get("fb_line", "prediction") == "grade":
                grades.append(
                    {
                        "sample_id": line["sample_id"],
                        "judge": m["fb_judge"],
                        "protocol": m["fb_protocol"],
                        "grade": _float(m.get("fb_grade")),
                        "rationale": m.get("fb_rationale"),
                        "raw_output": m.get("fb_judge_output"),
                    }
                )
                continue
            out = line.get("output")
            raw = out["raw"] if out else []
            preds.append(
                {
                    "sample_id": line["sample_id"],
                    "score": _float(m.get("fb_score")),
                    "label": int(m["fb_label"]) if m.get("fb_label") is not None else None,
                    "explanation": m.get("fb_explanation"),
                    "raw_output": raw[0]
                    if m.get("fb_raw_output") == "output.raw[0]" and raw
                    else None,
                }
            )
        except (KeyError, ValueError) as e:
            raise FactBoardError(f"line {i}: FactBoard field {e} is missing or malformed") from None
    p = pd.DataFrame(preds, columns=list(PREDICTION_COLUMNS))
    p["score"] = p["score"].astype(float)
    g = pd.DataFrame(grades, columns=list(GRADE_COLUMNS)) if grades else None
    if g is not None:
        g["grade"] = g["grade"].astype(float)
    return p, g


def _foreign_rows(
    lines: list[eee.InstanceLine], spec: BenchmarkSpec, samples: pd.DataFrame, name: str
) -> tuple[pd.DataFrame, None]:
    """Predictions from another harness's instance records: the terminal extracted answer as a
    label (or a score on correlation benchmarks); failing that, `is_correct` against the gold
    label. One prediction per sample; repeated lines must agree."""
    from evaluator.submissions.validation import parse_label

    gold = dict(zip(samples["sample_id"].astype(str), samples["label"], strict=True))
    rows: dict[str, _Prediction] = {}
    for i, line in enumerate(lines, 1):
        sid = str(line["sample_id"])
        terminal = [a for a in line["answer_attribution"] if a["is_terminal"]]
        answer = terminal[-1]["extracted_value"] if terminal else None
        out = line.get("output")
        raw = out["raw"] if out else []
        row: _Prediction = {"sample_id": sid, "raw_output": raw[0] if raw else None}
        if spec.task == "correlation":
            row["score"] = float(line["evaluation"]["score"])
        else:
            try:
                row["label"] = parse_label(answer)
            except ValueError:
                row["label"] = None
            g = gold.get(sid)
            if row["label"] is None and g is not None and not pd.isna(g):
                row["label"] = int(g) if line["evaluation"]["is_correct"] else 1 - int(g)
            if row["label"] is None:
                raise FactBoardError(
                    f"line {i} of {name}: no label in the extracted answer {answer!r}"
                )
        if sid in rows and rows[sid] != row:
            raise FactBoardError(f"line {i} of {name}: sample {sid!r} has two different answers")
        rows[sid] = row
    p = pd.DataFrame(list(rows.values()))
    for c in PREDICTION_COLUMNS:
        if c not in p:
            p[c] = None
    return p[list(PREDICTION_COLUMNS)], None


def _match_samples(
    spec: BenchmarkSpec,
    samples: pd.DataFrame,
    lines: list[eee.InstanceLine],
    preds: pd.DataFrame,
    grades: pd.DataFrame | None,
    ours: bool,
    version: str,
) -> None:
    """Every sample id must be one of the benchmark's; a record FactBoard wrote must also have
    the same texts and gold answers (sample_hash)."""
    known = set(samples["sample_id"].astype(str))
    ids = preds["sample_id"].astype(str)
    dup = ids[ids.duplicated()].unique().tolist()
    if dup:
        raise FactBoardError(
            f"{len(dup)} sample id(s) have two predictions, e.g. {', '.join(map(repr, dup[:5]))}"
        )
    all_ids = list(ids) + ([] if grades is None else list(grades["sample_id"].astype(str)))
    unknown = list(dict.fromkeys(i for i in all_ids if i not in known))
    if unknown:
        raise FactBoardError(
            f"{len(unknown)} sample id(s) are not in benchmark {spec.name} (version {version}), "
            f"e.g. {', '.join(map(repr, unknown[:SHOW_FIRST]))}"
        )
    if not ours:
        return
    from evaluator.interop.export import as_text, sample_reference

    by_id = samples.set_index(samples["sample_id"].astype(str))
    differ = []
    for line in lines:
        if (line.get("metadata") or {}).get("fb_line") == "grade" or not line.get("sample_hash"):
            continue
        s: dict[Any, Any] = by_id.loc[str(line["sample_id"])].to_dict()
        raw = as_text(s.get("summary")) or ""
        if eee.sample_hash(raw, sample_reference(spec, s)) != line["sample_hash"]:
            differ.append(str(line["sample_id"]))
    if differ:
        raise FactBoardError(
            f"{len(differ)} sample(s) differ from {spec.name} version {version} (text or gold "
            f"answer), e.g. {', '.join(map(repr, differ[:SHOW_FIRST]))}: the record was made on "
            "another version of the benchmark"
        )


def _options(lib: dict[str, str], config: RunConfig) -> ScoreOptions:
    """The scoring settings of the run a FactBoard record was exported from."""
    t = _pydantic(ThresholdInfo, _json_detail(lib, "factboard_threshold"), "the run's threshold")
    splits = _json_detail(lib, "factboard_splits")
    boot = _json_detail(lib, "factboard_bootstrap") or {}
    if not isinstance(splits, list) or not isinstance(boot, dict):
        raise FactBoardError("factboard_splits must be a list and factboard_bootstrap an object")
    return ScoreOptions.recorded(t, splits, boot, bool(config.extra.get("labels_given")))


def _reported_plan(
    record: eee.Record, spec: BenchmarkSpec, item: Imported, root: Path | None
) -> _ReportedPlan:
    model = _model(record)
    sm = record["source_metadata"]
    who = sm.get("source_name") or sm["source_organization_name"]
    source = f"{who} (Every Eval Ever record)"
    eid = re.sub(r"[;\s]+", "_", item.evaluation_id)
    rows: list[_ReportedRow] = []
    for i, r in enumerate(record["evaluation_results"]):
        mc = r["metric_config"]
        d = mc.get("additional_details") or {}
        metric = d.get("factboard_metric") or eee.metric_from_id(
            mc.get("metric_id") or mc.get("metric_name") or ""
        )
        if V.METRICS.find(metric) is None:
            raise FactBoardError(
                f"evaluation_results[{i}]: metric {metric!r} is not one FactBoard knows; known: "
                f"{', '.join(V.metric_names())}"
            )
        value = float(r["score_details"]["score"])
        unc = r["score_details"].get("uncertainty") or {}
        ci = unc.get("confidence_interval")
        _check_number(i, metric, value, mc, ci, unc.get("num_samples"))
        pairs = [f"eee_id={eid}", f"relationship={sm['evaluator_relationship']}"]
        if d.get("grader") and "/" in d["grader"]:
            judge, protocol = d["grader"].split("/", 1)
            pairs += [f"judge={judge}", f"protocol={protocol}"]
        # a record of published numbers FactBoard wrote carries the original note
        original = (sm.get("additional_details") or {}).get("note")
        if original:
            pairs.append(str(original))
        text = "imported from an Every Eval Ever record"
        if ci:
            text += f"; 95% CI [{ci['lower']:.4g}, {ci['upper']:.4g}]"
        rows.append(
            {
                "model": model.name,
                "kind": model.kind,
                "benchmark": spec.name,
                "split": d.get("split") or ("test" if "test" in spec.splits else spec.splits[0]),
                "unit": d.get("unit") or spec.units[0],
                "slice_kind": d.get("slice_kind") or "overall",
                "slice_value": d.get("slice_value") or "",
                "metric": metric,
                "value": value,
                "n": unc.get("num_samples"),
                "coverage": d.get("coverage") or "",
                "source": source,
                "note": "; ".join([*pairs, text]),
            }
        )
    item.rows = len(rows)
    digest = hashlib.sha256(item.evaluation_id.encode("utf-8")).hexdigest()[:12]
    # the folder the board reads: <data root>/reported (explorer.store)
    folder = layout.reported_dir(root or layout.data_root())
    target = folder / f"eee-{eee.path_part(spec.name)}-{digest}.csv"
    if target.exists():
        raise FactBoardError(
            f"evaluation {item.evaluation_id!r} is already imported ({target.name})"
        )
    df = pd.DataFrame(rows, columns=list(layout.REPORTED_COLUMNS))
    _refuse_same_numbers(df, spec.name, root)
    df["n"] = df["n"].astype("Int64")
    return _ReportedPlan(item, df, target)


MAX_NUM_SAMPLES = 10**9  # more samples than any benchmark has: a record claiming more is wrong


def _check_number(
    i: int,
    metric: str,
    value: float,
    metric_config: eee.MetricConfig,
    ci: eee.ConfidenceInterval | None,
    num_samples: object,
) -> None:
    """One aggregate number of a record, held to what a run's number is held to: finite, within
    its metric's domain and within the record's own min_score/max_score, a CI whose bounds lie
    in the same range in order, a sample count that is a whole number from 0 to 10^9."""
    where = f"evaluation_results[{i}]"
    lo, hi = V.metric_domain(metric)
    # a bound left out or null ("not provided") is the metric's own
    low, high = metric_config.get("min_score"), metric_config.get("max_score")
    lo = lo if low is None else max(lo, float(low))
    hi = hi if high is None else min(hi, float(high))
    slack = V.DOMAIN_SLACK

    def within(v: float) -> bool:
        return math.isfinite(v) and lo - slack <= v <= hi + slack

    if not within(value):
        raise FactBoardError(
            f"{where}: the score {value!r} is outside [{lo:g}, {hi:g}] (the range of "
            f"{V.metric_label(metric)} and the record's own min_score/max_score)"
        )
    if ci:
        a, b = float(ci["lower"]), float(ci["upper"])
        if not (within(a) and within(b) and a <= b):
            raise FactBoardError(
                f"{where}: the confidence interval [{a!r}, {b!r}] is not an interval within "
                f"[{lo:g}, {hi:g}]"
            )
    if num_samples is not None and not (
        isinstance(num_samples, int) and 0 <= num_samples <= MAX_NUM_SAMPLES
    ):
        raise FactBoardError(
            f"{where}: num_samples {num_samples!r} is not a whole number from 0 to "
            f"{MAX_NUM_SAMPLES:,}"
        )


def _refuse_same_numbers(rows: pd.DataFrame, benchmark: str, root: Path | None) -> None:
    """An aggregate record whose numbers were all imported before (the same record under a new
    evaluation_id) is a duplicate."""
    folder = layout.reported_dir(root or layout.data_root())
    keys = ("model", "split", "unit", "slice_kind", "slice_value", "metric")
    mine = {tuple(str(r[k]) for k in keys): float(r["value"]) for r in rows.to_dict("records")}
    for f in sorted(folder.glob(f"eee-{eee.path_part(benchmark)}-*.csv")):
        try:
            old = pd.read_csv(f, dtype=str, keep_default_na=False)
        except (OSError, ValueError, pd.errors.ParserError):
            continue
        if not set(keys) | {"value"} <= set(old.columns):
            continue
        theirs = {tuple(str(x[k]) for k in keys): x["value"] for x in old.to_dict("records")}
        same = all(
            (t := _float(theirs.get(k))) is not None and abs(t - v) < 1e-12 for k, v in mine.items()
        )
        if same:
            raise FactBoardError(
                f"its numbers are already imported, all {len(mine)} of them ({f.name}): the "
                "same record under another evaluation_id"
            )


# ------------------------------------------------------------------------------------------
# the import


def import_eee(
    path: Path, benchmark: str | None = None, root: Path | None = None
) -> list[Imported]:
    """Import the EEE record(s) at `path`; every record is checked before anything is stored,
    and a refusal of any record stores nothing (ImportRefused lists every reason)."""
    from evaluator import scorer

    files = record_files(Path(path))
    plans: list[_RunPlan | _ReportedPlan] = []
    reasons: list[str] = []
    seen: dict[str, Path] = {}
    for f in files:
        try:
            plan = prepare(f, benchmark, root)
        except FactBoardError as e:
            reasons.append(f"{f}: {e}")
            continue
        first = seen.setdefault(plan.item.evaluation_id, f)
        if first != f:
            reasons.append(f"{f}: evaluation {plan.item.evaluation_id!r} is also in {first}")
            continue
        plans.append(plan)
    if reasons:
        raise ImportRefused(reasons)
    written_runs: list[str] = []
    written_files: list[Path] = []
    try:
        for plan in plans:
            if isinstance(plan, _RunPlan):
                d = scorer.score_to_run(
                    plan.spec,
                    plan.version,
                    plan.samples,
                    plan.predictions,
                    plan.model,
                    "imported",
                    plan.config,
                    plan.options,
                    plan.grades,
                    root,
                    plan.submission,
                )
                written_runs.append(d.name)
                _refuse_same_scores(d, plan, root)
                plan.item.path = d
                plan.item.notes += _differences(runs.read_record(d), plan.expected)
            else:
                _write_csv(plan.rows, plan.target)
                written_files.append(plan.target)
                plan.item.path = plan.target
    except FactBoardError as e:
        for rid in written_runs:
            runs.delete_run(rid, root)
        for f in written_files:
            f.unlink(missing_ok=True)
        raise ImportRefused([f"{plan.item.record}: {e}"]) from None
    return [p.item for p in plans]


def _refuse_same_scores(d: Path, plan: _RunPlan, root: Path | None) -> None:
    """A run that scores exactly as a stored run of the same benchmark version (the same final
    labels or the same scores) is a duplicate, as a submission would be."""
    mine = fingerprints.scored_fingerprints(runs.read_labels(d))
    other = fingerprints.scored_like(mine, plan.spec.name, plan.version, root, exclude=d.name)
    if other is not None:
        raise FactBoardError(
            f"it scores exactly as run {other.run_id} ({other.model.name!r}): the same final "
            "labels or the same scores on the scored split, whatever else differs"
        )


def _differences(rec: RunRecord, expected: dict[str, float]) -> list[str]:
    """A note when the numbers scored here differ from those the record states."""
    from evaluator.interop.export import result_id

    if not expected:
        return []
    got = {result_id(r): r.value for r in rec.results if r.value is not None}
    off = [k for k, v in expected.items() if k not in got or abs(got[k] - v) > 1e-9]
    if not off:
        return [f"all {len(expected)} numbers of the record reproduced"]
    return [
        f"{len(off)} of the record's {len(expected)} numbers differ from those scored here, e.g. "
        + ", ".join(off[:SHOW_FIRST])
    ]


def _write_csv(df: pd.DataFrame, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic.replacing(target) as tmp:
        df.to_csv(tmp, index=False)
