"""Stored runs -> Every Eval Ever records (one record and one samples file per run); published
numbers -> aggregate-only records.

`run_files` builds the two files of one run in memory; `export_runs` writes them in the
datastore's layout under a folder; `reported_files` turns the reported CSVs into records of
source type 'documentation'; `eee_zip` returns runs (and a benchmark's published numbers) as zip
bytes (the download button of the leaderboard and of a run's view). Every file is validated
against the EEE schemas before it leaves (evaluator.interop.eee). What each FactBoard field
becomes is listed in README.md ("Every Eval Ever") and docs/ARCHITECTURE.md.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import time
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evaluator.benchmarks import registry
from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core import vocabulary as V
from evaluator.core.errors import FactBoardError
from evaluator.core.types import RunRecord, SliceResult, ThresholdInfo
from evaluator.interop import eee
from evaluator.store import ingested, layout, runs
from evaluator.submissions import verification

# how the evaluator stands to the model, by origin
RELATIONSHIP = {
    "evaluated": "third_party",
    "reproduced": "third_party",
    "released": "third_party",
    "submitted": "other",  # the submitter may or may not be the model's developer
    "imported": "other",
}
LABEL_WORDS = {1: "consistent", 0: "inconsistent"}


def relationship(origin: str, status: str) -> str:
    """The record's evaluator relationship: a submitted run FactBoard re-ran from its recipe
    with the same (or differing) result was evaluated by a third party, FactBoard; a
    self-reported or not yet reproduced one stays "other" (its submitter may be the model's
    developer or not)."""
    if origin == "submitted" and status in ("reproduced", "differs"):
        return "third_party"
    return RELATIONSHIP.get(origin, "other")


EXTRACTION = {
    "labels": "label as predicted",
    "dev": "score >= threshold tuned on dev",
    "fixed": "score >= fixed threshold",
    "per-domain-dev": "score >= per-domain threshold tuned on dev",
    "none": "score",
}


@dataclass(frozen=True)
class EEEFiles:
    """One run as EEE: the record and its samples file, with their datastore paths."""

    run_id: str
    record_path: str  # data/{benchmark}/{developer}/{model}/{uuid}.json
    record: eee.Record
    samples_path: str  # ... /{uuid}_samples.jsonl
    samples: bytes  # JSON lines

    def files(self) -> dict[str, bytes]:
        body = json.dumps(self.record, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
        return {self.record_path: body.encode("utf-8"), self.samples_path: self.samples}


# ------------------------------------------------------------------------------------------
# small conversions


def _num(v: object) -> float | None:
    if v is None or v is pd.NA:
        return None
    try:
        x = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def as_text(v: object) -> str | None:
    return v if isinstance(v, str) else None


def _strings(d: dict[str, object]) -> dict[str, str]:
    """An additional_details object: values as strings, None left out."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in d.items() if v is not None}


def model_id(rec: RunRecord) -> str:
    """The model in Hugging Face style (developer/name): the LLM or the checkpoint when they say
    so, else the model's organisation (or 'unknown') and its name."""
    c = rec.config
    if c.llm and ":" in c.llm:
        provider, name = c.llm.split(":", 1)
        return f"{eee.path_part(provider)}/{eee.path_part(name)}"
    if c.checkpoint and c.checkpoint.count("/") == 1 and not c.checkpoint.startswith((".", "/")):
        dev, name = c.checkpoint.split("/")
        return f"{eee.path_part(dev)}/{eee.path_part(name)}"
    return f"{eee.path_part(rec.model.org or 'unknown')}/{eee.path_part(rec.model.name)}"


def result_id(r: SliceResult) -> str:
    """A stable id of one number of a run (the join key of the samples file)."""
    key = f"{r.split}/{r.unit}/{r.slice_kind}={r.slice_value}/{r.metric}"
    return key + (f"/{r.grader}" if r.grader else "")


