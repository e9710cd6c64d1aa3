"""Bring your own detector: `evaluate(detector, benchmark)` scores any `score(documents,
summaries)` on an ingested benchmark the way FactBoard scores its own detectors.

    import evaluator

    def score(documents, summaries):          # higher = more consistent (or labels 0/1)
        return [my_model(d, s) for d, s in zip(documents, summaries)]

    result = evaluator.evaluate(score, "summedits", split="test")
    print(result.table())                     # every slice's metrics with their 95% CIs
    result.write_predictions("predictions.csv")  # the submission file format

It is the detector runner's own path (evaluator.detectors.runner.predict_detector): the same
samples (the split asked for, and dev when a threshold is tuned there), the same blocks, progress
bar, checks of the reply, and the engine's scorer (evaluator.core.scoring). Optionally the result
is stored as a run on the local board (`store=True`, origin "evaluated"), exported as an Every
Eval Ever record (`eee_dir`, from the stored run), or submitted through the submission service
(`submit=SubmissionMeta(...)`), which validates and scores the prediction file like any upload;
a detector that an installed package publishes (`factboard.detectors`) is submitted with its
recipe (package, version, entry point: `package_recipe`), so FactBoard can reproduce it.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from evaluator.core.errors import FactBoardError
from evaluator.core.scoring import Scored, ScoreOptions, score
from evaluator.core.types import ModelInfo, RunConfig, SliceResult

if TYPE_CHECKING:
    from evaluator.detectors.runner import DetectorPredictions
    from evaluator.hub.inbox import Opened
    from evaluator.submissions.service import SubmissionMeta, SubmitResult

# the columns of results.table()
TABLE_COLUMNS = [
    "split",
    "unit",
    "slice_kind",
    "slice_value",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "n",
]


@dataclass
class Evaluation:
    """What `evaluate` returns: the predictions (the submission format's columns), the scored
    result (per-slice values with 95% CIs) and where anything was written."""

    benchmark: str
    benchmark_version: str
    model: ModelInfo
    config: RunConfig
    predictions: pd.DataFrame
    scored: Scored
    run_path: Path | None = None
    run_id: str | None = None
    eee_files: list[Path] = field(default_factory=list)
    # when submitted: through this machine's service, or as a pull request to a hosted board
    submission: SubmitResult | Opened | None = None

    @property
    def results(self) -> list[SliceResult]:
        return list(self.scored.results)

    def table(self) -> pd.DataFrame:
        """One row per slice and metric: value, 95% CI and n."""
        rows = [r.model_dump() for r in self.scored.results]
        return pd.DataFrame(rows, columns=TABLE_COLUMNS) if rows else pd.DataFrame()

    def value(self, metric: str, slice_kind: str = "overall", slice_value: str = "") -> float:
        """One number, e.g. value("balanced_accuracy") or value("balanced_accuracy", "domain",
        "news"); the benchmark's finest unit's value where it has two."""
        for r in self.scored.results:
            if (r.metric, r.slice_kind, r.slice_value) == (metric, slice_kind, slice_value):
                if r.value is None:
                    break
                return float(r.value)
        raise FactBoardError(f"no value of {metric} on {slice_kind} {slice_value!r}".rstrip())

    def prediction_file(self, fmt: str = "csv") -> bytes:
        """The predictions as a submission file (evaluator/submissions/validation.py's format:
        sample_id with score, or label where the detector gave labels), CSV or JSONL."""
        cols = [c for c in ("sample_id", "label", "score") if c in self.predictions]
        frame = self.predictions[cols]
        if fmt == "csv":
            return frame.to_csv(index=False).encode("utf-8")
        if fmt == "jsonl":
            buf = io.StringIO()
            frame.to_json(buf, orient="records", lines=True, force_ascii=False)
            return buf.getvalue().encode("utf-8")
        raise FactBoardError(f"unknown prediction file format {fmt!r}; formats: csv, jsonl")

    def write_predictions(self, path: str | Path) -> Path:
        """Write the prediction file (.csv, or .jsonl); returns its path."""
        p = Path(path)
        fmt = "jsonl" if p.suffix.lower() in (".jsonl", ".json") else "csv"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(self.prediction_file(fmt))
        return p


def evaluate(
    detector: Any,
    benchmark: str,
    split: str | Sequence[str] | None = "test",
    *,
    name: str | None = None,
    model: ModelInfo | None = None,
    labels: bool | None = None,
    threshold: float | None = None,
    unit: str | None = None,
    limit: int | None = None,
    batch_size: int | None = None,
    progress: bool = True,
    resamples: int = 1000,
    root: Path | None = None,
    predictions_file: str | Path | None = None,
    store: bool = False,
    eee_dir: str | Path | None = None,
    submit: SubmissionMeta | Mapping[str, object] | None = None,
    submissions_root: Path | None = None,
    hub: str | None = None,
) -> Evaluation:
    """Score `detector` on the ingested `benchmark` and return the per-slice results with CIs.

    detector: a function `score(documents, summaries)` returning one number per pair (higher =
        more consistent) or one label (1/True consistent, 0/False not); or an object with such
        a `score` method.
    split: the split(s) the numbers are on ("test"; None: the benchmark's default). Scores are
        tuned to labels on dev when the benchmark has a dev split, so dev is scored too.
    name: the model's name on the board (default: the function's or class's name); model: the
        whole ModelInfo instead (kind, org, params, url).
    labels: True/False to say whether the values are labels or scores (default: labels when
        every value is 0/1 or a bool).
    threshold: a fixed threshold on the scores instead of one tuned on dev; unit: which unit
        to score ("summary" or "sentence" where a benchmark has both).
    limit: the first `limit` samples of each split (a smoke run); batch_size: pairs per call of
        the detector (default 256: FactBoard's block); progress: the progress bar on stderr.
    predictions_file: write the prediction file there (.csv or .jsonl).
    store: store the result as a run on the local board (origin "evaluated").
    eee_dir: export the stored run (store is implied) as an Every Eval Ever record there.
    submit: a SubmissionMeta (or a dict of its fields): send the prediction file through the
        submission service (validated, quota-checked and scored like an upload).
    hub: a hosted board's results repo ("org/name"; or a "hub" key in the submit dict): the
        submission goes there instead, as a pull request opened with $HF_TOKEN (any Hub user's
        token); `submission` is then the pull request (evaluator.hub.inbox.Opened), and the
        board comments its outcome there (`python -m evaluator submit --status N --hub REPO`).
    """
    if hub and submit is None:
        raise FactBoardError("hub= names the board to submit to: give submit= too")
    p = _predict(
        detector,
        benchmark,
        split,
        name=name,
        model=model,
        labels=labels,
        threshold=threshold,
        unit=unit,
        limit=limit,
        batch_size=batch_size,
        progress=progress,
        root=root,
    )
    out = _score(p, benchmark, model, resamples)
    if predictions_file is not None:
        out.write_predictions(predictions_file)
    if store or eee_dir is not None:
        _store(out, p, root)
    if eee_dir is not None:
        from evaluator.interop.export import export_runs

        out.eee_files = export_runs([str(out.run_id)], Path(eee_dir), root)
    if submit is not None:
        from evaluator.submissions.service import submit as send

        meta, hub = _submission_meta(submit, detector, benchmark, hub)
        if hub:
            from evaluator.hub.inbox import open_submission

            out.submission = open_submission(
                out.prediction_file("csv"), "predictions.csv", meta, hub
            )
            return out
        out.submission = send(
            out.prediction_file("csv"),
            "predictions.csv",
            meta,
            data_root=root,
            submissions_root=submissions_root,
            resamples=resamples,
        )
    return out


def _predict(
    detector: Any,
    benchmark: str,
    split: str | Sequence[str] | None,
    *,
    name: str | None,
    model: ModelInfo | None,
    labels: bool | None,
    threshold: float | None,
    unit: str | None,
    limit: int | None,
    batch_size: int | None,
    progress: bool,
    root: Path | None,
) -> DetectorPredictions:
    """The caller's detector through the detector runner's path: its predictions on the
    samples asked for (and dev where a threshold is tuned there), never resumed from
    checkpoints."""
    from evaluator import runner
    from evaluator.detectors.custom import CallableDetector, name_of
    from evaluator.detectors.runner import predict_detector

    det = CallableDetector(detector, name, labels)
    shown = name or (model.name if model else name_of(detector))
    options: dict[str, object] = {}
    if threshold is not None:
        options["threshold"] = threshold
    if unit is not None:
        options["unit"] = unit
    splits = [split] if isinstance(split, str) else (list(split) if split else None)
    engine = runner.Engine(block_size=batch_size or runner.DEFAULT_BLOCK_SIZE)
    p = predict_detector(
        f"python:{_qualified(detector)}"[:120],
        benchmark,
        splits=splits,
        limit=limit,
        model_name=shown,
        options=options,
        progress=progress,
        root=root,
        engine=engine,
        detector=det,
    )
    p.checkpoints.clear()  # a caller's detector is never resumed from checkpoints
    return p


def _score(
    p: DetectorPredictions, benchmark: str, model: ModelInfo | None, resamples: int
) -> Evaluation:
    """The predictions scored with the threshold policy the runner chose (labels where the
    detector gave labels), as an Evaluation."""
    opts = ScoreOptions(
        policy=p.options.policy,
        threshold=p.options.threshold,
        splits=p.options.splits,
        resamples=resamples,
    )
    extra = {**p.config.extra, "interface": "evaluator.evaluate"}
    config = p.config.model_copy(update={"extra": extra})
    scored = score(p.inputs.spec, p.inputs.samples, p.predictions, opts)
    return Evaluation(
        benchmark,
        p.inputs.version,
        model or p.model,
        config,
        p.predictions,
        scored,
    )


def _store(out: Evaluation, p: DetectorPredictions, root: Path | None) -> None:
    """The evaluation written as a run on the local board (origin "evaluated")."""
    from evaluator import scorer
    from evaluator.store import runs

    record = scorer.build_record(
        p.inputs.spec, out.benchmark_version, out.scored, out.model, "evaluated", out.config
    )
    out.run_path = runs.write_run(record, out.predictions, None, root, out.scored.final_labels)
    out.run_id = record.run_id


def _submission_meta(
    submit: object, detector: Any, benchmark: str, hub: str | None
) -> tuple[SubmissionMeta, str | None]:
    """What `submit=` says, as a SubmissionMeta, with a packaged detector's recipe where it
    gives none (it must name the benchmark evaluated), and the hosted board's results repo
    it goes to (`hub=`, or the dict's "hub" key; None: this machine's service)."""
    from dataclasses import replace

    from evaluator.submissions.service import SubmissionMeta

    if isinstance(submit, SubmissionMeta):
        meta = submit
    elif isinstance(submit, Mapping):
        fields = {str(k): v for k, v in submit.items() if k != "hub"}
        given = submit.get("hub")
        if given is not None and not isinstance(given, str):
            raise FactBoardError("submit['hub'] is a results repo, 'owner/name'")
        hub = hub or given
        meta = SubmissionMeta(**fields)
    else:
        raise FactBoardError(
            f"submit= takes a SubmissionMeta or a dict of its fields, not {type(submit).__name__}"
        )
    if meta.recipe is None:  # a packaged detector's recipe says itself
        meta = replace(meta, recipe=package_recipe(detector))
    if meta.benchmark != benchmark:
        raise FactBoardError(
            f"the submission names benchmark {meta.benchmark!r}, the evaluation {benchmark!r}"
        )
    return meta, hub


def package_recipe(detector: Any) -> dict[str, Any] | None:
    """The recipe of a detector that an installed package publishes through a
    `factboard.detectors` entry point (the same function or class): the entry point's name,
    the package and its version; None for any other callable (its submission is
    self-reported unless a recipe is given)."""
    from evaluator.detectors.registry import DETECTORS

    obj = (
        detector if hasattr(detector, "__qualname__") else type(detector)
    )  # an instance: its class
    where = f"{getattr(obj, '__module__', '')}:{getattr(obj, '__qualname__', '')}"
    DETECTORS.names()  # scans the entry points
    for name, pkg in DETECTORS.packages.items():
        if pkg.get("entry_point", "").partition(" = ")[2] == where and pkg.get("version"):
            return {"package": pkg["name"], "version": pkg["version"], "detector": name}
    return None


def _qualified(detector: Any) -> str:
    """module.name of a function, or of an object's class."""
    target = detector if callable(detector) and not hasattr(detector, "score") else detector
    obj = target if hasattr(target, "__qualname__") else type(target)
    module = getattr(obj, "__module__", "") or ""
    qual = getattr(obj, "__qualname__", "") or type(obj).__name__
    return f"{module}.{qual}" if module and module != "__main__" else qual


__all__ = ["Evaluation", "evaluate", "package_recipe"]
