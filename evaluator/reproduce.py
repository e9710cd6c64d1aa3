"""Reproduce a stored run from what its run.json records, and say how close the new predictions
come to the stored ones, sample by sample.

`python -m evaluator reproduce RUN_ID` (evaluator/cli/verified.py) and `reproduce(run_id)`.
The recipe is read from the run's config (`recipe_of`), and nothing is written to the board:

- a detector run: the detector (FactBoard's own, or an installed package's entry point, whose
  version is checked), checkpoint, options, unit, batch and block size, splits and sample limit;
  it runs again through the runner's own path (evaluator.detectors.runner.predict_detector);
- an LLM run: provider:model, prompt, temperature, max_tokens and the server's public base URL;
  the requests are sent again with the response cache off (run_llm in a scratch data root);
- a judged run: the last judge and protocol, which grade the graded run's explanations again
  (judge_run, cache off, on a copy of that run in a scratch data root).

The new predictions are scored with the settings the run was scored with (evaluator.verify.
options_of) and compared (`Reproduction`): identical (every score or grade bit for bit and every
final label), or how many labels differ, the largest score (grade) difference, and the run's
primary metric (a judge: the explanation score) reproduced minus stored, with its paired-
bootstrap 95% CI (evaluator.core.metrics.paired_bootstrap on the same resamples).

A submitted run follows the recipe its submitter gave (`submission.recipe`, checked by
evaluator.submissions.recipes): a registered detector on a public checkpoint pinned by revision
(fetched through the Hub client's cache, `fetch_checkpoint`), an LLM with a prompt, or an
installed package's detector at a version. Other runs FactBoard did not make (submitted files
without a recipe, released and imported runs, a detector given to `evaluator.evaluate` as a
Python function) have no recipe to follow: `recipe_of` says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluator.core import metrics as M
from evaluator.core import vocabulary as V
from evaluator.core.errors import FactBoardError
from evaluator.core.formatting import count, number, plural, signed, signed_ci
from evaluator.core.scoring import MEAN_OVER_DOMAINS, Scored, score
from evaluator.core.types import RunRecord
from evaluator.store import runs


class NotReproducible(FactBoardError):
    """The run records no recipe FactBoard can follow."""


@dataclass(frozen=True)
class Recipe:
    """How a run's predictions were made, as its run.json records it."""

    kind: str  # "detector", "llm" or "judge"
    splits: list[str] | None
    limit: int | None
    # a detector's options (with its unit and fixed threshold), or an LLM client's
    options: dict[str, object]
    detector: str | None = None
    checkpoint: str | None = None
    device: str | None = None
    batch_size: int | None = None
    block_size: int | None = None
    package: dict[str, str] | None = None
    llm: str | None = None  # provider:model
    prompt_id: str | None = None
    temperature: float | None = None
    judge: str | None = None  # a judged run: the judge (provider:model) that graded it
    protocol: str | None = None
    graded_run: str | None = None  # the run whose explanations it graded
    revision: str | None = None  # a submitted recipe's checkpoint revision (a Hub model id's)

    def describe(self) -> str:
        if self.kind == "judge":
            return (
                f"judge {self.judge} ({self.protocol}) grading the explanations of run "
                f"{self.graded_run}"
                + (f", options {_options_text(self.options)}" if self.options else "")
            )
        if self.kind == "llm":
            return f"LLM {self.llm}, prompt {self.prompt_id}, temperature {self.temperature:g}" + (
                f", options {_options_text(self.options)}" if self.options else ""
            )
        parts = [f"detector {self.detector}"]
        if self.package:
            parts.append(f"from {self.package.get('name')} {self.package.get('version')}")
        if self.checkpoint:
            at = f" at {self.revision}" if self.revision else ""
            parts.append(f"checkpoint {self.checkpoint}{at}")
        if self.options:
            parts.append(f"options {_options_text(self.options)}")
        return ", ".join(parts)