def final_label(
    score: float | None, label: float | None, domain: object, t: ThresholdInfo
) -> int | None:
    """The label the scorer used for one prediction: the run's threshold policy applied."""
    if t.policy in ("labels", "none"):
        return None if label is None else int(label)
    cut = (
        t.per_domain.get(str(domain))
        if t.policy == "per-domain-dev" and t.per_domain
        else t.threshold
    )
    if score is None or cut is None:
        return None
    return int(score >= cut)


def _bounds(metric: str) -> tuple[float | str, float | str, str]:
    if metric in V.CORRELATIONS or metric in ("correlation", "cohen_kappa"):
        return -1.0, 1.0, "coefficient"
    if metric == "runtime_seconds":
        return 0.0, "Infinity", "seconds"
    return 0.0, 1.0, "proportion"


# ------------------------------------------------------------------------------------------
# the record


def _model_info(rec: RunRecord, mid: str) -> eee.ModelInfo:
    m = rec.model
    proprietary = m.kind == "proprietary-llm"
    if rec.origin in ("evaluated", "reproduced"):
        deployment = "externally_managed" if proprietary else "self_deployed"
    else:
        deployment = "externally_managed" if proprietary else "unknown"
    info: eee.ModelInfo = {
        "name": m.name,
        "id": mid,
        "additional_details": {
            "deployment_type": deployment,
            "model_availability": eee.AVAILABILITY.get(m.kind, "unknown"),
            **_strings(
                {
                    "factboard_kind": m.kind,
                    "params": m.params,
                    "url": m.url,
                    "license": m.license,
                    "description": m.description,
                }
            ),
        },
    }
    if m.org:
        info["developer"] = m.org
    if rec.config.llm and ":" in rec.config.llm:
        info["inference_platform"] = rec.config.llm.split(":", 1)[0]
    return info


def _source_data(spec: BenchmarkSpec, version: str | None) -> eee.SourceData:
    details = _strings(
        {
            "factboard_benchmark": spec.name,
            "benchmark_version": version,
            "title": spec.title,
            "task": spec.task,
            "source": spec.source,
            "license": spec.license,
        }
    )
    if spec.hub_id:
        return {
            "dataset_name": spec.name,
            "source_type": "hf_dataset",
            "hf_repo": spec.hub_id,
            "additional_details": details,
        }
    if spec.source.startswith(("https://", "http://")):
        return {
            "dataset_name": spec.name,
            "source_type": "url",
            "url": [spec.source],
            "additional_details": details,
        }
    return {"dataset_name": spec.name, "source_type": "other", "additional_details": details}


def _generation_config(rec: RunRecord) -> eee.GenerationConfig | None:
    c = rec.config
    details = _strings(
        {
            "detector": c.detector,
            "checkpoint": c.checkpoint,
            "llm": c.llm,
            "prompt_id": c.prompt_id,
            **{k: v for k, v in sorted(c.extra.items())},
        }
    )
    out: eee.GenerationConfig = {}
    if c.temperature is not None:
        out["generation_args"] = {"temperature": c.temperature}
    if details:
        out["additional_details"] = details
    return out or None


