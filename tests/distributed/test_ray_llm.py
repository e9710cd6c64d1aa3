"""LLM detectors and judges on Ray against the fake chat server: the same labels as the local
engine, one concurrency limit for the whole cluster, and a rerun that sends only what the cache
does not hold."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evaluator.llm.execute import RetryPolicy
from evaluator.runner import Engine
from evaluator.store import runs

if os.environ.get("CI"):
    import openai  # noqa: F401  (CI must have requirements-llm.txt)
else:
    pytest.importorskip("openai")

from evaluator.jobs import queue, worker
from evaluator.llm.runner import run_llm
from tests.support.llm_data import ingest_summexecedit
from tests.support.llm_servers import FakeLLMServer, Recorded, Reply

NO_WAIT = RetryPolicy(max_attempts=3, base=0.0, sleep=lambda s: None)
RAY = Engine("ray", workers=2)


@pytest.fixture(autouse=True)
def _no_env_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FACTBOARD_LLM_CACHE", raising=False)


def _verdicts(req: Recorded) -> Reply:
    """Yes or No by a hash of the request (deterministic), after a short wait so that requests
    overlap."""
    h = int(hashlib.sha256(req.user.encode()).hexdigest(), 16)
    return Reply(text="Yes." if h % 3 else "No. The second clause is wrong.", delay=0.05)


def _opts(server: FakeLLMServer, cache_dir: Path) -> dict[str, str]:
    return {"base_url": server.url, "timeout": "10", "cache_dir": str(cache_dir)}


def test_an_llm_detector_on_ray_gives_the_local_labels_within_one_limit(
    ray_local: Any, demo: Path, tmp_path: Path
) -> None:
    kw: dict[str, Any] = dict(prompt_id="summedits-zs-v1", retry=NO_WAIT, limit=20)
    with FakeLLMServer("openai", responder=_verdicts) as s:
        (local,) = run_llm("compatible:m", "demo", options=_opts(s, tmp_path / "a"), **kw)
        assert s.count == 20
        s.max_active = 0
        (on_ray,) = run_llm(
            "compatible:m",
            "demo",
            options=_opts(s, tmp_path / "b"),  # an empty cache: every request is sent again
            concurrency=3,
            engine=RAY,
            **kw,
        )
        assert s.count == 40  # each sample asked once
        assert 1 <= s.max_active <= 3  # the limit holds across the two workers
    cols = ["sample_id", "label", "explanation", "raw_output"]
    a, b = runs.read_predictions(local)[cols], runs.read_predictions(on_ray)[cols]
    pd.testing.assert_frame_equal(a, b)
    rec = runs.read_record(on_ray)
    assert rec.config.extra["engine"]["name"] == "ray"
    assert rec.config.extra["engine"]["workers"] == 2
    assert rec.config.extra["usage"]["replies_received"] == 20
    assert rec.counts.predicted == runs.read_record(local).counts.predicted


def test_a_rerun_on_ray_sends_only_what_the_cache_lacks(
    ray_local: Any, demo: Path, tmp_path: Path
) -> None:
    kw: dict[str, Any] = dict(prompt_id="summedits-zs-v1", retry=NO_WAIT, engine=RAY)
    with FakeLLMServer("openai", responder=_verdicts) as s:
        opts = _opts(s, tmp_path / "cache")
        run_llm("compatible:m", "demo", options=opts, limit=6, **kw)
        assert s.count == 6
        (path,) = run_llm("compatible:m", "demo", options=opts, limit=20, **kw)
        assert s.count == 20  # the 6 cached replies are not asked again
    usage = runs.read_record(path).config.extra["usage"]
    assert usage["replies_from_cache"] == 6 and usage["replies_received"] == 14


def _flag_three(req: Recorded) -> Reply:
    summary = req.user.split("[Summary]\n")[-1]
    for word in ("rejected", "governor", "museum"):
        if word in summary:
            return Reply(text=f'{{"consistent": "no", "explanation": "About the {word}."}}')
    return Reply(text='{"consistent": "yes", "explanation": ""}')


def _grade(req: Recorded) -> Reply:
    grade = "1" if "rejected" in req.user else "0.5"
    return Reply(text=f"Compared.\nGRADE {req.judge_tag}: {grade}", delay=0.05)


def test_a_queued_judge_job_runs_on_ray(
    ray_local: Any, tmp_path: Path, tmp_data_root: Path
) -> None:
    ingest_summexecedit(tmp_path, tmp_data_root)
    with FakeLLMServer("openai", responder=_flag_three) as s:
        (de_run,) = run_llm(
            "compatible:det",
            "summexecedit",
            prompt_id="summexecedit-de-v1",
            options={"base_url": s.url},
            root=tmp_data_root,
            retry=NO_WAIT,
        )
    with FakeLLMServer("openai", responder=_grade) as s:
        payload = {
            "run_id": de_run.name,
            "judge": "compatible:judge",
            "protocol": "EvalV4",
            "options": {"base_url": s.url, "retry_base": "0"},
            "engine": "ray",
            "workers": 2,
        }
        queue.enqueue("judge", payload, job_id="ray-judge-1")
        claimed = queue.claim()
        assert claimed is not None
        worker.execute(claimed)
        done = queue.get("ray-judge-1")
        assert done is not None and done.status == "done", done.last_message
        assert s.count == 2 and done.result["graded"] == 2  # type: ignore[index]
    new = runs.find_run(done.result["run_id"])  # type: ignore[index]
    grades = runs.read_grades(new)
    assert grades is not None
    g = grades.set_index("sample_id")["grade"].sort_index()
    assert g.to_dict() == {"se-1": 1.0, "se-3": 0.5}
    (entry,) = runs.read_record(new).config.extra["judges"]
    assert entry["engine"]["name"] == "ray" and entry["engine"]["workers"] == 2


def test_job_payloads_take_the_engine_options() -> None:
    from evaluator.core.errors import FactBoardError
    from evaluator.jobs import detector_run, judge

    ok = detector_run.check_payload(
        {"detector": "rouge-2", "benchmark": "demo", "engine": "ray", "gpus_per_worker": 1}
    )
    assert ok["gpus_per_worker"] == 1.0
    with pytest.raises(FactBoardError, match="unknown engine 'dask'"):
        judge.check_payload({"run_id": "r", "judge": "openai:gpt-4o", "engine": "dask"})
    with pytest.raises(FactBoardError, match="--workers needs --engine ray"):
        detector_run.check_payload({"detector": "rouge-2", "benchmark": "demo", "workers": 3})
