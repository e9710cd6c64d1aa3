"""Samples + predictions -> per-slice results with 95% bootstrap CIs (docs/ARCHITECTURE.md).

One entry point, `score`, used by the CLI, the submit page, the ingest of released runs and the
evaluator. Scores become labels by the threshold policy (stored in the run); every slice the
benchmark declares gets its metrics; sentence predictions roll up to summaries. The final labels
it scored with come back in `Scored.final_labels` and are stored with the run; `final_labels`
makes the same table again from a stored run's predictions and threshold (`labels_from_threshold`
is the one rule for turning a stored threshold into labels).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evaluator.core import metrics as M
from evaluator.core.choices import THRESHOLD_POLICIES
from evaluator.core.errors import ScoringError
from evaluator.core.slice_metrics import (
    SliceContext,
    correlation_metrics,
    detection_metrics,
    evaluate,
    roc_auc_results,
)
from evaluator.core.slices import ScoringSpec, slice_members
from evaluator.core.slices import correlation_control as correlation_control
from evaluator.core.slices import slice_masks as slice_masks
from evaluator.core.types import LABEL_COLUMNS, Counts, SliceResult, ThresholdInfo
from evaluator.core.vocabulary import MEAN_OVER_DOMAINS as MEAN_OVER_DOMAINS


@dataclass(frozen=True)
class ScoreOptions:
    policy: str = "auto"  # one of THRESHOLD_POLICIES
    threshold: float | None = None  # for policy "fixed"
    splits: tuple[str, ...] | None = None  # None: "test" when the benchmark has a dev split
    resamples: int = 1000
    seed: int = 0
    level: float = 0.95
    # the labels were given to the model, not predicted by it (SummExecEdit's E|D prompt): only
    # the explanation metrics measure the run
    labels_given: bool = False
    # point values only (a run's numbers checked, evaluator.verify): the detection and
    # correlation metrics draw no resample and their CIs are the values themselves
    point_only: bool = False

    def __post_init__(self) -> None:
        if self.policy not in THRESHOLD_POLICIES:
            raise ScoringError(
                f"unknown threshold policy {self.policy!r}; known: {', '.join(THRESHOLD_POLICIES)}"
            )
        if self.policy == "fixed" and (self.threshold is None or not np.isfinite(self.threshold)):
            raise ScoringError("threshold policy 'fixed' needs a finite threshold")
        if self.resamples < 1:
            raise ScoringError(f"resamples must be at least 1, got {self.resamples}")

    @classmethod
    def recorded(
        cls,
        threshold: ThresholdInfo,
        splits: Sequence[str] | None,
        bootstrap: Mapping[str, Any],
        labels_given: bool = False,
        resamples: int | None = None,
        point_only: bool = False,
    ) -> ScoreOptions:
        """The settings a stored run was scored with (its threshold, splits and bootstrap as
        run.json records them), so that scoring its predictions again gives its numbers;
        `resamples` overrides the recorded count; `point_only`: the values alone, no CI."""
        policy = {"none": "auto"}.get(threshold.policy, threshold.policy)
        try:
            return cls(
                policy=policy,
                threshold=threshold.threshold if policy == "fixed" else None,
                splits=tuple(str(s) for s in splits or ()) or None,
                resamples=int(bootstrap.get("resamples", 1000)) if resamples is None else resamples,
                seed=int(bootstrap.get("seed", 0)),
                level=float(bootstrap.get("level", 0.95)),
                labels_given=labels_given,
                point_only=point_only,
            )
        except (TypeError, ValueError) as e:
            raise ScoringError(f"the run's scoring settings are malformed ({e})") from None


@dataclass
class Scored:
    results: list[SliceResult]
    threshold: ThresholdInfo
    counts: Counts
    splits: list[str]
    bootstrap: dict[str, object] = field(default_factory=dict)
    labelled: pd.DataFrame | None = None  # the scored rows with their final labels
    # makes final_labels when first asked for (a run checked on a pull never asks)
    label_table: Callable[[], pd.DataFrame] | None = field(default=None, repr=False)

    @functools.cached_property
    def final_labels(self) -> pd.DataFrame | None:
        """LABEL_COLUMNS: stored with the run (labels.parquet)."""
        return None if self.label_table is None else self.label_table()


# --------------------------------------------------------------------------------------------
# input checks


class Given(NamedTuple):
    """A prediction file's rows as the scorer reads them: each row's position among the
    benchmark's samples (-1: not one of them), its score (NaN where none) and its label (Int8)."""

    positions: np.ndarray
    score: np.ndarray | None
    label: pd.Series | None


