"""LLM judges of explanations (EvalV1-EvalV4, SummExecEdit §5.1) and how good the judges are.

judge_run(run_id, judge, protocol)
    Grades every explanation the protocol applies to: the inconsistent summaries the model flagged
    (for a D&E run that is SummExecEdit's ES set; for an E|D run, where every inconsistent summary
    is "flagged", all of them). An empty explanation of a flagged summary is graded 0 without a
    judge call (it explains nothing). The grades are added to the run's earlier grades and stored
    in a NEW run with supersedes=<old run id> (runs are immutable), which the engine scores again,
    so ES and JS appear per judge/protocol on the board.

grade_the_grader(judge, protocols)
    Runs a judge over every explanation of the FactCC explanation study (benchmark
    "factcc_explanations": released runs carrying human grades, protocol "human") and measures
    its agreement with the humans per protocol: Pearson correlation and balanced accuracy as
    SummExecEdit Table 4 reports them (see `agreement`). Each released run is superseded by a
    new run whose grades.parquet holds both the human and the judge rows, and whose config.extra
    holds the agreement figures; the Explanations page shows them beside Table 4.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluator import scorer
from evaluator.benchmarks import registry
from evaluator.core import metrics as M
from evaluator.core.choices import DEFAULT_JUDGE_PROTOCOL
from evaluator.core.errors import FactBoardError
from evaluator.core.scoring import ScoreOptions
from evaluator.core.types import GRADE_COLUMNS, RunConfig, RunRecord
from evaluator.llm import prompts as P
from evaluator.llm.clients import ChatRequest, ClientIdentity, make_client, split_provider_model
from evaluator.llm.execute import Outcome, RetryPolicy, Tally, run_batch
from evaluator.llm.parsing import parse_grade
from evaluator.llm.records import (
    Agreement,
    AgreementRow,
    Estimate,
    GradeRow,
    JudgeEntry,
    JudgeReport,
    Usage,
)
from evaluator.llm.runner import MAX_ERRORS_KEPT, client_record, settings, usage_of
from evaluator.store import ingested, layout, runs

FIELD_HELP: dict[str, str] = {
    "document": "the source document",
    "summary": "the summary",
    "seed_summary": "the seed (unedited) summary",
    "reference_explanation": "a reference explanation of the inconsistency",
    "explanation": "the model's explanation",
}
NO_EXPLANATION = "no explanation given: graded 0 without asking the judge"
FACTCC = "factcc_explanations"
_NOT_FOR_JUDGES = ("kind", "org", "params")


class JudgeIncomplete(FactBoardError):
    """Some grade requests failed for good; raised instead of writing when asked to (the worker
    retries the job later, and the cache keeps what was already graded)."""

    def __init__(self, message: str, failed: int, total: int):
        self.failed = failed
        self.total = total
        super().__init__(message)


@dataclass(frozen=True)
class Target:
    """One explanation to grade."""

    run_id: str
    sample_id: str
    protocol: str
    values: dict[str, str]  # field -> text, for the judge prompt
    empty: bool  # no explanation: graded 0 without a call


# --------------------------------------------------------------------------------------------
# what to grade


def _protocol(protocol: str) -> str:
    P.judge_prompt(protocol)  # unknown protocols fail with the known ones
    return protocol


def _text(v: Any) -> str | None:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    s = str(v)
    return s if s.strip() else None


def targets_for(
    rec: RunRecord,
    predictions: pd.DataFrame,
    samples: pd.DataFrame,
    protocol: str,
    limit: int | None = None,
) -> list[Target]:
    """The explanations `protocol` grades in this run; FactBoardError naming the protocol and the
    field when an input it needs is missing."""
    _protocol(protocol)
    need = [f for f in P.PROTOCOL_FIELDS[protocol] if f != "explanation"]
    if "label" not in predictions.columns or "explanation" not in predictions.columns:
        raise FactBoardError(f"run {rec.run_id} has no labels or explanations to grade")
    inputs = sorted({f for fs in P.PROTOCOL_FIELDS.values() for f in fs} - {"explanation"})
    cols = ["sample_id", "label", *inputs]
    gold = samples[[c for c in dict.fromkeys(cols) if c in samples.columns]].rename(
        columns={"label": "gold"}
    )
    merged = predictions[["sample_id", "label", "explanation"]].merge(
        gold, on="sample_id", how="inner"
    )
    flagged = merged[(merged["gold"] == 0) & (merged["label"] == 0)]
    flagged = flagged.sort_values("sample_id", kind="stable")
    if flagged.empty:
        raise FactBoardError(
            f"run {rec.run_id} ({rec.benchmark}) flags no inconsistent summary: no explanation "
            f"for {protocol} to grade"
        )
    if limit is not None:
        flagged = flagged.head(limit)
    for f in need:
        if f not in flagged.columns:
            lacking = flagged["sample_id"].tolist()
        else:
            lacking = [
                s for s, v in zip(flagged["sample_id"], flagged[f], strict=True) if not _text(v)
            ]
        if lacking:
            raise FactBoardError(
                f"protocol {protocol} needs {f} ({FIELD_HELP.get(f, f)}), but {len(lacking)} of "
                f"{len(flagged)} explanations to grade in run {rec.run_id} (benchmark "
                f"{rec.benchmark}) have none, e.g. sample {lacking[0]!r}; protocols these "
                f"explanations support: {', '.join(supported_protocols(flagged)) or '(none)'}"
            )
    out = []
    for row in flagged.to_dict("records"):
        expl = _text(row.get("explanation"))
        values = {f: str(row[f]) for f in need}
        if expl is not None:
            values["explanation"] = expl
        out.append(Target(rec.run_id, str(row["sample_id"]), protocol, values, expl is None))
    return out


def supported_protocols(rows: pd.DataFrame) -> list[str]:
    """Protocols whose inputs every row (sample fields) has."""
    out = []
    for p, fields in P.PROTOCOL_FIELDS.items():
        need = [f for f in fields if f != "explanation"]
        if len(rows) and all(f in rows.columns and rows[f].map(_text).notna().all() for f in need):
            out.append(p)
    return out


# --------------------------------------------------------------------------------------------
# grading


@dataclass
class Graded:
    grades: pd.DataFrame  # GRADE_COLUMNS (+ run_id)
    reports: dict[tuple[str, str], GradingTally]  # (run_id, protocol) -> how it went
    outcomes: list[Outcome] = field(default_factory=list)


@dataclass(frozen=True)
class _Asked:
    """What a grading asked of whom: the client, the batch's tally and the engine's record."""

    client: ClientIdentity
    tally: Tally
    engine: Mapping[str, object] | None


def _grade(
    judge: str,
    targets: list[Target],
    *,
    concurrency: int,
    options: Mapping[str, Any] | None,
    progress: bool,
    root: Path | None,
    retry: RetryPolicy | None,
    on_progress: Any = None,
    engine: Any = None,
) -> tuple[Graded, _Asked]:
    bad = sorted(set(options or {}) & set(_NOT_FOR_JUDGES))
    if bad:
        raise FactBoardError(f"option {bad[0]!r} describes a detector; a judge takes none")
    cfg = settings(judge, options, root, retry)
    client = make_client(judge, cfg.client_options)
    asked = [t for t in targets if not t.empty]
    requests, tags = _judge_requests(asked, cfg.max_tokens)
    _, model = split_provider_model(judge)
    outcomes, tally = run_batch(
        client,
        requests,
        cache=cfg.cache,
        concurrency=concurrency,
        retry=cfg.retry,
        price=cfg.price,
        progress=progress,
        desc=f"judge {model}",
        on_progress=on_progress,
        engine=engine,
        client_spec=(judge, cfg.client_options),
    )
    rows, tallies = _grade_rows(judge, targets, asked, tags, outcomes)
    for t in tallies.values():
        t.usage = usage_of(t.outcomes, cfg.price)
    grades = pd.DataFrame(rows, columns=["run_id", *GRADE_COLUMNS])
    grades["grade"] = grades["grade"].astype(float)
    asked_of = _Asked(client_record(client), tally, engine.record() if engine is not None else None)
    return Graded(grades, tallies, outcomes), asked_of


def _judge_requests(
    asked: list[Target], max_tokens: int | None
) -> tuple[list[ChatRequest], list[str]]:
    """One request per explanation to grade, with the tag its reply's grade line must carry."""
    requests, tags = [], []
    for t in asked:
        prompt = P.judge_prompt(t.protocol)
        msg = P.render_judge(prompt, t.values)
        tags.append(msg.tag)
        requests.append(
            ChatRequest(
                user=msg.user,
                system=msg.system,
                temperature=0.0,
                max_tokens=max_tokens or prompt.max_tokens,
            )
        )
    return requests, tags


