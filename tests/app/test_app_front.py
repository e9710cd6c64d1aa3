"""AppTest: the front page (who is best on each benchmark, and who is tied with the leader)."""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer import front as F
from tests.support import testdata
from tests.support.apptest import open_app_page

PAGE = "views/home.py"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = testdata.build_demo_root(tmp_path_factory.mktemp("front") / "leaderboard_data")
    testdata.add_run(r, "demo", "Strong", accuracy=0.95, seed=8)
    testdata.add_run(r, "demo", "Strong twin", accuracy=0.95, seed=8)  # the same predictions
    return r


@pytest.fixture
def data(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    return root


def test_front_page_names_the_leaders_and_the_ties(data: Path) -> None:
    at = open_app_page(PAGE)
    assert at.title[0].value == "📋 FactBoard"
    heads = [h.value for h in at.subheader]
    assert "Synthetic demo" in " ".join(heads) or any("synthetic demo" in h for h in heads)
    # published-only benchmarks listed by their titles (links), never by raw ids
    links = [p.label for p in at.get("page_link")]
    assert "Rank19 (Falke et al. 2019)" in links and "rank19" not in links
    assert not any("_" in x for x in links + heads)
    table = next(d.value for d in at.dataframe if "Strong" in set(d.value["Model"]))
    assert set(table["Model"][:2]) == {"Strong", "Strong twin"}
    # identical predictions: tied with the leader by the paired test; the weak baselines not
    assert list(table["Tied with the leader"][:2]) == ["leader", "yes"]
    assert "Always consistent" not in set(table[table["Tied with the leader"] == "yes"]["Model"])
    assert all("[" in v for v in table["Score [95% CI]"])
    lines = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "statistically tied" in lines
    assert "None" not in " ".join(str(v) for v in table.to_numpy().ravel())


def test_published_only_benchmarks_in_one_compact_list(data: Path) -> None:
    at = open_app_page(PAGE)
    assert "Published numbers only" in [h.value for h in at.subheader]
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "best published:" in captions and "None" not in captions
    link = next(p for p in at.get("page_link") if p.label == "SummEdits")
    assert "benchmark=summedits" in str(link.proto)


def test_tie_line() -> None:
    import pandas as pd

    t = pd.DataFrame(
        {
            "Rank": ["1", "1", "3"],
            "Model": ["A", "B", "C"],
            "Tied with the leader": ["leader", "yes", ""],
        }
    )
    assert F.tie_line(t, 3).startswith("A leads, but 1 other run(s)")
    t2 = t.assign(**{"Tied with the leader": ["leader", "", ""]})
    assert "significantly ahead" in F.tie_line(t2, 3)
    assert F.ci_text(0.5, float("nan"), float("nan")) == "0.500"
    assert F.ci_text(float("nan"), 0.1, 0.2) == "—"


def test_unreadable_run_folders_are_noticed_not_fatal(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A truncated predictions file and a run.json the engine rejects: both pages render,
    name the problem in a folded notice, and leave those runs off the board."""
    import json
    import shutil

    r = tmp_path / "leaderboard_data"
    shutil.copytree(root, r)
    src = next(p for p in (r / "runs").iterdir() if "strong-twin" in p.name)
    for name, edit in (("demo-truncated-000000", "truncate"), ("demo-bad-value-000000", "json")):
        d = r / "runs" / name
        shutil.copytree(src, d)
        rec = json.loads((d / "run.json").read_text(encoding="utf-8"))
        rec["run_id"] = name
        rec["model"]["name"] = name
        if edit == "json":
            rec["results"][0]["value"] = "abc"
        (d / "run.json").write_text(json.dumps(rec), encoding="utf-8")
        if edit == "truncate":
            data = (d / "predictions.parquet").read_bytes()
            (d / "predictions.parquet").write_bytes(data[: len(data) // 2])
    monkeypatch.setenv("FACTBOARD_DATA", str(r))
    for page in (PAGE, "views/leaderboard.py"):
        at = open_app_page(page, {"benchmark": "demo"})
        notice = next(e for e in at.expander if "could not be read" in e.label)
        assert notice.label.startswith("⚠️ 2 file(s)")
        listed = notice.dataframe[0].value
        assert set(listed["folder"]) == {"demo-truncated-000000", "demo-bad-value-000000"}
        assert any("results.0.value" in p for p in listed["problem"])
        models = " ".join(" ".join(map(str, d.value.get("Model", []))) for d in at.dataframe)
        assert "demo-truncated" not in models and "demo-bad-value" not in models


@pytest.mark.parametrize("page", [PAGE, "views/leaderboard.py"])
def test_an_empty_store_says_how_to_start(
    page: str, tmp_data_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # nothing at all: the shipped published numbers are on every data root, so none here
    monkeypatch.setenv("FACTBOARD_REPORTED", str(tmp_data_root / "no-published-numbers"))
    at = open_app_page(page)
    assert any("No benchmark and no result yet" in i.value for i in at.info)
    assert not at.dataframe