def check_predictions(spec: ScoringSpec, known: pd.Index, predictions: pd.DataFrame) -> Given:
    """Raise ScoringError naming the offending values; nothing is coerced silently. `known`:
    the benchmark's sample ids."""
    if "sample_id" not in predictions.columns:
        raise ScoringError("predictions have no sample_id column")
    if predictions.empty:
        raise ScoringError("the prediction file has no rows")
    ids = predictions["sample_id"].astype(str)
    where = pd.Index(ids)
    if not where.is_unique:
        dup = ids[ids.duplicated()].unique()
        raise ScoringError(
            f"{len(dup)} duplicate sample_id(s), e.g. {', '.join(map(repr, dup[:5]))}"
        )
    given = _given(known, predictions, where, labels=False)
    if (given.positions < 0).any():
        unknown = ids[given.positions < 0].tolist()
        raise ScoringError(
            f"{len(unknown)} sample_id(s) not in benchmark {spec.name}, e.g. "
            f"{', '.join(map(repr, unknown[:5]))}"
        )
    if given.score is not None and np.isinf(given.score).any():
        bad = predictions.loc[np.isinf(given.score), "sample_id"]
        raise ScoringError(f"non-finite score for sample_id {bad.iloc[0]!r} ({len(bad)} in all)")
    if "label" in predictions.columns and _bad_labels(predictions["label"]).any():
        lab = predictions["label"]
        bad_rows = predictions.loc[_bad_labels(lab), ["sample_id", "label"]]
        value = bad_rows.iloc[0]["label"]
        value = value.item() if hasattr(value, "item") else value
        raise ScoringError(
            f"label {value!r} for sample_id {bad_rows.iloc[0]['sample_id']!r} is not 0 or 1"
        )
    if "label" in predictions.columns:
        return given._replace(label=predictions["label"].astype("Int8"))
    return given


def _bad_labels(lab: pd.Series) -> np.ndarray:
    """Rows whose label is given and is not 0 or 1."""
    if pd.api.types.is_numeric_dtype(lab) or pd.api.types.is_bool_dtype(lab):
        x = lab.to_numpy(dtype=float, na_value=np.nan)
        return ~np.isnan(x) & (x != 0) & (x != 1)
    return (lab.notna() & ~lab.isin([0, 1])).to_numpy()


def _given(
    known: pd.Index, predictions: pd.DataFrame, where: pd.Index | None = None, labels: bool = True
) -> Given:
    if where is None:
        where = pd.Index(predictions["sample_id"].astype(str))
    score = None
    if "score" in predictions:
        score = pd.to_numeric(predictions["score"], errors="coerce").astype(float).to_numpy()
    label = None
    if labels and "label" in predictions:
        label = predictions["label"].astype("Int8")
    return Given(known.get_indexer(where), score, label)


# --------------------------------------------------------------------------------------------
# threshold policies


def _has(col: pd.Series) -> bool:
    return bool(col.notna().any())