@dataclass
class GradingTally:
    """How the grading of one run under one protocol went (the run's judge report)."""

    targets: int = 0
    graded: int = 0
    unparsable: int = 0
    failed: int = 0
    no_explanation: int = 0
    unparsable_examples: list[dict[str, str]] = field(default_factory=list)
    failed_examples: list[dict[str, str]] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)  # the replies, for the usage
    usage: Usage | None = None  # tokens and cost of the replies, once graded

    def record(self) -> JudgeReport:
        """The report as the run records it, with the replies' usage."""
        return {
            "targets": self.targets,
            "graded": self.graded,
            "unparsable": self.unparsable,
            "failed": self.failed,
            "no_explanation": self.no_explanation,
            "unparsable_examples": self.unparsable_examples,
            "failed_examples": self.failed_examples,
            "usage": self.usage,
        }


def _grade_row(
    t: Target, judge: str, grade: float | None, rationale: str | None, raw: str | None
) -> GradeRow:
    return {
        "run_id": t.run_id,
        "sample_id": t.sample_id,
        "judge": judge,
        "protocol": t.protocol,
        "grade": grade,
        "rationale": rationale,
        "raw_output": raw,
    }


def _grade_rows(
    judge: str,
    targets: list[Target],
    asked: list[Target],
    tags: list[str],
    outcomes: list[Outcome],
) -> tuple[list[GradeRow], dict[tuple[str, str], GradingTally]]:
    """The grades table's rows (an empty explanation is graded 0 without asking; a reply's
    grade is parsed, an unparsable one stored as such) and each (run, protocol)'s tally."""
    rows: list[GradeRow] = []
    tallies: dict[tuple[str, str], GradingTally] = {}
    for t in targets:
        if t.empty:
            r = tallies.setdefault((t.run_id, t.protocol), GradingTally())
            r.targets += 1
            r.no_explanation += 1
            rows.append(_grade_row(t, judge, 0.0, NO_EXPLANATION, None))
    for t, tag, o in zip(asked, tags, outcomes, strict=True):
        r = tallies.setdefault((t.run_id, t.protocol), GradingTally())
        r.targets += 1
        r.outcomes.append(o)
        if o.response is None:
            r.failed += 1
            if len(r.failed_examples) < MAX_ERRORS_KEPT:
                r.failed_examples.append({"sample_id": t.sample_id, "error": str(o.error)})
            continue
        g = parse_grade(o.response.text, tag)
        if g.grade is None:
            r.unparsable += 1
            if len(r.unparsable_examples) < MAX_ERRORS_KEPT:
                r.unparsable_examples.append({"sample_id": t.sample_id, "problem": str(g.problem)})
        else:
            r.graded += 1
        why = g.rationale if g.grade is not None else f"unparsable: {g.problem}"
        rows.append(_grade_row(t, judge, g.grade, why, o.response.text))
    return rows, tallies


