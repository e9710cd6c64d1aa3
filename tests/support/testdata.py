"""Small data roots for the app's tests and for screenshots: the demo plus extra runs.

Everything goes through the engine's own write paths (evaluator.ingest.demo,
evaluator.ingest.pipeline, evaluator.scorer), so the runs are what a real submission would produce.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluator import scorer
from evaluator.benchmarks import registry
from evaluator.core.scoring import ScoreOptions
from evaluator.core.types import ModelInfo, RunConfig
from evaluator.ingest import demo
from evaluator.store import ingested, layout

XSS_NAME = "<script>alert(1)</script>**bold** $x$ [link](http://x)"


def build_demo_root(root: Path, reported: bool = True) -> Path:
    """The built-in demo (benchmark + 4 baseline runs) in `root`, with the repo's reported CSVs
    when asked. Returns root."""
    (root / "benchmarks").mkdir(parents=True, exist_ok=True)
    (root / "runs").mkdir(exist_ok=True)
    for _ in demo.build_demo(root=root):
        pass
    if reported:
        shutil.copytree(
            layout.REPO_ROOT / "leaderboard_data" / "reported",
            root / "reported",
            dirs_exist_ok=True,
        )
    return root


def without_runs(root: Path) -> Path:
    """`root` with its runs removed (its benchmarks kept): where a test imports runs that were
    exported from `root` (an import, like a submission, refuses a second run under a name that
    already has one). Returns root."""
    shutil.rmtree(root / "runs", ignore_errors=True)
    (root / "runs").mkdir()
    return root


def own_copy(src: Path, tmp_path: Path, monkeypatch: Any) -> Path:
    """A test's own copy of a data root built once per module (`src`), with its own board cache
    (FACTBOARD_CACHE), so that what one test writes never reaches another."""
    monkeypatch.setenv("FACTBOARD_CACHE", str(tmp_path / "cache"))
    dst = tmp_path / "leaderboard_data"
    shutil.copytree(src, dst)
    return dst


def add_run(
    root: Path,
    benchmark: str,
    name: str,
    *,
    accuracy: float = 0.75,
    seed: int = 0,
    kind: str = "open-llm",
    origin: str = "submitted",
    scores: bool = False,
    explanations: bool = False,
    grades: pd.DataFrame | None = None,
    params: str | None = None,
    unit: str | None = None,
    policy: str = "auto",
) -> Path:
    """Score synthetic predictions (right with probability `accuracy`) as a new run."""
    spec = registry.get(benchmark)
    samples = ingested.load_samples(benchmark, root)
    version = ingested.load_meta(benchmark, root)["version"]
    unit = unit or ("sentence" if "sentence" in spec.units else "summary")
    s = samples[samples["unit"] == unit]
    rng = np.random.default_rng(seed)
    gold = s["label"].to_numpy(dtype=float)
    right = rng.random(len(s)) < accuracy
    pred = np.where(right, gold, 1 - gold).astype(int)
    preds = pd.DataFrame({"sample_id": s["sample_id"].to_numpy()})
    if scores:
        preds["score"] = pred + rng.normal(0, 0.3, len(s))
    else:
        preds["label"] = pred
    if explanations:
        preds["explanation"] = [
            f"The summary says {'something the document does not' if p == 0 else 'what it says'}"
            f" (<b>{i}</b> **not bold**)"
            for i, p in enumerate(pred)
        ]
    model = ModelInfo(name=name, kind=kind, params=params)  # type: ignore[arg-type]
    return scorer.score_to_run(
        spec,
        version,
        samples,
        preds,
        model,
        origin,
        RunConfig(detector="synthetic"),
        ScoreOptions(policy=policy, resamples=200),
        grades,
        root,
    )


def human_grades(root: Path, benchmark: str, seed: int = 0) -> pd.DataFrame:
    """FactCC-study-style human grades (protocol 'human', the type in the rationale) for the
    inconsistent samples of a benchmark's test split."""
    samples = ingested.load_samples(benchmark, root)
    inc = samples[(samples["label"] == 0) & (samples["split"] == "test")]["sample_id"]
    rng = np.random.default_rng(seed)
    types = rng.choice(
        ["correct", "partially_correct", "incorrect", "unrelated", "no_explanation"],
        len(inc),
        p=[0.4, 0.1, 0.2, 0.2, 0.1],
    )
    grade = {"correct": 1.0, "partially_correct": 0.5}
    return pd.DataFrame(
        {
            "sample_id": inc.to_numpy(),
            "judge": "human",
            "protocol": "human",
            "grade": [grade.get(t, 0.0) for t in types],
            "rationale": types,
        }
    )


def judge_grades(
    human: pd.DataFrame,
    judge: str = "gpt-4o",
    protocol: str = "EvalV4",
    agree: float = 0.8,
    seed: int = 1,
) -> pd.DataFrame:
    """An LLM judge's grades of the same explanations, agreeing with people `agree` of the time."""
    rng = np.random.default_rng(seed)
    g = human["grade"].to_numpy().copy()
    flip = rng.random(len(g)) > agree
    g[flip] = rng.choice([0.0, 0.5, 1.0], int(flip.sum()))
    return pd.DataFrame(
        {
            "sample_id": human["sample_id"],
            "judge": judge,
            "protocol": protocol,
            "grade": g,
            "rationale": "judge says so",
        }
    )


def add_metric_run(
    root: Path,
    benchmark: str,
    name: str,
    score: np.ndarray,
    samples: pd.DataFrame,
    resamples: int = 50,
) -> Path:
    """A metric's run on a correlation benchmark: `score` for each of `samples` (the
    benchmark's rows it scores), stored like a submission. Returns the run folder."""
    return scorer.score_to_run(
        registry.get(benchmark),
        ingested.load_meta(benchmark, root)["version"],
        samples,
        pd.DataFrame({"sample_id": samples["sample_id"], "score": score}),
        ModelInfo(name=name, kind="non-llm"),
        "submitted",
        RunConfig(detector="synthetic"),
        ScoreOptions(policy="none", resamples=resamples),
        None,
        root,
    )