def resolve_labels(
    spec: ScoringSpec, frame: pd.DataFrame, options: ScoreOptions, dev_frame: pd.DataFrame | None
) -> tuple[pd.Series, ThresholdInfo]:
    """Final predicted labels for `frame` (rows with a prediction) and how they were made."""
    policy = options.policy
    has_label = "pred_label" in frame and _has(frame["pred_label"])
    has_score = "score" in frame and _has(frame["score"])
    if spec.task == "correlation" or spec.task == "explanation-grading":
        if policy not in ("auto", "none", "labels"):
            raise ScoringError(f"{spec.name} is a {spec.task} benchmark: thresholds do not apply")
        lab = frame["pred_label"] if "pred_label" in frame else pd.Series(pd.NA, index=frame.index)
        return lab, ThresholdInfo(policy="none" if not has_label else "labels")
    if policy == "auto":
        if has_label:
            policy = "labels"
        elif has_score and spec.fixed_threshold is not None:
            return _protocol_threshold(spec, frame)
        elif has_score:
            policy = "dev" if "dev" in spec.splits else "none"
            if policy == "none":
                raise ScoringError(
                    f"{spec.name} has no dev split to tune a threshold on: give labels, or "
                    "a threshold (policy 'fixed')"
                )
        else:
            raise ScoringError("predictions have neither labels nor scores")
    if policy == "labels":
        if not has_label:
            raise ScoringError("threshold policy 'labels' but the predictions have no labels")
        return frame["pred_label"], ThresholdInfo(policy="labels")
    if not has_score:
        raise ScoringError(f"threshold policy {policy!r} needs scores; the predictions have none")
    if policy == "fixed":
        thr = ThresholdInfo(policy="fixed", threshold=float(options.threshold))  # type: ignore[arg-type]
        return labels_from_threshold(frame, thr), thr
    # dev-tuned policies
    if dev_frame is None or dev_frame.empty or not _has(dev_frame["score"]):
        raise ScoringError(
            f"threshold policy {policy!r} tunes on the dev split, but no dev sample of "
            f"{spec.name} has a score: include dev predictions or use a fixed threshold"
        )
    dev = dev_frame[dev_frame["score"].notna()]
    if policy == "dev":
        best = _tune(dev, "all dev samples")
        thr = ThresholdInfo(
            policy="dev", threshold=best.value, tuned_on="dev", tuned_value=best.balanced_accuracy
        )
        return labels_from_threshold(frame, thr), thr
    if policy == "per-domain-dev":
        per: dict[str, float] = {}
        for dom, _ in frame.groupby("domain", dropna=False):
            d = dev[dev["domain"] == dom]
            if d.empty:
                raise ScoringError(f"no dev predictions for domain {dom!r} (per-domain-dev)")
            per[str(dom)] = _tune(d, f"dev samples of domain {dom!r}").value
        thr = ThresholdInfo(policy="per-domain-dev", per_domain=per, tuned_on="dev")
        # the dev BAcc the per-domain thresholds reach together, over the tuned domains' dev
        dev_tuned = dev[dev["domain"].astype(str).isin(per)]
        dev_labels = labels_from_threshold(dev_tuned, thr).astype(int).to_numpy()
        reached = M.balanced_accuracy(dev_tuned["label"].astype(int).to_numpy(), dev_labels)
        thr = thr.model_copy(update={"tuned_value": reached})
        return labels_from_threshold(frame, thr), thr
    raise ScoringError(f"threshold policy {policy!r} does not apply to {spec.name}")


def _protocol_threshold(spec: ScoringSpec, frame: pd.DataFrame) -> tuple[pd.Series, ThresholdInfo]:
    """The benchmark's fixed threshold (spec.fixed_threshold) on probability scores."""
    scores = frame["score"].dropna().astype(float)
    lo, hi = float(scores.min()), float(scores.max())
    if lo < 0.0 or hi > 1.0:
        raise ScoringError(
            f"{spec.name}'s protocol labels probabilities at the fixed threshold "
            f"{spec.fixed_threshold:g}, but these scores run from {lo:.4g} to {hi:.4g}, so they "
            "are not probabilities: give a threshold (policy 'fixed' with a value, or 'dev' / "
            "'per-domain-dev' to tune one on the dev split), or labels"
        )
    thr = ThresholdInfo(policy="fixed", threshold=float(spec.fixed_threshold))  # type: ignore[arg-type]
    return labels_from_threshold(frame, thr), thr


