"""Shared helpers for the submission, queue, worker and page tests, and the worker plugins that
test workers load through $FACTBOARD_WORKER_PLUGINS ("tests.support.submit:register_slow").

The plugins are real handlers (they write runs through runner.write_run_once);
tests/jobs/test_worker_plugins.py checks that plugins load and that a bad plugin spec is refused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from evaluator import runner
from evaluator.core.errors import FactBoardError
from evaluator.core.types import Counts, ModelInfo, RunRecord, ThresholdInfo
from evaluator.ingest.demo import build_demo
from evaluator.jobs import queue, worker
from evaluator.store import ingested, runs

REPO = Path(__file__).resolve().parents[2]
TESTS = Path(__file__).resolve().parents[1]
_TEMPLATE: dict[str, Path] = {}


def demo_copy(data_root: Path, factory: pytest.TempPathFactory) -> Path:
    """The demo benchmark and its 4 baseline runs in data_root (built once per test process)."""
    tpl = _TEMPLATE.get("demo")
    if tpl is None:
        tpl = factory.mktemp("demo-template")
        list(build_demo(root=tpl))
        _TEMPLATE["demo"] = tpl
    shutil.copytree(tpl, data_root, dirs_exist_ok=True)
    return data_root


def demo_ids(split: str = "test") -> list[str]:
    s = ingested.load_samples("demo")
    return sorted(s.loc[s["split"] == split, "sample_id"])


def predictions_csv(
    seed: int = 0, explanation: str | None = None, splits: tuple[str, ...] = ("test",)
) -> bytes:
    """A valid prediction file for demo (random labels; different seeds give different files)."""
    s = ingested.load_samples("demo")
    s = s[s["split"].isin(splits)].sort_values("sample_id")
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"sample_id": s["sample_id"], "label": rng.integers(0, 2, len(s))})
    if explanation is not None:
        df["explanation"] = explanation
    return df.to_csv(index=False).encode()


def scores_csv(seed: int = 0) -> bytes:
    """Scores (no labels) for dev and test: the threshold is tuned on dev."""
    s = ingested.load_samples("demo").sort_values("sample_id")
    rng = np.random.default_rng(seed)
    noise = rng.normal(0, 0.35, len(s))
    df = pd.DataFrame({"sample_id": s["sample_id"], "score": s["label"].to_numpy() + noise})
    return df.to_csv(index=False).encode()


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under root with its size and mtime (to show that nothing changed)."""
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def wait_for(cond: Callable[[], bool], timeout: float = 60.0, what: str = "condition") -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def worker_env(plugins: str, lease: float = 60.0) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(TESTS), env.get("PYTHONPATH", "")])
    env["FACTBOARD_WORKER_PLUGINS"] = plugins
    env["FACTBOARD_QUEUE_LEASE"] = str(lease)
    env["HF_HUB_OFFLINE"] = "1"
    return env


def start_worker(plugins: str, *args: str, lease: float = 60.0) -> subprocess.Popen[str]:
    """A real worker process (`python -m evaluator worker`), stderr captured."""
    return subprocess.Popen(
        [sys.executable, "-m", "evaluator", "worker", "--poll", "0.05", *args],
        cwd=REPO,
        env=worker_env(plugins, lease),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def toy_record(run_id: str, model: str, supersedes: str | None = None) -> RunRecord:
    return RunRecord(
        run_id=run_id,
        benchmark="demo",
        benchmark_version="test",
        created_at=runs.now_iso(),
        model=ModelInfo(name=model, kind="baseline"),
        origin="evaluated",
        threshold=ThresholdInfo(policy="labels"),
        splits=["test"],
        counts=Counts(n=1, predicted=1, missing=0),
        supersedes=supersedes,
    )


# --------------------------------------------------------------------------------------------
# worker plugins


def _demo_run(run_id: str, model: str) -> tuple[RunRecord, pd.DataFrame, pd.DataFrame | None]:
    """A run of the worker's demo benchmark whose numbers follow from its predictions (every
    summary called consistent), as a replica that pulls it checks; a toy record where the
    worker's data root has no demo benchmark (the local queue's tests)."""
    from evaluator import scorer
    from evaluator.core.scoring import ScoreOptions, score

    try:
        inputs = runner.load_inputs("demo")
    except FactBoardError:
        return toy_record(run_id, model), pd.DataFrame({"sample_id": ["a"], "label": [1]}), None
    preds = pd.DataFrame({"sample_id": inputs.samples["sample_id"].to_numpy(), "label": 1})
    scored = score(inputs.spec, inputs.samples, preds, ScoreOptions(policy="labels", resamples=50))
    info = ModelInfo(name=model, kind="baseline")
    rec = scorer.build_record(inputs.spec, inputs.version, scored, info, "evaluated", run_id=run_id)
    return rec, preds, scored.final_labels


def slow_handler(payload: dict[str, Any], report: Callable[[str, float | None], None]) -> dict:
    """Writes a run whose id is derived from the job id, and waits for a gate file.

    payload: dir (for the marker files), model, write_first (write the run before waiting).
    Markers: started (one line per attempt), written (one line per run actually written)."""
    d = Path(payload["dir"])
    with open(d / "started", "a") as fh:
        fh.write(f"{os.getpid()}\n")
    report("started", 0.1)
    run_id = queue.run_id_for_job(payload["job_id"], "demo", payload["model"])

    def write() -> bool:
        rec, preds, labels = _demo_run(run_id, payload["model"])
        _, written = runner.write_run_once(rec, preds, labels=labels)
        if written:
            with open(d / "written", "a") as fh:
                fh.write(f"{os.getpid()}\n")
        return written

    if payload.get("write_first"):
        write()
        report("run written", 0.5)
    end = time.monotonic() + 120
    while not (d / "gate").exists():
        if time.monotonic() > end:
            raise FactBoardError("the gate never opened")
        time.sleep(0.05)
    if not payload.get("write_first"):
        write()
    report("finished", 1.0)
    return {"run_id": run_id}


def judge_handler(payload: dict[str, Any], report: Callable[[str, float | None], None]) -> dict:
    """A stand-in judge: writes a copy of the submitted run that supersedes it (as the real
    judge does with grades), under a run id derived from the job id."""
    src = runs.find_run(payload["run_id"])
    rec = runs.read_record(src)
    new_id = queue.run_id_for_job(payload["job_id"], rec.benchmark, rec.model.name)
    new = rec.model_copy(update={"run_id": new_id, "supersedes": rec.run_id})
    report(f"grading {rec.run_id} with {payload['judge']} ({payload['protocol']})", 0.5)
    runner.write_run_once(new, runs.read_predictions(src))
    return {"run_id": new_id}


def register_slow() -> None:
    worker.register_handler("slow", slow_handler)


def register_judge() -> None:
    worker.register_handler("judge", judge_handler)