def _result(
    rec: RunRecord, r: SliceResult, source: eee.SourceData, gen: eee.GenerationConfig | None
) -> eee.EvaluationResult:
    assert r.value is not None
    m = V.METRICS.find(r.metric)
    lo, hi, unit = _bounds(r.metric)
    t = rec.threshold
    params: dict[str, str | float | bool | None] = {"threshold_policy": t.policy}
    if t.threshold is not None:
        params["threshold"] = t.threshold
    if t.tuned_on:
        params["threshold_tuned_on"] = t.tuned_on
    if t.per_domain:
        params["per_domain_thresholds"] = json.dumps(t.per_domain, sort_keys=True)
    boot = rec.bootstrap or {}
    uncertainty: eee.Uncertainty = {"num_samples": r.n}
    if r.ci_low is not None and r.ci_high is not None:
        uncertainty["confidence_interval"] = {
            "lower": r.ci_low,
            "upper": r.ci_high,
            "confidence_level": float(boot.get("level", 0.95)),
            "method": f"{boot.get('method', 'percentile')} bootstrap over samples"
            + (f", stratified by {boot['stratified_by']}" if boot.get("stratified_by") else ""),
        }
        if boot.get("resamples"):
            uncertainty["num_bootstrap_samples"] = int(boot["resamples"])
    slice_name = "overall" if r.slice_kind == "overall" else f"{r.slice_kind}={r.slice_value}"
    out: eee.EvaluationResult = {
        "evaluation_result_id": result_id(r),
        "evaluation_name": f"{rec.benchmark}/{r.split}/{r.unit}/{slice_name}",
        "source_data": source,
        "evaluation_timestamp": rec.created_at,
        "metric_config": {
            "evaluation_description": (m.title if m else r.metric)
            + (f" ({V.slice_label(r.slice_kind)}: {r.slice_value})" if r.slice_value else ""),
            "metric_id": eee.metric_id(r.metric),
            "metric_name": V.metric_label(r.metric, r.grader),
            "metric_kind": V.EEE_KINDS.get(r.metric, r.metric),
            "metric_unit": unit,
            "metric_parameters": params,
            "lower_is_better": V.lower_is_better(r.metric),
            "score_type": "continuous",
            "min_score": lo,
            "max_score": hi,
            "additional_details": _strings(
                {
                    "factboard_metric": r.metric,
                    "split": r.split,
                    "unit": r.unit,
                    "slice_kind": r.slice_kind,
                    "slice_value": r.slice_value,
                    "grader": r.grader,
                    "coverage": ";".join(r.coverage) if r.coverage is not None else None,
                    "aggregation": r.aggregation,
                }
            ),
        },
        "score_details": {"score": r.value, "uncertainty": uncertainty},
    }
    if gen:
        out["generation_config"] = gen
    return out


def build_record(
    rec: RunRecord, spec: BenchmarkSpec, retrieved: str, samples_file: eee.SamplesPointer
) -> eee.Record:
    mid = model_id(rec)
    source = _source_data(spec, rec.benchmark_version)
    gen = _generation_config(rec)
    sub = rec.submission or {}
    status = verification.record_status(rec)
    origin_details = _strings(
        {
            "factboard_origin": rec.origin,
            "factboard_origin_meaning": V.ORIGIN_MEANINGS.get(rec.origin),
            "factboard_run_id": rec.run_id,
            # has FactBoard re-run what the numbers claim (evaluator.submissions.verification)
            "factboard_verification": status,
            "factboard_verification_meaning": verification.STATUSES[status],
            "factboard_verification_details": verification.details_of(sub) or None,
            "factboard_recipe": json.dumps(sub["recipe"]) if sub.get("recipe") else None,
            # an imported run names where it came from
            **{f"imported_{k}": v for k, v in sorted(sub.items()) if rec.origin == "imported"},
        }
    )
    return {
        "schema_version": eee.SCHEMA_VERSION,
        "evaluation_id": f"{rec.benchmark}/{mid}/{rec.run_id}",
        "evaluation_timestamp": rec.created_at,
        "retrieved_timestamp": retrieved,
        "source_metadata": {
            "source_name": "FactBoard",
            "source_type": "evaluation_run",
            "source_organization_name": "FactBoard",
            "evaluator_relationship": relationship(rec.origin, status),
            "additional_details": origin_details,
        },
        "model_info": _model_info(rec, mid),
        "eval_library": {
            "name": eee.LIBRARY,
            "version": _version(),
            # what the run's numbers were computed with, so that an import re-scores the same way
            "additional_details": {
                "factboard_benchmark": rec.benchmark,
                "factboard_benchmark_version": rec.benchmark_version,
                "factboard_run_id": rec.run_id,
                "factboard_created_at": rec.created_at,
                "factboard_model": json.dumps(rec.model.model_dump(mode="json")),
                "factboard_config": json.dumps(rec.config.model_dump(mode="json")),
                "factboard_threshold": json.dumps(rec.threshold.model_dump(mode="json")),
                "factboard_splits": json.dumps(rec.splits),
                "factboard_bootstrap": json.dumps(rec.bootstrap),
                "factboard_counts": json.dumps(rec.counts.model_dump(mode="json")),
            },
        },
        "evaluation_results": [
            _result(rec, r, source, gen) for r in rec.results if r.value is not None
        ],
        "detailed_evaluation_results": samples_file,
    }