# --------------------------------------------------------------------------------------------
# writing the superseding run


def _engine(engine: Any) -> Any:
    from evaluator.runner import Engine

    return (engine or Engine()).check()


def _score_options(rec: RunRecord) -> ScoreOptions:
    th = rec.threshold
    policy = {"none": "auto"}.get(th.policy, th.policy)
    boot = rec.bootstrap or {}
    return ScoreOptions(
        policy=policy,
        threshold=th.threshold if policy == "fixed" else None,
        splits=tuple(rec.splits) if rec.splits else None,
        resamples=int(boot.get("resamples", 1000)),
        seed=int(boot.get("seed", 0)),
        level=float(boot.get("level", 0.95)),
        labels_given=bool(rec.config.extra.get("labels_given")),
    )


def successor_of(run_id: str, root: Path | None = None) -> str | None:
    for r in runs.list_runs(root, include_hidden=True, include_superseded=True).runs:
        if r.supersedes == run_id:
            return r.run_id
    return None


def _load(run_id: str, root: Path | None) -> tuple[RunRecord, pd.DataFrame, pd.DataFrame | None]:
    d = runs.find_run(run_id, root)
    rec = runs.read_record(d)
    later = successor_of(run_id, root)
    if later is not None:
        raise FactBoardError(
            f"run {run_id} is superseded by {later}; judge the newest run of the chain ({later})"
        )
    return rec, runs.read_predictions(d), runs.read_grades(d)