def _options_text(options: Mapping[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in options.items())


def recipe_of(rec: RunRecord) -> Recipe:
    """The recipe a run records; NotReproducible when it records none FactBoard can follow."""
    cfg = rec.config
    extra = cfg.extra or {}
    submitted = (rec.submission or {}).get("recipe") if rec.origin == "submitted" else None
    if isinstance(submitted, dict):
        return _submitted_recipe(rec, submitted)
    judges = extra.get("judges") or []
    if judges and rec.supersedes:
        # a judged run: its grades are what the last judge added to the run it supersedes
        last = judges[-1]
        judge_client: dict[str, object] = {}
        if (last.get("client") or {}).get("base_url"):
            judge_client["base_url"] = last["client"]["base_url"]
        return Recipe(
            kind="judge",
            splits=list(rec.splits) or None,
            limit=last.get("limit"),
            options=judge_client,
            judge=last.get("judge"),
            protocol=last.get("protocol"),
            graded_run=rec.supersedes,
        )
    if cfg.detector and not cfg.detector.startswith("python:"):
        options: dict[str, object] = dict(extra.get("options") or {})
        if extra.get("unit"):
            options["unit"] = extra["unit"]
        if rec.threshold.policy == "fixed" and rec.threshold.threshold is not None:
            options["threshold"] = rec.threshold.threshold
        engine = extra.get("engine") or {}
        return Recipe(
            kind="detector",
            detector=cfg.detector,
            checkpoint=cfg.checkpoint,
            device=extra.get("device"),
            batch_size=extra.get("batch_size"),
            block_size=engine.get("block_size"),
            options=options,
            splits=list(rec.splits) or None,
            limit=extra.get("limit"),
            package=extra.get("package"),
        )
    if cfg.detector:
        raise NotReproducible(
            f"run {rec.run_id} was scored by a Python function given to evaluator.evaluate "
            f"({cfg.detector.removeprefix('python:')}); FactBoard cannot rebuild it. Publish it "
            "as a package with a factboard.detectors entry point to make its runs reproducible"
        )
    if cfg.llm and cfg.prompt_id:
        client: dict[str, object] = {}
        base_url = (extra.get("client") or {}).get("base_url")
        if base_url:
            client["base_url"] = base_url
        if extra.get("max_tokens") is not None:
            client["max_tokens"] = extra["max_tokens"]
        return Recipe(
            kind="llm",
            splits=list(rec.splits) or None,
            limit=extra.get("limit"),
            options=client,
            llm=cfg.llm,
            prompt_id=cfg.prompt_id,
            temperature=cfg.temperature if cfg.temperature is not None else 0.0,
        )
    raise NotReproducible(
        f"run {rec.run_id} ({V.ORIGIN_MEANINGS.get(rec.origin, rec.origin)}) records no recipe: "
        "its predictions were not made by FactBoard"
    )


def _text(v: object) -> str | None:
    return v if isinstance(v, str) else None


def _submitted_recipe(rec: RunRecord, given: Mapping[str, object]) -> Recipe:
    """The recipe a submitter gave, as stored in the run (evaluator.submissions.recipes checked
    it field by field when it was submitted): run on the splits and unit the submitted file
    predicted."""
    listed = given.get("splits")
    splits = [str(s) for s in listed] if isinstance(listed, list) and listed else None
    splits = splits or list(rec.splits) or None
    options: dict[str, object] = {}
    if given.get("kind") == "llm":
        if given.get("max_tokens") is not None:
            options["max_tokens"] = given["max_tokens"]
        temperature = given.get("temperature")
        return Recipe(
            kind="llm",
            splits=splits,
            limit=None,
            options=options,
            llm=_text(given.get("llm")),
            prompt_id=_text(given.get("prompt")),
            temperature=float(temperature) if isinstance(temperature, int | float) else 0.0,
        )
    given_options = given.get("options")
    if isinstance(given_options, dict):
        options.update(given_options)
    if given.get("unit"):
        options["unit"] = given["unit"]
    package = None
    if given.get("kind") == "package":
        package = {"name": str(given.get("package")), "version": str(given.get("version"))}
    return Recipe(
        kind="detector",
        detector=_text(given.get("detector")),
        checkpoint=_text(given.get("checkpoint")),
        revision=_text(given.get("revision")),
        options=options,
        splits=splits,
        limit=None,
        package=package,
    )


def fetch_checkpoint(repo_id: str, revision: str) -> str:
    """A local folder holding a Hub model at a revision (the Hub client's cache: downloaded
    once, read offline after that)."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError:  # pragma: no cover - a dependency of the detectors' extra
        raise NotReproducible(
            "huggingface_hub is not installed: pip install factboard[detectors]"
        ) from None
    try:
        return str(snapshot_download(repo_id, revision=revision))
    except Exception as e:
        raise NotReproducible(
            f"checkpoint {repo_id} at revision {revision} cannot be fetched: "
            f"{type(e).__name__}: {e}"
        ) from None


@dataclass
class MetricDifference:
    """The primary metric, reproduced minus stored, on the same samples."""

    metric: str
    stored: float
    reproduced: float
    paired: M.PairedComparison | None  # None where the metric does not apply to these samples


@dataclass
class Reproduction:
    """How the reproduced predictions compare with the stored ones."""

    run_id: str
    recipe: Recipe
    compared: int  # samples with a prediction in both
    only_stored: int  # samples the stored run predicted and the reproduction did not
    only_reproduced: int
    scores_differ: int  # samples whose score (labels only: label) is not bit for bit the stored
    max_score_difference: float | None  # the largest |reproduced - stored| score (None: none)
    labels_compared: int
    labels_differ: int  # final labels (threshold applied) that differ
    metric: MetricDifference | None
    predictions: pd.DataFrame  # the reproduced predictions (a judged run: the grades)
    scored: Scored | None
    notes: list[str] = field(default_factory=list)
    what: str = "score"  # what was compared value by value: "score", or "grade" (a judge)

    @property
    def identical(self) -> bool:
        return (
            self.only_stored == 0
            and self.only_reproduced == 0
            and self.scores_differ == 0
            and self.labels_differ == 0
        )

    def lines(self) -> list[str]:
        """What the command prints."""
        out = [f"run {self.run_id}: {self.recipe.describe()}"]
        if self.identical:
            out.append(
                f"reproduced: identical ({plural(self.compared, 'sample')}, every "
                f"{self.what} bit for bit and every label)"
            )
        else:
            out.append(f"differs: on {plural(self.compared, 'sample')} predicted by both")
            if self.only_stored or self.only_reproduced:
                out.append(
                    f"  samples predicted by the stored run only: {count(self.only_stored)}, "
                    f"by the reproduction only: {count(self.only_reproduced)}"
                )
            out.append(
                f"  labels that differ: {count(self.labels_differ)} of "
                f"{count(self.labels_compared)}"
            )
            if self.max_score_difference is not None:
                out.append(
                    f"  {self.what}s that differ: {count(self.scores_differ)}; largest difference "
                    f"{number(self.max_score_difference, 6)}"
                )
        m = self.metric
        if m is not None:
            label = V.metric_label(m.metric)
            line = (
                f"{label}: stored {number(m.stored)}, reproduced {number(m.reproduced)}, "
                f"difference {signed(m.reproduced - m.stored)}"
            )
            if m.paired is not None:
                line += f" (paired 95% CI {signed_ci(m.paired.ci_low, m.paired.ci_high)})"
            out.append(line)
        out.extend(f"note: {n}" for n in self.notes)
        return out


def reproduce(
    run_id: str,
    root: Path | None = None,
    *,
    device: str | None = None,
    options: Mapping[str, object] | None = None,
    progress: bool = False,
    resamples: int = 1000,
    retry: Any = None,
    engine: Any = None,
) -> Reproduction:
    """Re-run `run_id` from its recipe and compare (nothing is written to the board).

    device: run a detector on this device instead of the recorded one (a GPU run checked on a
    CPU). options: an LLM run's client options over the recorded ones (base_url where the
    server moved; keys come from the environment as for any LLM run); its replies are asked
    for again, never taken from the response cache. retry: the LLM requests' RetryPolicy."""
    from evaluator.verify import options_of

    d = runs.find_run(run_id, root)
    rec = runs.read_record(d)
    recipe = recipe_of(rec)
    notes: list[str] = []
    if recipe.kind == "judge":
        return _reproduce_grades(rec, d, recipe, root, options, progress, retry, resamples)
    if recipe.kind == "llm":
        inputs, preds = _rerun_llm(rec, recipe, root, options, progress, retry)
    else:
        inputs, preds = _rerun_detector(rec, recipe, root, device, progress, notes, engine)
    if inputs.version != rec.benchmark_version:
        notes.append(
            f"the run was made on {rec.benchmark} {rec.benchmark_version}; "
            f"{inputs.version} is ingested here"
        )
    opts = options_of(rec)
    opts = type(opts)(**{**opts.__dict__, "resamples": min(opts.resamples, resamples)})
    new = score(inputs.spec, inputs.samples, preds, opts)
    stored_preds = runs.read_predictions(d)
    stored_labels = runs.read_labels(d)
    if stored_labels is None:  # a run stored before labels were: the scorer's rule
        stored_labels = score(inputs.spec, inputs.samples, stored_preds, opts).final_labels
    return _compare(
        rec,
        recipe,
        inputs.spec,
        inputs.samples,
        stored_preds,
        stored_labels,
        preds,
        new,
        notes,
        resamples,
    )


