"""`python -m evaluator ingest all --from FOLDER`: the release sub-folder of each benchmark is
data on its spec (BenchmarkSpec.release_folder, release_files)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evaluator.benchmarks import registry
from evaluator.core.errors import IngestError
from evaluator.ingest.folder import ingest_all


def test_every_release_benchmark_names_its_folder() -> None:
    folders = {s.name: s.release_folder for s in registry.specs() if s.release_folder}
    assert folders == {
        "factcc_explanations": "summedits",
        "faithbench": "faithbench",
        "frank": "frank",
        "llm_aggrefact": "llm_aggrefact",
        "longeval_pubmed": "longsciverify",
        "longsciverify": "longsciverify",
        "qags": "qags",
        "summedits": "summedits",
        "summexecedit": "summexecedit",
        "tofueval": "tofueval",
    }
    assert registry.get("demo").release_folder is None  # built in, not read from a release
    files = {s.name: s.release_files for s in registry.specs() if s.release_files}
    # their rows may live on the hub only
    assert files == {
        "summexecedit": "*.json*",
        "llm_aggrefact": "data/*.parquet",
        "faithbench": "data_for_release/batch_*.json",
    }


def test_ingest_all_reads_the_folders_that_are_there(
    shared_benchmarks: Path, tmp_path: Path, tmp_data_root: Path
) -> None:
    release = tmp_path / "release"
    shutil.copytree(shared_benchmarks / "qags", release / "qags")
    (release / "summexecedit").mkdir()  # no data file: skipped, not an error
    (release / "summexecedit" / "SCHEMA.md").write_text("rows on the hub\n")
    reports = list(ingest_all(release))
    assert [r.name for r in reports] == ["qags"]
    assert reports[0].n_samples > 0
    with pytest.raises(IngestError, match="not a folder"):
        list(ingest_all(tmp_path / "missing"))


def test_ingest_all_says_which_releases_it_skipped_and_why(
    tmp_path: Path, tmp_data_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evaluator.cli.main import main

    release = tmp_path / "release"
    (release / "summexecedit").mkdir(parents=True)
    (release / "summexecedit" / "SCHEMA.md").write_text("rows on the hub\n")
    (release / "llm_aggrefact").mkdir()
    (release / "llm_aggrefact" / "snapshot_2025-09.csv").write_text("model,avg\n")
    assert main(["ingest", "all", "--from", str(release)]) == 0
    lines = capsys.readouterr().out.splitlines()
    said = {line.split(":")[0]: line for line in lines}
    assert set(said) == {s.name for s in registry.specs() if s.release_folder}
    assert "holds no release file (data/*.parquet)" in said["llm_aggrefact"]
    assert "ingest llm_aggrefact --from hub" in said["llm_aggrefact"]
    assert "holds no release file (*.json*)" in said["summexecedit"]
    assert "ingest summexecedit --from hub" in said["summexecedit"]
    assert said["qags"] == f"qags: skipped: no qags/ folder in {release}"