def labels_from_threshold(frame: pd.DataFrame, thr: ThresholdInfo) -> pd.Series:
    """Final labels of `frame`'s rows (score, pred_label, domain) under a run's stored threshold:
    score >= threshold is consistent (1) under 'fixed' and 'dev', the domain's threshold under
    'per-domain-dev'; under 'labels' (and 'none') the label is used as given."""
    if thr.policy in ("fixed", "dev"):
        if thr.threshold is None:
            return pd.Series(pd.NA, index=frame.index, dtype="Int8")
        return _threshold(frame["score"], thr.threshold)
    if thr.policy == "per-domain-dev":
        per = thr.per_domain or {}
        out = pd.Series(pd.NA, index=frame.index, dtype="Int8")
        for dom, rows in frame.groupby("domain", dropna=False):
            if str(dom) in per:
                out.loc[rows.index] = _threshold(rows["score"], per[str(dom)])
        return out
    if "pred_label" in frame:
        return frame["pred_label"].astype("Int8")
    return pd.Series(pd.NA, index=frame.index, dtype="Int8")


def _tune(dev: pd.DataFrame, what: str) -> M.Threshold:
    try:
        return M.best_threshold(
            dev["label"].astype(int).to_numpy(), dev["score"].astype(float).to_numpy()
        )
    except ValueError as e:
        raise ScoringError(f"cannot tune a threshold on {what}: {e}") from None


def _threshold(score: pd.Series, t: float) -> pd.Series:
    s = score.astype(float)
    out = pd.Series(pd.NA, index=score.index, dtype="Int8")
    ok = s.notna()
    out[ok] = (s[ok] >= t).astype("int8")
    return out


# --------------------------------------------------------------------------------------------
# the scorer


def _grades_by_grader(frame: pd.DataFrame, grades: pd.DataFrame | None) -> dict[str, np.ndarray]:
    if grades is None or grades.empty:
        return {}
    out = {}
    for (judge, protocol), g in grades.groupby(["judge", "protocol"], sort=True):
        m = g.drop_duplicates("sample_id", keep="last").set_index("sample_id")["grade"]
        out[f"{judge}/{protocol}"] = frame["sample_id"].map(m).astype(float).to_numpy()
    return out


def _label_table(
    scope: pd.DataFrame,
    has_pred: pd.Series,
    labels: pd.Series,
    summaries: pd.DataFrame | None,
) -> pd.DataFrame:
    """Final labels as stored with a run (LABEL_COLUMNS).

    scope: the samples of the predicted unit in the scored splits, with the prediction's score
    (NaN where none); has_pred: which of them have a prediction row; labels: the final labels of
    those rows. summaries: the summary samples in the scored splits when sentence labels roll
    up: a summary is inconsistent if any of its sentences is, its score is the lowest sentence
    score; it gets no label (no score) when a sentence has none, and no row when none of its
    sentences was predicted."""
    rows = scope[has_pred]
    out = pd.DataFrame(
        {
            "sample_id": rows["sample_id"].astype(str),
            "unit": rows["unit"].astype(str),
            "final_label": labels.reindex(rows.index).astype("Int8"),
            "score": rows["score"].astype(float),
            "rolled": False,
        }
    )
    if summaries is None:
        return out.reset_index(drop=True)
    sent = scope[scope["summary_id"].isin(summaries["sample_id"])]
    lab = labels.reindex(sent.index).astype("Float64")
    g = pd.DataFrame(
        {
            "summary_id": sent["summary_id"],
            "predicted": has_pred.reindex(sent.index).astype(bool),
            "lab": lab,
            "lab_na": lab.isna(),
            "score": sent["score"].astype(float),
            "score_na": sent["score"].isna(),
        }
    )
    agg = g.groupby("summary_id", sort=False).agg(
        predicted=("predicted", "any"),
        lab=("lab", "min"),
        lab_na=("lab_na", "any"),
        score=("score", "min"),
        score_na=("score_na", "any"),
    )
    agg = agg[agg["predicted"]]
    up = summaries[["sample_id", "unit"]].merge(
        agg, left_on="sample_id", right_index=True, how="inner"
    )
    rolled = pd.DataFrame(
        {
            "sample_id": up["sample_id"].astype(str),
            "unit": up["unit"].astype(str),
            "final_label": up["lab"].mask(up["lab_na"]).astype("Int8"),
            "score": up["score"].mask(up["score_na"]).astype(float),
            "rolled": True,
        }
    )
    return pd.concat([out, rolled], ignore_index=True)