def _rerun_llm(
    rec: RunRecord,
    recipe: Recipe,
    root: Path | None,
    options: Mapping[str, object] | None,
    progress: bool,
    retry: Any,
) -> tuple[Any, pd.DataFrame]:
    """The LLM's predictions made again: run_llm with the cache off, in a scratch data root that
    sees the ingested benchmark (its run is read back and the scratch root removed)."""
    import tempfile

    from evaluator import runner
    from evaluator.llm.runner import run_llm
    from evaluator.store import layout

    inputs = runner.load_inputs(rec.benchmark, root)
    opts = {**recipe.options, **(options or {}), "cache": "off"}
    with tempfile.TemporaryDirectory(prefix="factboard-reproduce-") as tmp:
        scratch = Path(tmp)
        layout.benchmarks_dir(scratch).mkdir(parents=True)
        layout.runs_dir(scratch).mkdir()
        src = layout.benchmark_dir(rec.benchmark, root).resolve()
        layout.benchmark_dir(rec.benchmark, scratch).symlink_to(src, target_is_directory=True)
        (path,) = run_llm(
            str(recipe.llm),
            rec.benchmark,
            prompt_id=recipe.prompt_id,
            temperature=float(recipe.temperature or 0.0),
            splits=recipe.splits,
            limit=recipe.limit,
            options=opts,
            progress=progress,
            root=scratch,
            retry=retry,
        )
        preds = runs.read_predictions(path)
    return inputs, preds