def _samples_for(rec: RunRecord, root: Path | None) -> pd.DataFrame:
    meta = ingested.load_meta(rec.benchmark, root)
    if meta.get("version") != rec.benchmark_version:
        raise FactBoardError(
            f"run {rec.run_id} was scored against {rec.benchmark} version "
            f"{rec.benchmark_version}, but version {meta.get('version')} is ingested now; "
            "re-run the model on the current version"
        )
    return ingested.load_samples(rec.benchmark, root)


def write_superseding(
    rec: RunRecord,
    predictions: pd.DataFrame,
    grades: pd.DataFrame,
    samples: pd.DataFrame,
    extra_update: Mapping[str, object],
    root: Path | None,
    run_id: str | None = None,
) -> Path:
    """Score the run again with `grades` and store it as a new run superseding `rec`."""
    spec = registry.get(rec.benchmark)
    from evaluator.core.scoring import score

    scored = score(spec, samples, predictions, _score_options(rec), grades)
    scored.counts = scored.counts.model_copy(update={"failed": rec.counts.failed})
    config = RunConfig(
        detector=rec.config.detector,
        checkpoint=rec.config.checkpoint,
        llm=rec.config.llm,
        prompt_id=rec.config.prompt_id,
        temperature=rec.config.temperature,
        extra={**rec.config.extra, **extra_update},
    )
    new = scorer.build_record(
        spec,
        rec.benchmark_version,
        scored,
        rec.model,
        rec.origin,
        config,
        submission=rec.submission,
        run_id=run_id or runs.new_run_id(rec.benchmark, rec.model.name),
        supersedes=rec.run_id,
    )
    if rec.hidden:
        new = new.model_copy(update={"hidden": True})
    return runs.write_run(new, predictions, grades, root, scored.final_labels)


def _merge_grades(old: pd.DataFrame | None, new: pd.DataFrame) -> pd.DataFrame:
    """The run's earlier grades, minus any earlier rows of the same judge and protocol."""
    new = new[list(GRADE_COLUMNS)]
    if old is None or old.empty:
        return new.reset_index(drop=True)
    keys = set(zip(new["judge"], new["protocol"], strict=True))
    keep = [(j, p) not in keys for j, p in zip(old["judge"], old["protocol"], strict=True)]
    return pd.concat([old[keep][list(GRADE_COLUMNS)], new], ignore_index=True)


def _judge_entry(
    judge: str, protocol: str, report: GradingTally, asked: _Asked, limit: int | None
) -> JudgeEntry:
    entry: JudgeEntry = {
        "judge": judge,
        "protocol": protocol,
        "prompt": P.judge_prompt(protocol).record(),
        "client": asked.client,
        "graded_at": runs.now_iso(),
        "temperature": 0.0,
        "limit": limit,
        **report.record(),
    }
    if asked.engine is not None:
        entry["engine"] = asked.engine
    return entry