# the sample columns the scorer reads of a run's rows (the slices are the prepared samples')
_READ = ("sample_id", "split", "unit", "summary_id", "domain", "label", "human_score")


class Prepared:
    """A benchmark's samples made ready to score runs against, once per benchmark and version:
    the samples without their texts, where each sample_id is, and each slice's members (made on
    first use). `score` is the scorer (`score()` below prepares and calls it; a replica checking
    a shard of pulled runs prepares once and calls it per run), so both give the same numbers.
    `spec` may be None where only predictions are joined (`final_labels`)."""

    def __init__(self, spec: ScoringSpec | None, samples: pd.DataFrame) -> None:
        self.spec = spec
        texts = ("document", "summary", "seed_summary", "reference_explanation")  # never scored
        self.samples = samples[[c for c in samples.columns if c not in texts]].reset_index(
            drop=True
        )
        self._read = self.samples[[c for c in _READ if c in self.samples.columns]]
        self.index = pd.Index(self.samples["sample_id"])
        if not self.index.is_unique:
            raise ScoringError("the benchmark's samples repeat a sample_id")
        self.unit = self.samples["unit"].to_numpy()
        self.split = self.samples["split"].to_numpy()
        self._members: list[tuple[str, str, np.ndarray, bool]] | None = None
        self._control: np.ndarray | None = None

    def join(self, predictions: pd.DataFrame, check: bool = True) -> Joined:
        """Each sample's prediction (score, pred_label) and which samples have a prediction row;
        with `check`, the predictions are checked first (check_predictions' rules)."""
        if check:
            given = check_predictions(self._spec(), self.index, predictions)
        else:
            given = _given(self.index, predictions)
        n = len(self.samples)
        score = np.full(n, np.nan)
        values = np.zeros(n, dtype=np.int8)
        missing = np.ones(n, dtype=bool)
        has_pred = np.zeros(n, dtype=bool)
        known = given.positions >= 0
        at = given.positions[known]
        if given.score is not None:
            score[at] = given.score[known]
        if given.label is not None:
            values[at] = given.label.fillna(0).to_numpy(dtype=np.int8)[known]
            missing[at] = given.label.isna().to_numpy()[known]
        # a row in the file counts as a prediction even when it carries no usable value (an LLM
        # reply that could not be parsed): it is then counted as unparsable, never as missing
        has_pred[at] = True
        return Joined(self, score, pd.arrays.IntegerArray(values, missing), has_pred)

    def masks(self, rows: np.ndarray) -> list[tuple[str, str, np.ndarray]]:
        """slice_masks over the samples at `rows`: overall, then each slice with a member there."""
        if self._members is None:
            self._members = slice_members(self._spec(), self.samples)
            labels = self.samples["label"].to_numpy() if "label" in self.samples else None
            self._consistent = (
                labels == 1 if labels is not None else np.zeros(len(self.samples), dtype=bool)
            )
        out: list[tuple[str, str, np.ndarray]] = [("overall", "", np.ones(len(rows), dtype=bool))]
        consistent = self._consistent[rows]
        for kind, value, members, with_consistent in self._members:
            m = members[rows]
            if m.any():
                out.append((kind, value, m | consistent if with_consistent else m))
        return out

    def control(self, rows: np.ndarray) -> np.ndarray | None:
        """correlation_control over the samples at `rows`."""
        spec = self._spec()
        if not spec.correlation_control:
            return None
        if self._control is None:
            self._control = correlation_control(spec, self.samples)
        return None if self._control is None else self._control[rows]

    def _spec(self) -> ScoringSpec:
        if self.spec is None:
            raise ScoringError("samples prepared without a benchmark cannot be scored")
        return self.spec

    def score(
        self,
        predictions: pd.DataFrame,
        options: ScoreOptions | None = None,
        grades: pd.DataFrame | None = None,
    ) -> Scored:
        """Score `predictions` (PREDICTION_COLUMNS) against these samples."""
        spec = self._spec()
        options = options or ScoreOptions()
        joined = self.join(predictions)
        splits = _splits(spec, options)
        has_pred = joined.has_pred
        # which unit were predictions made at? (TofuEval: sentences, rolled up; or summaries)
        units_pred = pd.unique(self.unit[has_pred]).tolist()
        if len(units_pred) > 1:
            raise ScoringError(f"predictions mix units {sorted(units_pred)}: submit one unit")
        unit = units_pred[0]
        in_unit = self.unit == unit
        in_splits = np.isin(self.split, splits)
        dev_rows = np.flatnonzero(in_unit & (self.split == "dev") & has_pred)
        scope_rows = np.flatnonzero(in_unit & in_splits)
        scored_rows = scope_rows[has_pred[scope_rows]]
        if not len(scored_rows):
            raise ScoringError(
                f"no prediction for any {unit} of split(s) {', '.join(splits)} of {spec.name}"
            )
        scored = joined.frame(scored_rows)
        dev = joined.frame(dev_rows) if len(dev_rows) else None
        labels, thr = resolve_labels(spec, scored, options, dev)
        scored = scored.assign(pred_label=labels.astype("Int8"))
        # a prediction that yields no usable value is counted, never scored as wrong
        if spec.task == "correlation":
            unusable = scored["score"].isna() | scored["human_score"].isna()
        elif spec.task == "explanation-grading":
            unusable = pd.Series(False, index=scored.index)
        else:
            unusable = scored["pred_label"].isna()
        unparsable = int(unusable.sum())
        scored = scored[~unusable]
        n_rows = len(scored_rows)
        counts = Counts(
            n=len(scope_rows),
            predicted=n_rows - unparsable,  # usable predictions
            missing=len(scope_rows) - n_rows,
            unparsable=unparsable,
        )
        if scored.empty:
            raise ScoringError(
                "no prediction could be scored (every one lacks a usable label/score)"
            )
        summary_rows = None
        if unit == "sentence" and "summary" in spec.units:
            summary_rows = np.flatnonzero((self.unit == "summary") & in_splits)
        table = _LabelTable(joined, scope_rows, labels, summary_rows)
        frames = [(unit, scored, scored.index.to_numpy())]
        if summary_rows is not None:
            rolled = table.rolled()
            if not rolled.empty:
                frames.append(("summary", rolled, self.index.get_indexer(rolled["sample_id"])))
        results: list[SliceResult] = []
        for u, f, rows in frames:
            results.extend(
                _score_frame(self, rows, f.reset_index(drop=True), u, splits, options, grades)
            )
        return Scored(
            results=results,
            threshold=thr,
            counts=counts,
            splits=splits,
            bootstrap=_bootstrap_settings(spec, options),
            labelled=frames[0][1],
            label_table=table.table,
        )