def _version() -> str:
    from evaluator import __version__

    return __version__


# ------------------------------------------------------------------------------------------
# the samples file


def sample_reference(spec: BenchmarkSpec, s: dict[Any, Any]) -> list[str]:
    if spec.task == "correlation":
        h = _num(s.get("human_score"))
        return [eee.fmt_float(h)] if h is not None else []
    lab = _num(s.get("label"))
    return [LABEL_WORDS[int(lab)]] if lab is not None else []


def _sample_meta(s: dict[Any, Any]) -> dict[str, str]:
    return _strings(
        {
            "split": as_text(s.get("split")),
            "unit": as_text(s.get("unit")),
            "domain": as_text(s.get("domain")),
            "doc_id": as_text(s.get("doc_id")),
            "summary_id": as_text(s.get("summary_id")),
        }
    )


def sample_lines(
    rec: RunRecord,
    spec: BenchmarkSpec,
    predictions: pd.DataFrame,
    grades: pd.DataFrame | None,
    samples: pd.DataFrame,
    evaluation_id: str,
    mid: str,
) -> list[eee.InstanceLine]:
    """One line per prediction (every stored one, dev rows that tuned the threshold included),
    then one line per explanation grade."""
    by_id = {str(r["sample_id"]): r for r in samples.to_dict("records")}
    primary = {
        r.unit: result_id(r)
        for r in rec.results
        if r.metric == spec.primary_metric and r.slice_kind == "overall" and r.grader is None
    }
    scored_splits = set(rec.splits)
    correlation = spec.task == "correlation"
    lines: list[eee.InstanceLine] = []
    explanations: dict[str, str | None] = {}
    for p in predictions.to_dict("records"):
        sid = str(p["sample_id"])
        s = by_id.get(sid)
        if s is None:
            raise FactBoardError(
                f"run {rec.run_id}: sample {sid!r} is not in the ingested {rec.benchmark} "
                "(re-ingest the version the run was scored against)"
            )
        raw = as_text(s.get("summary")) or ""
        ref = sample_reference(spec, s)
        score, label = _num(p.get("score")), _num(p.get("label"))
        explanation, raw_output = as_text(p.get("explanation")), as_text(p.get("raw_output"))
        explanations[sid] = explanation
        final = final_label(score, label, s.get("domain"), rec.threshold)
        gold = _num(s.get("label"))
        if correlation:
            answer = eee.fmt_float(score) if score is not None else ""
            evaluation: eee.Evaluation = {
                "score": score if score is not None else 0.0,
                "is_correct": False,
            }
        else:
            answer = LABEL_WORDS[final] if final is not None else ""
            right = final is not None and gold is not None and final == int(gold)
            evaluation = {"score": 1.0 if right else 0.0, "is_correct": right}
        meta = _sample_meta(s) | _strings(
            {
                "fb_line": "prediction",
                "fb_score": eee.fmt_float(score) if score is not None else None,
                "fb_label": str(int(label)) if label is not None else None,
                "fb_final_label": str(final) if final is not None else None,
                "fb_explanation": explanation,
                "fb_raw_output": "output.raw[0]" if raw_output is not None else None,
            }
        )
        line: eee.InstanceLine = {
            "schema_version": eee.SCHEMA_VERSION,
            "evaluation_id": evaluation_id,
            "model_id": mid,
            "evaluation_name": rec.benchmark,
            "sample_id": sid,
            "sample_hash": eee.sample_hash(raw, ref),
            "interaction_type": "single_turn",
            "input": {"raw": raw, "reference": ref},
            "output": {"raw": [raw_output if raw_output is not None else (explanation or answer)]},
            "answer_attribution": [
                {
                    "turn_idx": 0,
                    "source": "output.raw",
                    "extracted_value": answer,
                    "extraction_method": EXTRACTION.get(rec.threshold.policy, rec.threshold.policy),
                    "is_terminal": True,
                }
            ],
            "evaluation": evaluation,
            "metadata": meta,
        }
        unit = as_text(s.get("unit"))
        if s.get("split") in scored_splits and unit in primary:
            line["evaluation_result_id"] = primary[unit]
        if answer == "":
            line["error"] = "no usable prediction"
        lines.append(line)
    for g in [] if grades is None else grades.to_dict("records"):
        lines.append(_grade_line(rec, g, by_id, explanations, evaluation_id, mid))
    return lines