def judge_run(
    run_id: str,
    judge: str,
    protocol: str = DEFAULT_JUDGE_PROTOCOL,
    *,
    concurrency: int = 8,
    options: Mapping[str, Any] | None = None,
    progress: bool = False,
    root: Path | None = None,
    retry: RetryPolicy | None = None,
    limit: int | None = None,
    new_run_id: str | None = None,
    fail_on_failed: bool = False,
    on_progress: Any = None,
    engine: Any = None,
) -> Path:
    """Grade a run's explanations with `judge` under `protocol`; returns the new run's folder.

    new_run_id: the id of the run to write (the worker derives it from the job id); when that run
    already exists it is returned as it is. fail_on_failed: raise JudgeIncomplete instead of
    writing when some grade requests failed for good. engine: an evaluator.runner.Engine
    (default local): with `ray`, the grade requests are sent from Ray tasks."""
    engine = _engine(engine)
    _protocol(protocol)
    split_provider_model(judge)
    done = None if new_run_id is None else runs.existing_run(new_run_id, root)
    if done is not None:
        return done
    rec, preds, old_grades = _load(run_id, root)
    samples = _samples_for(rec, root)
    targets = targets_for(rec, preds, samples, protocol, limit)
    graded, asked = _grade(
        judge,
        targets,
        concurrency=concurrency,
        options=options,
        progress=progress,
        root=root,
        retry=retry,
        on_progress=on_progress,
        engine=engine,
    )
    report = graded.reports[(rec.run_id, protocol)]
    if fail_on_failed and report.failed:
        first = (report.failed_examples or [{}])[0]
        raise JudgeIncomplete(
            f"{report.failed} of {report.targets} grade requests to {judge} failed (e.g. "
            f"{first}); a retry sends only those (the others are cached)",
            report.failed,
            report.targets,
        )
    if report.graded == 0 and report.no_explanation == 0:
        first = (report.failed_examples or report.unparsable_examples or [{}])[0]
        raise FactBoardError(
            f"{judge} graded none of the {report.targets} explanations ({report.failed} "
            f"failed, {report.unparsable} unparsable; e.g. {first}); nothing was written"
        )
    entry = _judge_entry(judge, protocol, report, asked, limit)
    history = list(rec.config.extra.get("judges", []))
    grades = _merge_grades(old_grades, graded.grades)
    path = write_superseding(
        rec, preds, grades, samples, {"judges": [*history, entry]}, root, new_run_id
    )
    if progress:
        print(
            f"{judge} {protocol}: {report.graded} graded, {report.unparsable} unparsable, "
            f"{report.failed} failed, {report.no_explanation} without explanation "
            f"(graded 0); {asked.tally.postfix()} -> {path.name} (supersedes {rec.run_id})",
            file=sys.stderr,
        )
    return path


# --------------------------------------------------------------------------------------------
# grading the grader


def _ci(stat: Any, n: int, resamples: int, seed: int) -> Estimate:
    try:
        est = M.bootstrap_ci(stat, n, resamples=resamples, seed=seed)
    except (ValueError, FloatingPointError):
        return {"value": None, "ci_low": None, "ci_high": None}

    def f(x: float) -> float | None:
        return float(x) if math.isfinite(x) else None

    return {"value": f(est.value), "ci_low": f(est.ci_low), "ci_high": f(est.ci_high)}


