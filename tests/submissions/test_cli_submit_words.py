"""The CLI says what the Submit page says: the benchmark another benchmark's file belongs to,
and the prediction-file template (ids with their split, dev first) from `template`."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pandas as pd
import pytest

from evaluator.cli.main import main as cli_main
from evaluator.submissions import service as submit
from tests.support.submit import demo_copy, demo_ids


@pytest.fixture
def demo(tmp_data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_copy(tmp_data_root, tmp_path_factory)


def _other_benchmark(root: Path, name: str = "summedits") -> list[str]:
    """A copy of demo's samples under another registered benchmark's name, with other ids."""
    src, dst = root / "benchmarks" / "demo", root / "benchmarks" / name
    shutil.copytree(src, dst)
    s = pd.read_parquet(dst / "samples.parquet")
    s["sample_id"] = "se-" + s["sample_id"]
    s["benchmark"] = name
    s.to_parquet(dst / "samples.parquet", index=False)
    return sorted(s.loc[s["split"] == "test", "sample_id"])


def test_cli_submit_of_another_benchmarks_file_names_that_benchmark(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = _other_benchmark(demo)
    f = tmp_path / "p.csv"
    f.write_text("sample_id,label\n" + "".join(f"{i},1\n" for i in other))
    argv = ["submit", str(f), "--benchmark", "demo", "--model-name", "Wrong bench"]
    assert cli_main(argv) == 1
    err = capsys.readouterr().err
    assert "rejected: 1 problem\n" in err or "rejected: 2 problems\n" in err
    assert (
        f"This looks like a summedits file: {len(other):,} of its sample ids (100%) belong to "
        "summedits, not to demo. Submit it with --benchmark summedits." in err
    )


def test_the_template_command_writes_the_ids_with_their_split(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "template.csv"
    assert cli_main(["template", "demo", "-o", str(out)]) == 0
    assert "ids to predict" in capsys.readouterr().err
    t = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(t.columns) == ["sample_id", "split", "label", "score", "explanation"]
    assert list(t["sample_id"]) == demo_ids("dev") + demo_ids("test")  # dev first
    assert set(t.loc[t["sample_id"].isin(demo_ids("dev")), "split"]) == {"dev"}
    assert set(t.loc[t["sample_id"].isin(demo_ids("test")), "split"]) == {"test"}
    # the same file as the Submit page's download
    from explorer import submit as S

    assert out.read_text() == S.template_csv("demo", ("dev", "test"), "test")
    assert cli_main(["template", "demo", "--split", "dev"]) == 0
    dev_only = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype=str)
    assert set(dev_only["split"]) == {"dev"} and len(dev_only) == len(demo_ids("dev"))
    assert cli_main(["template", "demo", "--split", "train"]) == 1
    assert "split 'train' is not one of dev, test" in capsys.readouterr().err


def test_a_filled_template_with_its_split_column_is_accepted(demo: Path) -> None:
    t = pd.read_csv(io.StringIO(submit.template_csv("demo")), dtype=str, keep_default_na=False)
    t["score"] = [str((i % 7) / 7) for i in range(len(t))]  # scores only: threshold on dev
    res = submit.submit(
        t.to_csv(index=False).encode(),
        "filled.csv",
        submit.SubmissionMeta(benchmark="demo", model_name="Scores only", kind="non-llm"),
    )
    assert res.ok, res.problems
    assert not [w for w in res.warnings if "ignored column" in w]
    assert res.record is not None and res.record.threshold.policy == "dev"