def _rerun_detector(
    rec: RunRecord,
    recipe: Recipe,
    root: Path | None,
    device: str | None,
    progress: bool,
    notes: list[str],
    engine: Any = None,
) -> tuple[Any, pd.DataFrame]:
    """The detector's predictions made again through the runner's own path."""
    from evaluator import runner
    from evaluator.detectors.registry import DETECTORS, detector_package
    from evaluator.detectors.runner import predict_detector

    run_id = rec.run_id
    name = str(recipe.detector)
    if name not in DETECTORS and recipe.package is None:
        raise NotReproducible(
            f"run {run_id} was made by detector {name!r}, which is not a registered detector here"
        )
    if recipe.package is not None:
        here = detector_package(name)
        if here is None:
            raise NotReproducible(
                f"run {run_id} used detector {name} from package "
                f"{recipe.package.get('name')} {recipe.package.get('version')}, which is not "
                "installed here"
            )
        if here.get("version") != recipe.package.get("version"):
            notes.append(
                f"the run used {recipe.package.get('name')} {recipe.package.get('version')}; "
                f"{here.get('version')} is installed here"
            )
    if engine is None:
        engine = runner.Engine(block_size=recipe.block_size or runner.DEFAULT_BLOCK_SIZE)
    checkpoint = recipe.checkpoint
    if checkpoint and recipe.revision:
        checkpoint = fetch_checkpoint(checkpoint, recipe.revision)
    p = predict_detector(
        name,
        rec.benchmark,
        checkpoint=checkpoint,
        device=device or recipe.device,
        batch_size=recipe.batch_size,
        splits=recipe.splits,
        limit=recipe.limit,
        options=recipe.options,
        progress=progress,
        root=root,
        engine=engine,
    )
    p.checkpoints.clear()
    return p.inputs, p.predictions