def _grade_line(
    rec: RunRecord,
    g: dict[Any, Any],
    by_id: dict[str, dict[Any, Any]],
    explanations: dict[str, str | None],
    evaluation_id: str,
    mid: str,
) -> eee.InstanceLine:
    sid = str(g["sample_id"])
    s = by_id.get(sid, {})
    judge, protocol = str(g["judge"]), str(g["protocol"])
    grade = _num(g.get("grade"))
    raw = as_text(s.get("summary")) or ""
    ref = [x for x in [as_text(s.get("reference_explanation"))] if x]
    grader = f"{judge}/{protocol}"
    es = [
        result_id(r)
        for r in rec.results
        if r.metric == "explanation_score" and r.grader == grader and r.slice_kind == "overall"
    ]
    line: eee.InstanceLine = {
        "schema_version": eee.SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "model_id": mid,
        "evaluation_name": f"{rec.benchmark} explanation grades ({grader})",
        "sample_id": sid,
        "sample_hash": eee.sample_hash(raw, ref),
        "interaction_type": "single_turn",
        "input": {"raw": raw, "reference": ref},
        "output": {"raw": [explanations.get(sid) or ""]},
        "answer_attribution": [
            {
                "turn_idx": 0,
                "source": "output.raw",
                "extracted_value": eee.fmt_float(grade) if grade is not None else "",
                "extraction_method": "human" if protocol == "human" else "llm_judge",
                "is_terminal": True,
            }
        ],
        "evaluation": {"score": grade if grade is not None else 0.0, "is_correct": grade == 1.0},
        "metadata": _sample_meta(s)
        | _strings(
            {
                "fb_line": "grade",
                "fb_judge": judge,
                "fb_protocol": protocol,
                "fb_grade": eee.fmt_float(grade) if grade is not None else None,
                "fb_rationale": as_text(g.get("rationale")),
                "fb_judge_output": as_text(g.get("raw_output")),
            }
        ),
    }
    if es:
        line["evaluation_result_id"] = es[0]
    if grade is None:
        line["error"] = "unparsable grade"
    return line


# ------------------------------------------------------------------------------------------
# runs -> files


def _shape(obj: object, path: str = "") -> tuple[object, ...]:
    """The keys and value types of a JSON value, with the values of the instance schema's
    constrained fields (the interaction type, the turn index, non-negative numbers)."""
    if isinstance(obj, dict):
        return ("{", *(x for k in sorted(obj) for x in (k, _shape(obj[k], f"{path}/{k}"))), "}")
    if isinstance(obj, list):
        return ("[", *(_shape(v, path) for v in obj), "]")
    if path in ("/interaction_type", "/answer_attribution/turn_idx"):
        return (path, obj)
    if isinstance(obj, int | float) and not isinstance(obj, bool):
        return (type(obj).__name__, obj >= 0)
    return (type(obj).__name__,)