@dataclass(frozen=True)
class Joined:
    """A run's predictions joined to prepared samples: arrays over every sample."""

    prepared: Prepared
    score: np.ndarray  # float, NaN where none
    pred_label: pd.arrays.IntegerArray  # Int8, NA where none
    has_pred: np.ndarray  # bool: the sample has a row in the prediction file

    def frame(self, rows: np.ndarray) -> pd.DataFrame:
        """The samples at `rows` (their positions as the index) with their predictions."""
        f = self.prepared._read.take(rows)
        f["score"] = self.score[rows]
        f["pred_label"] = self.pred_label.take(rows)
        return f


class _LabelTable:
    """The final labels stored with a run (LABEL_COLUMNS), made when first asked for (a run
    checked on a pull never asks), and the summaries sentence labels roll up to."""

    def __init__(
        self,
        joined: Joined,
        scope_rows: np.ndarray,
        labels: pd.Series,
        summary_rows: np.ndarray | None,
    ) -> None:
        self.joined, self.scope_rows, self.labels = joined, scope_rows, labels
        self.summary_rows = summary_rows
        self._table: pd.DataFrame | None = None

    def table(self) -> pd.DataFrame:
        if self._table is None:
            scope = self.joined.frame(self.scope_rows)
            in_scope = pd.Series(self.joined.has_pred[self.scope_rows], index=scope.index)
            summaries = None
            if self.summary_rows is not None:
                summaries = self.joined.frame(self.summary_rows)
            self._table = _label_table(scope, in_scope, self.labels, summaries)
        return self._table

    def rolled(self) -> pd.DataFrame:
        """The summaries with their rolled-up labels and scores (rows with a label only)."""
        assert self.summary_rows is not None
        t = self.table()
        up = t.loc[t["rolled"], ["sample_id", "final_label", "score"]]
        summaries = self.joined.frame(self.summary_rows)
        rolled = summaries.drop(columns=["score", "pred_label"]).merge(
            up.rename(columns={"final_label": "pred_label"}), on="sample_id", how="inner"
        )
        return rolled[rolled["pred_label"].notna()]