def _reproduce_grades(
    rec: RunRecord,
    d: Path,
    recipe: Recipe,
    root: Path | None,
    options: Mapping[str, object] | None,
    progress: bool,
    retry: Any,
    resamples: int,
) -> Reproduction:
    """A judged run: the recorded judge grades the graded run's explanations again (judge_run,
    cache off, in a scratch data root holding the benchmark and a copy of that run), and the
    grades are compared explanation by explanation; the metric is the explanation score (the
    mean grade) on the explanations both graded, with its paired CI."""
    import shutil
    import tempfile

    from evaluator.llm.judges import judge_run
    from evaluator.store import layout

    graded = runs.find_run(str(recipe.graded_run), root)
    opts = {**recipe.options, **(options or {}), "cache": "off"}
    with tempfile.TemporaryDirectory(prefix="factboard-reproduce-") as tmp:
        scratch = Path(tmp)
        layout.benchmarks_dir(scratch).mkdir(parents=True)
        layout.runs_dir(scratch).mkdir()
        src = layout.benchmark_dir(rec.benchmark, root).resolve()
        layout.benchmark_dir(rec.benchmark, scratch).symlink_to(src, target_is_directory=True)
        shutil.copytree(graded, layout.runs_dir(scratch) / graded.name)
        path = judge_run(
            graded.name,
            str(recipe.judge),
            str(recipe.protocol),
            options=opts,
            progress=progress,
            root=scratch,
            retry=retry,
            limit=recipe.limit,
        )
        new = runs.read_grades(path)
    stored = runs.read_grades(d)
    key = ["sample_id"]

    def mine(g: pd.DataFrame | None) -> pd.DataFrame:
        if g is None:
            return pd.DataFrame(columns=["sample_id", "grade"]).set_index(key)
        g = g[(g["judge"] == recipe.judge) & (g["protocol"] == recipe.protocol)]
        return g.assign(sample_id=g["sample_id"].astype(str)).set_index(key)[["grade"]]

    a, b = mine(stored), mine(new)
    both = a.index.intersection(b.index)
    ga = a.loc[both, "grade"].to_numpy(dtype=float)
    gb = b.loc[both, "grade"].to_numpy(dtype=float)
    same = (ga == gb) | (np.isnan(ga) & np.isnan(gb))
    gaps = np.abs(ga - gb)
    gaps = gaps[~np.isnan(gaps)]
    ok = ~(np.isnan(ga) | np.isnan(gb))
    metric = None
    if ok.sum() >= 2:
        xa, xb = ga[ok], gb[ok]
        paired = M.paired_bootstrap(
            lambda W: M.mean_w(W, xb), lambda W: M.mean_w(W, xa), len(xa), resamples=resamples
        )
        metric = MetricDifference("explanation_score", float(xa.mean()), float(xb.mean()), paired)
    return Reproduction(
        run_id=rec.run_id,
        recipe=recipe,
        compared=len(both),
        only_stored=len(a.index.difference(b.index)),
        only_reproduced=len(b.index.difference(a.index)),
        scores_differ=int((~same).sum()),
        max_score_difference=float(gaps.max()) if gaps.size else None,
        labels_compared=0,
        labels_differ=0,
        metric=metric,
        predictions=b.reset_index(),
        scored=None,
        what="grade",
    )


def _compare(
    rec: RunRecord,
    recipe: Recipe,
    spec: Any,
    samples: pd.DataFrame,
    stored: pd.DataFrame,
    stored_labels: pd.DataFrame | None,
    preds: pd.DataFrame,
    new: Scored,
    notes: list[str],
    resamples: int,
) -> Reproduction:
    a = stored.set_index(stored["sample_id"].astype(str))
    b = preds.set_index(preds["sample_id"].astype(str))
    both = a.index.intersection(b.index)
    differ, largest = 0, None
    has_scores = any("score" in f and bool(f["score"].notna().any()) for f in (a, b))
    if has_scores and "score" in a and "score" in b:
        sa = a.loc[both, "score"].to_numpy(dtype=float)
        sb = b.loc[both, "score"].to_numpy(dtype=float)
        same = (sa == sb) | (np.isnan(sa) & np.isnan(sb))
        differ = int((~same).sum())
        gaps = np.abs(sa - sb)
        gaps = gaps[~np.isnan(gaps)]
        largest = float(gaps.max()) if gaps.size else 0.0
        if differ and not gaps.size:
            largest = None
    elif "label" in a and "label" in b:
        la, lb = a.loc[both, "label"], b.loc[both, "label"]
        differ = int((la.astype("Int8") != lb.astype("Int8")).fillna(True).sum())

    la_frame = _labels(stored_labels)
    lb_frame = _labels(new.final_labels)
    joined = la_frame.join(lb_frame.add_suffix("_b"), how="inner").rename(
        columns={"final_label": "final_label_a", "score": "score_a"}
    )
    fa, fb = joined["final_label_a"], joined["final_label_b"]
    label_differ = int(((fa != fb) | (fa.isna() != fb.isna())).fillna(True).sum())
    metric = _metric_difference(rec, spec, samples, la_frame, lb_frame, new, resamples)
    return Reproduction(
        run_id=rec.run_id,
        recipe=recipe,
        compared=len(both),
        only_stored=len(a.index.difference(b.index)),
        only_reproduced=len(b.index.difference(a.index)),
        scores_differ=differ,
        max_score_difference=largest,
        labels_compared=len(joined),
        labels_differ=label_differ,
        metric=metric,
        predictions=preds,
        scored=new,
        notes=notes,
    )