def agreement(
    human: Sequence[float] | np.ndarray,
    judge: Sequence[float] | np.ndarray,
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> Agreement:
    """Agreement of judge grades with human grades over the same explanations.

    - pearson: Pearson correlation of the grades (1 / 0.5 / 0); Table 4's "Correlation".
    - balanced_accuracy: the three grades taken as classes, the mean over the classes humans used
      of the judge's recall of that class (scikit-learn's balanced_accuracy_score). Table 4 does
      not say how it computes BAcc; this is the reading its numbers support: several judges with
      a positive correlation have BAcc below 0.5 (claude3-haiku V1: r 0.076, BAcc 0.385;
      gpt3.5-turbo V1: r 0.103, BAcc 0.375), impossible for a better-than-chance binary BAcc (chance
      0.5) but expected with three classes (chance 1/3).
    - balanced_accuracy_binary: "entirely correct" (1) against the rest, for comparison.
    - cohen_kappa and exact_agreement over the three grades.
    """
    h = np.asarray(human, dtype=float)
    j = np.asarray(judge, dtype=float)
    if h.shape != j.shape:
        raise FactBoardError(f"{len(h)} human grades but {len(j)} judge grades")
    ok = ~(np.isnan(h) | np.isnan(j))
    h, j = h[ok], j[ok]
    n = len(h)
    out: Agreement = {"n": n, "pearson": None, "balanced_accuracy": None}
    if n == 0:
        return out
    both_vary = len(np.unique(h)) > 1 and len(np.unique(j)) > 1
    out["pearson"] = (
        _ci(lambda W: M.pearson_w(W, j, h), n, resamples, seed)
        if n >= 3 and both_vary
        else {"value": None, "ci_low": None, "ci_high": None}
    )
    out["balanced_accuracy"] = _ci(
        lambda W: M.balanced_accuracy_multiclass_w(W, h, j), n, resamples, seed
    )
    hb, jb = (h == 1).astype(int), (j == 1).astype(int)
    out["balanced_accuracy_binary"] = (
        float(M.balanced_accuracy(hb, jb)) if 0 < hb.sum() < n else None
    )
    k = M.cohen_kappa(list(h), list(j))
    out["cohen_kappa"] = k if math.isfinite(k) else None
    out["exact_agreement"] = float((h == j).mean())
    out["human_grade_counts"] = {str(g): int((h == g).sum()) for g in P.GRADES}
    out["judge_grade_counts"] = {str(g): int((j == g).sum()) for g in P.GRADES}
    return out


@dataclass
class GraderReport:
    paths: list[Path]
    table: pd.DataFrame  # one row per (judge, protocol): pooled agreement over every run


def _human_runs(
    benchmark: str, root: Path | None
) -> list[tuple[RunRecord, pd.DataFrame, pd.DataFrame]]:
    out = []
    for rec in runs.list_runs(root, benchmark=benchmark).runs:
        d = runs.find_run(rec.run_id, root)
        g = runs.read_grades(d)
        if g is None or not (g["protocol"] == "human").any():
            continue
        out.append((rec, runs.read_predictions(d), g))
    return out


def _check_answered(judge: str, graded: Graded, targets: list[Target]) -> None:
    """A judge that answered no request writes nothing, and says so with a failure."""
    answered = sum(r.graded + r.unparsable for r in graded.reports.values())
    if answered == 0 and any(not t.empty for t in targets):
        first: dict[str, str] = next(
            (r.failed_examples[0] for r in graded.reports.values() if r.failed_examples), {}
        )
        raise FactBoardError(
            f"{judge} answered none of the grade requests (e.g. {first}); nothing was written"
        )


def _pooled(ag: Agreement, reps: list[GradingTally], benchmark: str) -> Agreement:
    """A protocol's agreement pooled over the study's runs, with what was graded."""
    ag.update(
        {
            "scope": f"pooled over {len(reps)} runs of {benchmark}",
            "explanations": int(sum(r.targets for r in reps)),
            "unparsable": int(sum(r.unparsable for r in reps)),
            "failed": int(sum(r.failed for r in reps)),
            "no_explanation_excluded": int(sum(r.no_explanation for r in reps)),
        }
    )
    return ag


def _agreement_row(judge: str, protocol: str, ag: Agreement) -> AgreementRow:
    """One row of the grader table: a judge's pooled agreement under one protocol."""
    return {
        "judge": judge,
        "protocol": protocol,
        "n": ag["n"],
        "pearson": ag["pearson"]["value"] if ag["pearson"] else None,
        "balanced_accuracy": ag["balanced_accuracy"]["value"] if ag["balanced_accuracy"] else None,
        "balanced_accuracy_binary": ag.get("balanced_accuracy_binary"),
        "cohen_kappa": ag.get("cohen_kappa"),
        "unparsable": ag.get("unparsable"),
        "failed": ag.get("failed"),
    }


def grade_the_grader(
    judge: str,
    protocols: Sequence[str],
    *,
    benchmark: str = FACTCC,
    concurrency: int = 8,
    options: Mapping[str, Any] | None = None,
    progress: bool = False,
    root: Path | None = None,
    retry: RetryPolicy | None = None,
    limit: int | None = None,
    resamples: int = 1000,
    seed: int = 0,
    engine: Any = None,
) -> GraderReport:
    """Judge every human-graded explanation of `benchmark` under each protocol; store the
    grades in runs superseding the released ones, with the judge's agreement with the humans.

    limit: grade only the first N explanations of each run (a smoke run).
    engine: an evaluator.runner.Engine (default local), as for judge_run."""
    engine = _engine(engine)
    protocols = list(dict.fromkeys(protocols))
    if not protocols:
        raise FactBoardError("give at least one protocol (EvalV1..EvalV4)")
    for p in protocols:
        _protocol(p)
    split_provider_model(judge)
    registry.get(benchmark)
    found = _human_runs(benchmark, root)
    if not found:
        raise FactBoardError(
            f"no run of {benchmark} carries human grades; ingest the study first: python -m "
            f"evaluator ingest {benchmark} --from ../shared/benchmarks/summedits"
        )
    samples = _samples_for(found[0][0], root)
    targets: list[Target] = []
    for rec, preds, _ in found:
        if rec.benchmark_version != found[0][0].benchmark_version:
            _samples_for(rec, root)  # raises, naming the run
        for p in protocols:
            targets.extend(targets_for(rec, preds, samples, p, limit))
    graded, asked_of = _grade(
        judge,
        targets,
        concurrency=concurrency,
        options=options,
        progress=progress,
        root=root,
        retry=retry,
        engine=engine,
    )
    _check_answered(judge, graded, targets)
    asked = graded.grades[graded.grades["rationale"] != NO_EXPLANATION]
    human = pd.concat(
        [g[g["protocol"] == "human"].assign(run_id=rec.run_id) for rec, _, g in found],
        ignore_index=True,
    )
    hmap = human.drop_duplicates(["run_id", "sample_id"], keep="last").set_index(
        ["run_id", "sample_id"]
    )["grade"]

    def pairs(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        idx = pd.MultiIndex.from_arrays([frame["run_id"], frame["sample_id"]])
        return hmap.reindex(idx).to_numpy(float), frame["grade"].to_numpy(float)

    rows: list[AgreementRow] = []
    pooled: dict[str, Agreement] = {}
    for p in protocols:
        h, j = pairs(asked[asked["protocol"] == p])
        reps = [graded.reports[(rec.run_id, p)] for rec, _, _ in found]
        pooled[p] = _pooled(agreement(h, j, resamples=resamples, seed=seed), reps, benchmark)
        rows.append(_agreement_row(judge, p, pooled[p]))
    written = []
    for rec, preds, old in found:
        mine = graded.grades[graded.grades["run_id"] == rec.run_id]
        per_run = {}
        entries = []
        for p in protocols:
            sel = asked[(asked["run_id"] == rec.run_id) & (asked["protocol"] == p)]
            h, j = pairs(sel)
            per_run[p] = agreement(h, j, resamples=resamples, seed=seed)
            entries.append(_judge_entry(judge, p, graded.reports[(rec.run_id, p)], asked_of, limit))
        prev = dict(rec.config.extra.get("judge_agreement", {}))
        prev[judge] = {p: {"pooled": pooled[p], "this_run": per_run[p]} for p in protocols}
        update = {
            "judges": [*rec.config.extra.get("judges", []), *entries],
            "judge_agreement": prev,
        }
        written.append(
            write_superseding(rec, preds, _merge_grades(old, mine), samples, update, root)
        )
    table = pd.DataFrame(rows)
    if progress:
        print(f"{asked_of.tally.postfix()}; {len(written)} runs written", file=sys.stderr)
    return GraderReport(written, table)


def reported_table4() -> pd.DataFrame:
    """SummExecEdit Table 4 as transcribed (judge, protocol, metric, value)."""
    f = layout.reported_dir() / "summexecedit_paper.csv"
    if not f.is_file():
        return pd.DataFrame(columns=["judge", "protocol", "metric", "value", "source"])
    df = pd.read_csv(f)
    df = df[df["note"].fillna("").str.contains("role=judge")]
    proto = df["note"].str.extract(r"protocol=(EvalV\d)")[0]
    return pd.DataFrame(
        {
            "judge": df["model"].to_numpy(),
            "protocol": proto.to_numpy(),
            "metric": df["metric"].to_numpy(),
            "value": df["value"].to_numpy(),
            "source": df["source"].to_numpy(),
        }
    ).reset_index(drop=True)
