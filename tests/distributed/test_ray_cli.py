"""A run as a user makes it with `--engine ray` and no cluster: a fresh process, Ray started by
the run through evaluator.distributed.cluster.connect (the other Ray tests start their own Ray
in the test process, so connect only finds it), from a folder other than the checkout and
without PYTHONPATH: Ray's workers import the evaluator from the checkout the job names
(code_search_path), and the run is written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_a_cli_run_starts_its_own_ray_and_writes_the_run(
    tmp_data_root: Path, tmp_path: Path
) -> None:
    pytest.importorskip("ray")
    from evaluator.ingest.demo import build_demo

    list(build_demo(root=tmp_data_root))
    before = set((tmp_data_root / "runs").iterdir())
    # the driver finds the checkout on its own path only: neither PYTHONPATH nor the current
    # folder gives it to Ray's workers
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_") and k != "PYTHONPATH"}
    env["FACTBOARD_DATA"] = str(tmp_data_root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    args = ["run", "--detector", "rouge-2", "--benchmark", "demo", "--limit", "4"]
    args += ["--engine", "ray", "--workers", "1"]
    code = (
        f"import sys; sys.path.insert(0, {str(REPO)!r}); from evaluator.cli.main import main; "
        f"raise SystemExit(main({args!r}))"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    [run] = [p for p in set((tmp_data_root / "runs").iterdir()) - before if p.is_dir()]
    record = json.loads((run / "run.json").read_text())
    engine = record["config"]["extra"]["engine"]
    assert engine["name"] == "ray" and engine["workers"] == 1
    assert engine["address"] == "local"
    assert record["counts"]["n"] > 0