def _labels(frame: pd.DataFrame | None) -> pd.DataFrame:
    """Final labels by (sample_id, unit, rolled)."""
    if frame is None or frame.empty:
        return pd.DataFrame(columns=["final_label", "score"])
    f = frame.copy()
    f["sample_id"] = f["sample_id"].astype(str)
    f["rolled"] = f["rolled"].fillna(False).astype(bool)
    f["final_label"] = f["final_label"].astype("Int8")
    return f.set_index(["sample_id", "unit", "rolled"])[["final_label", "score"]]


def _metric_difference(
    rec: RunRecord,
    spec: Any,
    samples: pd.DataFrame,
    stored: pd.DataFrame,
    new_labels: pd.DataFrame,
    new: Scored,
    resamples: int,
) -> MetricDifference | None:
    """The primary metric on the scored split(s), overall, both runs on the same samples, with
    the paired bootstrap of the difference (stratified by domain, and averaged over domains,
    where the benchmark's Overall is a mean over domains)."""
    metric = spec.primary_metric
    info = V.METRICS.find(metric)
    if info is None or info.weighted is None:
        return None
    uses_labels = info.uses == "labels"
    col = "final_label" if uses_labels else "score"
    joined = stored.add_suffix("_a").join(new_labels.add_suffix("_b"), how="inner").reset_index()
    joined = joined[~joined["rolled"]]
    s = samples.assign(sample_id=samples["sample_id"].astype(str))
    s = s[s["split"].isin(list(rec.splits))].drop_duplicates("sample_id")
    f = joined.merge(s, on=["sample_id", "unit"], how="inner")
    f = f.sort_values("sample_id", kind="stable").reset_index(drop=True)  # resampled in id order
    target_col = "label" if uses_labels or "correlation" not in info.tasks else "human_score"
    y = pd.to_numeric(f[target_col], errors="coerce").to_numpy(dtype=float)
    x_a = pd.to_numeric(f[f"{col}_a"], errors="coerce").to_numpy(dtype=float)
    x_b = pd.to_numeric(f[f"{col}_b"], errors="coerce").to_numpy(dtype=float)
    ok = ~(np.isnan(y) | np.isnan(x_a) | np.isnan(x_b))
    y, x_a, x_b = y[ok], x_a[ok], x_b[ok]
    f = f[ok].reset_index(drop=True)
    if len(y) < 2:
        return None
    if uses_labels:
        y, x_a, x_b = (v.astype(np.int8) for v in (y, x_a, x_b))
    fn = info.weighted
    stratify = spec.overall == "mean_over_domains"
    domains = f["domain"].fillna("").astype(str).to_numpy()
    if stratify and metric in MEAN_OVER_DOMAINS:
        groups = [domains == g for g in np.unique(domains)]

        def over_domains(x: np.ndarray) -> Any:
            return lambda W: np.mean(
                np.stack([fn(W[:, g], y[g], x[g]) for g in groups], axis=1), axis=1
            )

        stat_a, stat_b = over_domains(x_a), over_domains(x_b)
    else:
        stat_a, stat_b = (lambda W: fn(W, y, x_a)), (lambda W: fn(W, y, x_b))
    ones = np.ones((1, len(y)))
    va, vb = float(np.asarray(stat_a(ones))[0]), float(np.asarray(stat_b(ones))[0])
    if np.isnan(va) or np.isnan(vb):
        return None
    paired = M.paired_bootstrap(
        stat_b,
        stat_a,
        len(y),
        resamples=resamples,
        strata=domains if stratify else None,
    )
    return MetricDifference(metric, va, vb, paired)


__all__ = ["NotReproducible", "Recipe", "Reproduction", "recipe_of", "reproduce"]