def run_files(run_id: str, root: Path | None = None, retrieved: str | None = None) -> EEEFiles:
    """The EEE record and samples file of one stored run, validated."""
    d = runs.find_run(run_id, root)
    rec = runs.read_record(d)
    spec = registry.get(rec.benchmark)
    samples = ingested.load_samples(rec.benchmark, root)
    predictions = runs.read_predictions(d)
    grades = runs.read_grades(d)
    mid = model_id(rec)
    developer, model = mid.split("/", 1)
    record_file = eee.record_path(rec.benchmark, developer, model, eee.record_uuid(rec.run_id))
    samples_file = eee.samples_path(record_file)
    evaluation_id = f"{rec.benchmark}/{mid}/{rec.run_id}"
    lines = sample_lines(rec, spec, predictions, grades, samples, evaluation_id, mid)
    validator = eee.instance_validator()
    buf = io.StringIO()
    checked: set[tuple[object, ...]] = set()
    for i, line in enumerate(lines, 1):
        # lines built here differ only in strings and numbers that the instance schema does
        # not constrain: validating one line of each shape validates them all
        key = _shape(line)
        if key not in checked:
            found = eee.problems(validator, line)
            if found:  # a bug in this module, never the user's
                raise eee.SchemaViolation(f"line {i} of the samples file of run {run_id}", found)
            checked.add(key)
        buf.write(json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n")
    body = buf.getvalue().encode("utf-8")
    pointer: eee.SamplesPointer = {
        "format": "jsonl",
        "file_path": samples_file,
        "hash_algorithm": "sha256",
        "checksum": hashlib.sha256(body).hexdigest(),
        "total_rows": len(lines),
    }
    record = build_record(rec, spec, retrieved or str(int(time.time())), pointer)
    eee.check_record(record, f"the record of run {run_id}")
    return EEEFiles(run_id, record_file, record, samples_file, body)


# ------------------------------------------------------------------------------------------
# published numbers -> aggregate-only records


def _reported_result(
    bench: str, row: dict[Any, Any], source: eee.SourceData
) -> eee.EvaluationResult:
    metric = str(row["metric"])
    m = V.METRICS.find(metric)
    lo, hi, unit = _bounds(metric)
    kind, value = str(row["slice_kind"]), str(row["slice_value"] or "")
    slice_name = "overall" if kind == "overall" else f"{kind}={value}"
    out: eee.EvaluationResult = {
        "evaluation_result_id": f"{row['split']}/{row['unit']}/{kind}={value}/{metric}",
        "evaluation_name": f"{bench}/{row['split']}/{row['unit']}/{slice_name}",
        "source_data": source,
        "metric_config": {
            "evaluation_description": m.title if m else metric,
            "metric_id": eee.metric_id(metric),
            "metric_name": V.metric_label(metric),
            "metric_kind": V.EEE_KINDS.get(metric, metric),
            "metric_unit": unit,
            "lower_is_better": V.lower_is_better(metric),
            "score_type": "continuous",
            "min_score": lo,
            "max_score": hi,
            "additional_details": _strings(
                {
                    "factboard_metric": metric,
                    "split": str(row["split"]),
                    "unit": str(row["unit"]),
                    "slice_kind": kind,
                    "slice_value": value,
                    "coverage": as_text(row.get("coverage")) or None,
                }
            ),
        },
        "score_details": {"score": float(row["value"])},
    }
    n = _num(row.get("n"))
    if n is not None:
        out["score_details"]["uncertainty"] = {"num_samples": int(n)}
    return out


def reported_files(
    benchmark: str | None = None, root: Path | None = None, retrieved: str | None = None
) -> dict[str, bytes]:
    """Published numbers (the reported CSVs the board shows beside the runs, in
    `<data root>/reported`) as aggregate-only EEE records of source type 'documentation': one
    per benchmark, model, source and configuration. Returns datastore path -> bytes, every
    record validated."""
    from evaluator.store.export import reported_rows

    # the numbers the board shows: <data root>/reported (explorer.store)
    df = reported_rows(root or layout.data_root(), benchmark)
    df = df[pd.to_numeric(df["value"], errors="coerce").notna()]
    retrieved = retrieved or str(int(time.time()))
    out: dict[str, bytes] = {}
    keys = ["benchmark", "model", "kind", "source", "note"]
    for (bench, model, kind, src, note), g in df.fillna({k: "" for k in keys}).groupby(
        keys, sort=True
    ):
        bench, model, kind, src, note = map(str, (bench, model, kind, src, note))
        spec = registry.get(bench) if bench in registry.names() else None
        source: eee.SourceData = (
            _source_data(spec, None) if spec else {"dataset_name": bench, "source_type": "other"}
        )
        uid = eee.record_uuid("\x1f".join(("reported", bench, model, src, note)))
        mid = f"unknown/{eee.path_part(model)}"
        record: eee.Record = {
            "schema_version": eee.SCHEMA_VERSION,
            "evaluation_id": f"{bench}/{mid}/reported-{uid}",
            "retrieved_timestamp": retrieved,
            "source_metadata": {
                "source_name": src,
                "source_type": "documentation",
                "source_organization_name": "FactBoard (transcribed)",
                "evaluator_relationship": "other",
                "additional_details": _strings(
                    {
                        "factboard_origin": "reported",
                        "factboard_origin_meaning": V.ORIGIN_MEANINGS["reported"],
                        "note": note or None,
                    }
                ),
            },
            "model_info": {
                "name": model,
                "id": mid,
                "additional_details": {
                    "deployment_type": "unknown",
                    "model_availability": eee.AVAILABILITY.get(kind, "unknown"),
                    "factboard_kind": kind,
                },
            },
            "eval_library": {"name": "unknown", "version": "unknown"},
            "evaluation_results": [
                _reported_result(bench, row, source) for row in g.to_dict("records")
            ],
        }
        eee.check_record(record, f"the record of {model} ({src}) on {bench}")
        rel = eee.record_path(bench, "unknown", model, uid)
        body = json.dumps(record, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
        out[rel] = body.encode("utf-8")
    return out


# ------------------------------------------------------------------------------------------
# writing


def run_ids(benchmark: str | None = None, root: Path | None = None) -> list[str]:
    """The runs the board shows (visible, not superseded), of one benchmark or all."""
    return [r.run_id for r in runs.list_runs(root, benchmark=benchmark).runs]


def _files(run_ids: Iterable[str], root: Path | None) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    retrieved = str(int(time.time()))
    for rid in dict.fromkeys(run_ids):
        out.update(run_files(rid, root, retrieved).files())
    return out


def write_files(files: dict[str, bytes], out_dir: Path) -> list[Path]:
    """Write datastore files under out_dir; returns the records (*.json) written."""
    written = []
    for rel, body in files.items():
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(body)
        tmp.replace(path)
        if rel.endswith(".json"):
            written.append(path)
    return written


def export_runs(run_ids: Sequence[str], out_dir: Path, root: Path | None = None) -> list[Path]:
    """Write the EEE files of the runs under out_dir (data/... layout); returns the records."""
    if not run_ids:
        raise FactBoardError("no run to export")
    # everything is built (and validated) before anything is written
    return write_files(_files(run_ids, root), out_dir)


def eee_zip(
    run_ids: Sequence[str], root: Path | None = None, reported_benchmark: str | None = None
) -> bytes:
    """The EEE files of the runs as a zip (data/... layout inside), with the published numbers
    of `reported_benchmark` when given: what a download button offers for what a page shows."""
    files = _files(run_ids, root)
    if reported_benchmark:
        files |= reported_files(reported_benchmark, root)
    if not files:
        raise FactBoardError("nothing to export")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for rel, body in files.items():
            z.writestr(rel, body)
    return buf.getvalue()