def _splits(spec: ScoringSpec, options: ScoreOptions) -> list[str]:
    splits = (
        list(options.splits)
        if options.splits
        else (["test"] if "dev" in spec.splits and "test" in spec.splits else list(spec.splits))
    )
    unknown = [s for s in splits if s not in spec.splits]
    if unknown:
        raise ScoringError(
            f"unknown split {unknown[0]!r} for {spec.name}; known: {', '.join(spec.splits)}"
        )
    return splits


def _bootstrap_settings(spec: ScoringSpec, options: ScoreOptions) -> dict[str, object]:
    return {
        "resamples": options.resamples,
        "seed": options.seed,
        "level": options.level,
        "method": "percentile",
        "stratified_by": "domain" if spec.overall == "mean_over_domains" else None,
    }


def final_labels(
    samples: pd.DataFrame,
    predictions: pd.DataFrame,
    threshold: ThresholdInfo,
    splits: list[str],
) -> pd.DataFrame:
    """The final labels (LABEL_COLUMNS) of a stored run, made again from its predictions and
    its stored threshold, exactly as `score` made them: for runs stored without them."""
    prepared = Prepared(None, samples)
    joined = prepared.join(predictions, check=False)
    units = pd.unique(prepared.unit[joined.has_pred]).tolist()
    if len(units) != 1:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in LABEL_COLUMNS})
    unit = units[0]
    in_splits = np.isin(prepared.split, splits)
    scope_rows = np.flatnonzero((prepared.unit == unit) & in_splits)
    scope = joined.frame(scope_rows)
    in_scope = pd.Series(joined.has_pred[scope_rows], index=scope.index)
    labels = labels_from_threshold(scope[in_scope], threshold)
    summaries = joined.frame(np.flatnonzero((prepared.unit == "summary") & in_splits))
    rolls = unit == "sentence" and not summaries.empty
    return _label_table(scope, in_scope, labels, summaries if rolls else None)


def score(
    spec: ScoringSpec,
    samples: pd.DataFrame,
    predictions: pd.DataFrame,
    options: ScoreOptions | None = None,
    grades: pd.DataFrame | None = None,
) -> Scored:
    """Score `predictions` (PREDICTION_COLUMNS) against the benchmark's canonical `samples`
    (`Prepared.score`, on samples prepared for this one call)."""
    return Prepared(spec, samples).score(predictions, options, grades)


