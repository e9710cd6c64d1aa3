"""AppTest: the front page (who is best on each benchmark, and who is tied with the leader)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from explorer import home as F
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
    assert "Full leaderboard of Rank19 (Falke et al. 2019)" in links
    assert not any("rank19" in x or "_" in x for x in links + heads)
    table = card_table(at, "Demo (synthetic)")
    assert set(table["Model"][:2]) == {"Strong", "Strong twin"}
    # identical predictions: tied with the best run by the paired test; the weak baselines not
    assert list(table[F.TIE_COLUMN][:2]) == ["best run", "tied"]
    assert "Always consistent" not in set(table[table[F.TIE_COLUMN] == "tied"]["Model"])
    assert all("[" in v for v in table["Score [95% CI]"])
    demo = card_text(at, "Demo (synthetic)")
    assert "leads the board" in demo and "statistically tied with 1 other FactBoard run" in demo
    assert "None" not in " ".join(str(v) for v in table.to_numpy().ravel())


def test_published_only_benchmarks_get_the_same_card(data: Path) -> None:
    at = open_app_page(PAGE)
    assert "Published numbers only" in [h.value for h in at.subheader]
    text = card_text(at, "LLM-AggreFact")
    assert "Bespoke-MiniCheck-7B leads the board: BAcc 0.774 (published:" in text
    assert "No FactBoard run yet" in text and "None" not in text
    table = card_table(at, "LLM-AggreFact")
    assert list(table.columns) == ["Model", "Kind", "Score [95% CI]", "Source"]
    assert len(table) == 5 and table["Source"].str.startswith("LLM-AggreFact leaderboard").all()
    assert not table["Source"].str.contains("http").any()  # addresses stay on the leaderboard
    assert table["Source"].iloc[0] == "LLM-AggreFact leaderboard snapshot (2024-10-25) + 1 more"
    kinds = dict(zip(table["Model"], table["Kind"], strict=True))
    assert kinds["Bespoke-MiniCheck-7B"] == "open LLM"
    link = next(p for p in at.get("page_link") if p.label == "Full leaderboard of SummEdits")
    assert "benchmark=summedits" in str(link.proto)


def card_blocks(at: AppTest, title: str) -> list[Any]:
    """The elements of the card whose subheader starts with `title`."""

    def walk(node: Any) -> list[Any]:
        kids = list(getattr(node, "children", {}).values())
        return [node] + [x for k in kids for x in walk(k)]

    for block in walk(at.main):
        kids = list(getattr(block, "children", {}).values())
        if any(
            getattr(k, "type", "") == "subheader" and str(k.value).startswith(title) for k in kids
        ):
            return walk(block)
    raise AssertionError(f"no card {title!r}")


def card_text(at: AppTest, title: str) -> str:
    els = card_blocks(at, title)
    text = [str(e.value) for e in els if getattr(e, "type", "") in ("markdown", "caption")]
    return " ".join(text).replace("\\", "")


def card_table(at: AppTest, title: str) -> pd.DataFrame:
    """The card's table (one Markdown table), its Markdown escapes removed."""
    md = next(
        str(e.value)
        for e in card_blocks(at, title)
        if getattr(e, "type", "") == "markdown" and str(e.value).startswith("| ")
    )
    return markdown_table(md)


def markdown_table(md: str) -> pd.DataFrame:
    """A Markdown table read back: its header, its rows (the rule line skipped), each cell
    split at the bars that are not escaped, its escapes removed."""
    import re

    def cells(line: str) -> list[str]:
        parts = re.split(r"(?<!\\)\|", line.strip())[1:-1]
        return [p.strip().replace("\\", "") for p in parts]

    lines = md.splitlines()
    return pd.DataFrame([cells(x) for x in lines[2:]], columns=cells(lines[0]))


@pytest.fixture(scope="module")
def release_root(tmp_path_factory: pytest.TempPathFactory, shared_benchmarks: Path) -> Path:
    """The real SummEdits, TofuEval, QAGS and LongSciVerify releases, two weight-free
    heuristic runs on SummEdits (novel-entities, lexical-overlap) and two weak ones on
    TofuEval."""
    from evaluator.detectors.runner import run_detector
    from evaluator.ingest import pipeline

    r = testdata.build_demo_root(tmp_path_factory.mktemp("front-real") / "leaderboard_data")
    for name in ("summedits", "tofueval", "qags", "longsciverify"):
        pipeline.ingest(name, shared_benchmarks / name, root=r)
    run_detector("novel-entities", "summedits", root=r)
    run_detector("lexical-overlap", "summedits", root=r)
    testdata.add_run(r, "tofueval", "Heuristic A", accuracy=0.62, seed=3, kind="non-llm")
    testdata.add_run(r, "tofueval", "Heuristic B", accuracy=0.55, seed=4, kind="non-llm")
    return r


def test_a_heuristic_run_never_leads_above_published_numbers(
    release_root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """After weight-free heuristic runs on SummEdits, the card named the best of them the
    leader ("novel-entities leads, significantly ahead of every other run (95%)") at BAcc
    0.600 while GPT-4's published 0.824 was nowhere on it."""
    monkeypatch.setenv("FACTBOARD_DATA", str(release_root))
    monkeypatch.setenv("FACTBOARD_CACHE", str(tmp_path / "cache"))
    at = open_app_page(PAGE)
    text = card_text(at, "SummEdits")
    assert "GPT-4 leads the board: BAcc 0.824 (published: SummEdits paper, Table 9" in text
    assert "Best FactBoard run: novel-entities, BAcc 0.600 [" in text
    assert "novel-entities leads" not in text and "ahead of every other run" not in text
    assert "different data" in text  # 10 published domains against the release's 8
    table = card_table(at, "SummEdits")
    assert table["Model"].iloc[0] == "GPT-4" and "novel-entities" in set(table["Model"])
    run = table.set_index("Model").loc["novel-entities"]
    assert run[F.TIE_COLUMN] == "best run" and run["Source"] == "FactBoard run"
    assert "Human Perf." not in set(table["Model"]) and "GPT4 Oracle" not in set(table["Model"])
    assert "human performance: BAcc 0.909" in text
    # TofuEval's papers publish per subset only: no run is said to lead, the subsets are shown
    tofu = card_text(at, "TofuEval")
    assert "leads the board" not in tofu and "Best FactBoard run: Heuristic A" in tofu
    assert "mediasum+marginal: best published GPT-4, BAcc 0.789" in tofu
    # QAGS and LongSciVerify, ingested without runs: their per-subset numbers, not "No number"
    qags = card_text(at, "QAGS")
    assert "No number yet" not in qags
    assert "dataset: xsum: best published QAGS, Pearson r 0.175" in qags
    lsv = card_text(at, "LongSciVerify")
    assert "No number yet" not in lsv and "pubmed: best published" in lsv
    assert "run(s)" not in " ".join(c.value for c in at.caption)


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
        assert notice.label.startswith("⚠️ 2 files")
        listed = notice.dataframe[0].value
        assert set(listed["folder"]) == {"demo-truncated-000000", "demo-bad-value-000000"}
        assert any("results.0.value" in p for p in listed["problem"])
        models = " ".join(
            " ".join(map(str, d.value.get("Model", []))) for d in at.dataframe
        ) + " ".join(m.value for m in at.markdown if m.value.startswith("| "))  # card tables
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
