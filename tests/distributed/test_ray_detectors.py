"""Reference detectors on Ray Data: the same scores as the local engine, bit for bit on the CPU;
a killed actor is restarted and every sample is scored exactly once; an interrupted run resumes
from its checkpointed blocks; an unreachable cluster is an error naming its address."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from evaluator.core.errors import FactBoardError
from evaluator.detectors import blocks as B
from evaluator.detectors.runner import build_detector, run_detector
from evaluator.runner import Engine
from evaluator.store import evidence_file, runs

LIMIT = 12  # per split: 24 demo summaries, 3 blocks of 8
RAY = Engine("ray", workers=2, block_size=8)
LOCAL = Engine("local", block_size=8)


def _configs(tiny: dict[str, str]) -> dict[str, dict[str, Any]]:
    return {
        "summac-zs": {"checkpoint": tiny["nli"]},
        "alignscore": {
            "checkpoint": tiny["align-ckpt"],
            "options": {"base_model": tiny["align-base"]},
        },
        "minicheck": {"checkpoint": tiny["minicheck-enc"]},
    }


def _scores(path: Path) -> pd.Series:
    p = runs.read_predictions(path)
    return p.set_index("sample_id")["score"].sort_index()


@pytest.mark.parametrize("name", ["summac-zs", "alignscore", "minicheck"])
def test_ray_scores_equal_local_scores_bit_for_bit(
    name: str, ray_local: Any, tiny: dict[str, str], demo: Path
) -> None:
    kw = {"device": "cpu", "batch_size": 4, "limit": LIMIT, **_configs(tiny)[name]}
    local = run_detector(name, "demo", engine=LOCAL, **kw)
    on_ray = run_detector(name, "demo", engine=RAY, **kw)
    a, b = _scores(local), _scores(on_ray)
    assert len(a) == 2 * LIMIT and a.index.equals(b.index)
    assert np.array_equal(a.to_numpy(), b.to_numpy())  # not approximately: the same bits
    rec = runs.read_record(on_ray)
    eng = rec.config.extra["engine"]
    assert eng["name"] == "ray" and eng["workers"] == 2 and eng["block_size"] == 8
    assert eng["versions"]["ray"] == ray_local.__version__
    assert rec.config.extra["versions"]["torch"]  # recorded by the actors that scored
    assert rec.config.extra["device"] == "cpu" and rec.config.extra["dtype"] == "float32"
    assert runs.read_record(local).config.extra["engine"]["name"] == "local"
    # statistics add up over the blocks as over one local run
    sa, sb = runs.read_record(local).config.extra["stats"], rec.config.extra["stats"]
    for k in ("samples", "model_inputs", "inputs_truncated", "samples_truncated"):
        assert sa[k] == sb[k], k
    assert [p.name for p in B.checkpoint_root().glob("*")] == []  # checkpoints removed


def test_actors_that_ask_for_a_gpu_share_it_and_score_as_local(
    ray_local: Any, tiny: dict[str, str], demo: Path
) -> None:
    """`--gpus-per-worker 0.5`: two actors on one GPU. Ray Data refuses a GPU request without a
    batch size (found on a real GPU, where the CLI run failed before scoring); the module's Ray
    declares one GPU, so the request is scheduled here and the CPU scores."""
    kw = {"device": "cpu", "batch_size": 4, "limit": LIMIT, **_configs(tiny)["summac-zs"]}
    local = run_detector("summac-zs", "demo", engine=LOCAL, **kw)
    shared = Engine("ray", workers=2, block_size=8, gpus_per_worker=0.5)
    on_ray = run_detector("summac-zs", "demo", engine=shared, **kw)
    assert np.array_equal(_scores(local).to_numpy(), _scores(on_ray).to_numpy())
    assert runs.read_record(on_ray).config.extra["engine"]["gpus_per_worker"] == 0.5


def test_ray_stores_the_same_evidence_as_local(ray_local: Any, demo: Path) -> None:
    """Evidence goes through the blocks, the actors and the driver unchanged: the two engines
    store the same evidence.parquet rows, and the pairs without evidence are left out by both."""
    from tests.support.evidence import EvidenceFactory

    kw: dict[str, Any] = {"limit": LIMIT, "factory": EvidenceFactory()}
    local = run_detector("lexical-overlap", "demo", engine=LOCAL, **kw)
    on_ray = run_detector("lexical-overlap", "demo", engine=RAY, **kw)
    a, b = evidence_file.read_evidence(local), evidence_file.read_evidence(on_ray)
    assert a is not None and b is not None
    assert 0 < len(a) < 2 * LIMIT  # some pairs have evidence, some none
    pd.testing.assert_frame_equal(a, b)
    assert (local / "evidence.parquet").read_bytes() == (on_ray / "evidence.parquet").read_bytes()
    assert np.array_equal(_scores(local).to_numpy(), _scores(on_ray).to_numpy())


class KillOnce:
    """Builds the detector; the first actor to score anything SIGKILLs its own process (the
    marker file says it happened, so the restarted actor scores normally). Each scored pair is
    logged (pid, summary) to a file."""

    def __init__(self, kwargs: dict[str, Any], marker: Path, log: Path):
        self.kwargs, self.marker, self.log = kwargs, marker, log

    def __call__(self) -> Any:
        det = build_detector("minicheck", **self.kwargs)
        original = det.score
        marker, log = self.marker, self.log

        def score(documents: list[str], summaries: list[str]) -> list[float]:
            if not marker.exists():
                marker.write_text(str(os.getpid()))
                os.kill(os.getpid(), signal.SIGKILL)
            out = original(documents, summaries)
            with open(log, "a", encoding="utf-8") as fh:
                fh.writelines(f"{s!r}\n" for s in summaries)
            return out

        det.score = score
        return det


def test_a_killed_actor_is_restarted_and_every_sample_scored_once(
    ray_local: Any, tiny: dict[str, str], demo: Path, tmp_path: Path
) -> None:
    kw = {"device": "cpu", "batch_size": 4, **_configs(tiny)["minicheck"]}
    marker, log = tmp_path / "killed", tmp_path / "scored.log"
    local = run_detector("minicheck", "demo", engine=LOCAL, limit=LIMIT, **kw)
    path = run_detector(
        "minicheck", "demo", engine=RAY, limit=LIMIT, factory=KillOnce(kw, marker, log), **kw
    )
    assert marker.exists()  # an actor did die mid-run
    scored = log.read_text(encoding="utf-8").splitlines()
    assert len(scored) == 2 * LIMIT  # the killed block was scored again, and nothing twice
    preds = runs.read_predictions(path)
    assert preds["sample_id"].is_unique and len(preds) == 2 * LIMIT
    assert np.array_equal(_scores(local).to_numpy(), _scores(path).to_numpy())


class FailOn:
    """Builds the detector; scoring a block that holds `summary` raises (the run stops), and
    every pair scored is logged."""

    def __init__(self, kwargs: dict[str, Any], summary: str | None, log: Path):
        self.kwargs, self.summary, self.log = kwargs, summary, log

    def __call__(self) -> Any:
        det = build_detector("summac-zs", **self.kwargs)
        original = det.score
        bad, log = self.summary, self.log

        def score(documents: list[str], summaries: list[str]) -> list[float]:
            if bad is not None and bad in summaries:
                raise RuntimeError("interrupted")
            out = original(documents, summaries)
            with open(log, "a", encoding="utf-8") as fh:
                fh.writelines(f"{s!r}\n" for s in summaries)
            return out

        det.score = score
        return det


def test_an_interrupted_run_resumes_from_its_checkpointed_blocks(
    ray_local: Any, tiny: dict[str, str], demo: Path, tmp_path: Path
) -> None:
    from evaluator.store import ingested

    kw = {"device": "cpu", "batch_size": 4, **_configs(tiny)["summac-zs"]}
    one = Engine("ray", workers=1, block_size=8)
    samples = ingested.load_samples("demo").sort_values("sample_id")
    rows = samples.groupby("split").head(LIMIT)
    planned = B.plan(
        rows["sample_id"].tolist(), rows["document"].tolist(), rows["summary"].tolist(), 8
    )
    last = planned[planned["block"] == planned["block"].max()]["summary"].iloc[0]
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    with pytest.raises(Exception, match="interrupted"):
        run_detector(
            "summac-zs", "demo", engine=one, limit=LIMIT, factory=FailOn(kw, last, first_log), **kw
        )
    saved = list(B.checkpoint_root().glob("*/block-*.parquet"))
    checkpointed = sum(len(pd.read_parquet(f)) for f in saved)
    done_before = len(first_log.read_text(encoding="utf-8").splitlines())
    # a block scored just before the interruption may not have reached its checkpoint
    assert saved and done_before >= checkpointed > 0
    path = run_detector(
        "summac-zs", "demo", engine=RAY, limit=LIMIT, factory=FailOn(kw, None, second_log), **kw
    )
    rescored = len(second_log.read_text(encoding="utf-8").splitlines())
    assert rescored == 2 * LIMIT - checkpointed  # only the blocks not checkpointed
    local = run_detector("summac-zs", "demo", engine=LOCAL, limit=LIMIT, **kw)
    assert np.array_equal(_scores(local).to_numpy(), _scores(path).to_numpy())
    assert runs.read_record(path).config.extra["stats"]["samples"] == 2 * LIMIT


def test_an_unreachable_cluster_is_an_error_naming_its_address(demo: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"ray://127.0.0.1:{port}"
    with pytest.raises(FactBoardError, match=f"cannot reach the Ray cluster at {address}"):
        run_detector("rouge-2", "demo", engine=Engine("ray", address=address))
    from evaluator.cli.main import main

    assert (
        main(
            [
                "run",
                "--detector",
                "rouge-2",
                "--benchmark",
                "demo",
                "--engine",
                "ray",
                "--ray-address",
                f"127.0.0.1:{port}",
            ]
        )
        == 1
    )


def test_engine_options_are_checked() -> None:
    with pytest.raises(FactBoardError, match="--workers needs --engine ray"):
        Engine("local", workers=2).check()
    with pytest.raises(FactBoardError, match="unknown engine 'spark'"):
        Engine("spark").check()
    with pytest.raises(FactBoardError, match="block size must be at least 1"):
        Engine("ray", block_size=0).check()


def test_summac_conv_weights_trained_on_the_driver_travel_to_the_actors(
    tiny: dict[str, str], demo: Path
) -> None:
    """What each actor runs (DetectorSpec.build), in this process: the weights trained here go
    as file text, so an actor on another node scores with them without training again."""
    from evaluator.detectors.runner import DetectorRunSpec, _actor_spec
    from evaluator.store import ingested

    dev = ingested.load_samples("demo").query("split == 'dev'").head(16)
    det = build_detector(
        "summac-conv", checkpoint=tiny["nli"], device="cpu", options={"epochs": "5"}
    )
    det.fit(dev["document"].tolist(), dev["summary"].tolist(), [int(v) for v in dev["label"]])
    run = DetectorRunSpec("summac-conv", "demo", checkpoint=tiny["nli"], device="cpu")
    spec = _actor_spec(run, det, {"epochs": "5"})
    assert set(spec.files) == {"conv_weights"}
    twin = spec.build()
    assert not twin.needs_fit and twin.state == det.state
    docs, sums = dev["document"].tolist()[:6], dev["summary"].tolist()[:6]
    assert det.score(docs, sums) == twin.score(docs, sums)


def test_a_queued_detector_run_job_runs_on_ray(ray_local: Any, demo: Path) -> None:
    from evaluator.jobs import queue, worker

    payload = {"detector": "rouge-2", "benchmark": "demo", "engine": "ray", "workers": 2}
    queue.enqueue("detector-run", payload, job_id="ray-detector-1")
    claimed = queue.claim()
    assert claimed is not None
    worker.execute(claimed)
    done = queue.get("ray-detector-1")
    assert done is not None and done.status == "done", done.last_message
    path = runs.find_run(done.result["run_id"])  # type: ignore[index]
    assert runs.read_record(path).config.extra["engine"]["name"] == "ray"
    local = run_detector("rouge-2", "demo")
    assert np.array_equal(_scores(local).to_numpy(), _scores(path).to_numpy())


def test_the_run_records_the_splitter_that_ran_on_the_actors(
    ray_local: Any, tiny: dict[str, str], demo: Path, tmp_path: Path
) -> None:
    """The driver's machine and the actors' may differ in nltk's punkt data (a node without
    it splits with pysbd): the run's name and record say what ran where the pairs were scored,
    not what the driver has."""
    from evaluator.detectors.text import PUNKT_MISSING, splitter_used
    from tests.support.tiny_summac import punkt_installed, write_punkt_tab

    on_actors = ray_local.get(ray_local.remote(splitter_used).remote("nltk-newlines"))
    driver_root = None if on_actors != PUNKT_MISSING else write_punkt_tab(tmp_path / "nltk")
    with punkt_installed(driver_root):
        assert splitter_used("nltk-newlines") != on_actors  # the driver sees the other state
        path = run_detector(
            "minicheck", "demo", checkpoint=tiny["minicheck-enc"], limit=4, engine=RAY
        )
    rec = runs.read_record(path)
    assert rec.config.extra["fidelity"]["splitter"] == on_actors
    variant = on_actors == PUNKT_MISSING
    assert rec.model.name.endswith("[variant: splitter=pysbd]") is variant
    assert rec.config.extra["fidelity"]["faithful"] is not variant