def _score_frame(
    prepared: Prepared,
    rows: np.ndarray,
    f: pd.DataFrame,
    unit: str,
    splits: list[str],
    options: ScoreOptions,
    grades: pd.DataFrame | None,
) -> list[SliceResult]:
    """The results of one scored frame `f`: the prepared samples at `rows`, with predictions."""
    spec = prepared._spec()
    split_name = "+".join(splits)
    masks = prepared.masks(rows)
    if spec.task == "explanation-grading":
        return _score_explanations(spec, f, unit, split_name, options, grades)
    domains = f["domain"].fillna("").astype(str).to_numpy()
    ctx = slice_context(spec, split_name, unit, domains, options)
    if spec.task == "correlation":
        x = f["score"].astype(float).to_numpy()
        h = f["human_score"].astype(float).to_numpy()
        control = prepared.control(rows)
        rs = M.Resampler(len(f), resamples=options.resamples, seed=options.seed, strata=ctx.strata)
        return evaluate(correlation_metrics(spec, x, h, control), masks, rs, domains, ctx)
    y = f["label"].astype(int).to_numpy()
    p = f["pred_label"].astype(int).to_numpy()
    graders = _grades_by_grader(f, grades)
    # label-derived metrics: samples with equal (label, prediction, slices, grades) are
    # interchangeable, so the bootstrap runs exactly on the distinct rows (fast)
    cols = [y, p, np.column_stack([m for _, _, m in masks]).astype(np.int8)]
    cols += [np.nan_to_num(g, nan=-1) * 2 for g in graders.values()]
    rs = M.Resampler(
        len(f),
        resamples=options.resamples,
        seed=options.seed,
        strata=ctx.strata,
        keys=np.column_stack(cols),
    )
    r = rs.rows
    defs = detection_metrics(spec, y[r], p[r], {k: g[r] for k, g in graders.items()})
    if options.labels_given:
        defs = [d for d in defs if d.grader is not None]
    out = evaluate(defs, [(k, v, m[r]) for k, v, m in masks], rs, domains[r], ctx)
    if f["score"].notna().all() and not options.labels_given:
        out += roc_auc_results(y, f["score"].astype(float).to_numpy(), masks, domains, ctx)
    order = {(k, v): i for i, (k, v, _) in enumerate(masks)}
    return sorted(out, key=lambda res: order[(res.slice_kind, res.slice_value)])


def slice_context(
    spec: ScoringSpec, split: str, unit: str, domains: np.ndarray, options: ScoreOptions
) -> SliceContext:
    """What every result of a frame whose samples lie in `domains` shares: where the benchmark
    averages over its domains, its resamples are drawn within them and its overall values are
    the mean over the domains present."""
    stratify = spec.overall == "mean_over_domains"
    present = sorted(set(domains) - {""})
    return SliceContext(
        split,
        unit,
        options.resamples,
        options.seed,
        options.level,
        domains if stratify else None,
        present,
        stratify and bool(present),
        options.point_only,
    )


def _masked_mean(values: np.ndarray, keep: np.ndarray) -> M.Stat:
    def stat(W: np.ndarray) -> np.ndarray:
        return M.mean_w(W[:, keep], values[keep])

    return stat


def _score_explanations(
    spec: ScoringSpec,
    f: pd.DataFrame,
    unit: str,
    split_name: str,
    options: ScoreOptions,
    grades: pd.DataFrame | None,
) -> list[SliceResult]:
    """Explanation studies: mean grade and the share of each explanation type."""
    if grades is None or grades.empty:
        raise ScoringError(f"{spec.name} scores graded explanations; the run has no grades")
    out: list[SliceResult] = []
    for (judge, protocol), g in grades.groupby(["judge", "protocol"], sort=True):
        g = g.drop_duplicates("sample_id", keep="last").set_index("sample_id")
        grade = f["sample_id"].map(g["grade"]).astype(float).to_numpy()
        kinds = f["sample_id"].map(g["rationale"]).fillna("").astype(str).to_numpy()
        graded = ~np.isnan(grade)
        grader = f"{judge}/{protocol}"
        est = M.bootstrap_ci(
            _masked_mean(grade, graded),
            len(f),
            resamples=options.resamples,
            seed=options.seed,
        )
        out.append(
            SliceResult(
                split=split_name,
                unit=unit,
                slice_kind="overall",
                slice_value="",
                metric="explanation_score",
                value=est.value,
                ci_low=est.ci_low,
                ci_high=est.ci_high,
                n=int(graded.sum()),
                grader=grader,
            )
        )
        if protocol == "human":
            for t in sorted(set(kinds) - {""}):
                ind = (kinds == t).astype(float)
                e = M.bootstrap_ci(
                    _masked_mean(ind, np.ones(len(ind), dtype=bool)),
                    len(f),
                    resamples=options.resamples,
                    seed=options.seed,
                )
                out.append(
                    SliceResult(
                        split=split_name,
                        unit=unit,
                        slice_kind="explanation_type",
                        slice_value=t,
                        metric="explanation_share",
                        value=e.value,
                        ci_low=e.ci_low,
                        ci_high=e.ci_high,
                        n=len(f),
                        grader=grader,
                    )
                )
    return out
