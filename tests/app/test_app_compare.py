"""AppTest: comparing two runs (paired bootstrap, McNemar, slices, disagreements)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from evaluator.core import formatting as F
from evaluator.core import metrics as M
from explorer import queries as Q
from explorer.store import Store
from tests.support import testdata
from tests.support.apptest import open_app_page

PAGE = "views/compare.py"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = testdata.build_demo_root(tmp_path_factory.mktemp("cmp") / "leaderboard_data")
    testdata.add_run(r, "demo", "Strong", accuracy=0.95, seed=8)
    return r


@pytest.fixture
def data(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    return root


def run_id(root: Path, part: str) -> str:
    return next(p.name for p in (root / "runs").iterdir() if part in p.name)


def open_page(params: dict[str, str | list[str]] | None = None) -> AppTest:
    return open_app_page(PAGE, params)


def test_compare_from_a_link(data: Path) -> None:
    a, b = run_id(data, "strong"), run_id(data, "random-guess")
    at = open_page({"a": a, "b": b})
    assert at.selectbox(key="cmp.a").value == a and at.selectbox(key="cmp.b").value == b
    metrics = {m.label: m.value for m in at.metric}
    s = Store(data)
    s.refresh()
    s.ensure_labels("demo")
    f = Q.pair_frame(s.cursor(), "demo", "summary", a, b)
    y, pa, pb = (f[k].to_numpy().astype(int) for k in ("label", "pred_a", "pred_b"))
    dom = f["domain"].to_numpy()
    va = M.mean_over_strata_w(lambda W, m: M.balanced_accuracy_w(W[:, m], y[m], pa[m]), dom)
    vb = M.mean_over_strata_w(lambda W, m: M.balanced_accuracy_w(W[:, m], y[m], pb[m]), dom)
    ones = np.ones((1, len(y)))
    assert metrics["A: BAcc"] == F.number(va(ones)[0])
    assert metrics["B: BAcc"] == F.number(vb(ones)[0])
    assert metrics["A − B"] == F.signed(va(ones)[0] - vb(ones)[0])
    p_shown = metrics["p-value (paired bootstrap)"]
    assert p_shown == "< 0.001" or float(p_shown) < 0.05  # 0 of 10,000 resamples: p < 0.001
    text = " ".join(m.value for m in at.markdown)
    assert "The CI excludes 0" in text
    mc = M.mcnemar_exact(pa == y, pb == y)
    assert f"**{mc.a_only}**" in text and f"**{mc.b_only}**" in text
    slices = at.dataframe[0].value
    assert {"domain: news", "edit type: antonym_swap"} <= set(slices["slice"])
    assert set(slices["significant"]) <= {"yes", "no"}  # words, not true / false
    assert all(p == "< 0.001" or p[0].isdigit() for p in slices["p"])  # never "0" or "1e-04"
    dis = at.dataframe[1].value
    assert len(dis) == int((pa != pb).sum())
    assert dis["open"].str.startswith("./samples?benchmark=demo&unit=summary&sample=").all()


def test_switching_runs_and_metric_by_widget(data: Path) -> None:
    at = open_page()
    ids = at.selectbox(key="cmp.a").options
    assert len(ids) == 5
    at.selectbox(key="cmp.b").set_value(run_id(data, "always-consistent")).run()
    at.selectbox(key="cmp.a").set_value(run_id(data, "summary-token")).run()
    at.selectbox(key="cmp.metric").set_value("fpr").run()
    assert at.query_params["metric"] == "fpr"
    assert at.query_params["b"] == run_id(data, "always-consistent")
    labels = [m.label for m in at.metric]
    assert labels[:2] == ["A: FPR", "B: FPR"]
    assert at.metric[1].value == "0.000"  # never flags a consistent summary
    # opening a disagreement in the explorer
    first = at.dataframe[1].value["sample"].iloc[0]
    at.selectbox(key="cmp.open").set_value(first).run()
    link = at.get("page_link")[0].proto
    assert link.page == "samples" and f"sample={first}" in link.query_string


def test_same_run_twice(data: Path) -> None:
    a = run_id(data, "strong")
    at = open_page({"a": a, "b": a})
    assert any("Pick two different runs" in i.value for i in at.info)


def test_label_only_runs_and_auroc(data: Path) -> None:
    at = open_page(
        {"a": run_id(data, "summary-token"), "b": run_id(data, "random-guess"), "metric": "roc_auc"}
    )
    assert any("has no scores" in c.value for c in at.caption)
    assert not at.metric


def test_a_link_to_a_deleted_run_says_so(data: Path) -> None:
    """A shared Compare link whose run no longer exists names it and shows no other run."""
    a = run_id(data, "strong")
    at = open_page({"benchmark": "demo", "a": a, "b": "demo-deleted-run-20200101"})
    err = " ".join(e.value for e in at.error).replace("\\", "")
    assert "demo-deleted-run-20200101" in err and "no longer" in err
    assert not at.metric  # no comparison computed with a stand-in run
    assert at.query_params["b"] == "demo-deleted-run-20200101"  # the link is left as it was


def test_the_compare_url_holds_every_choice(data: Path) -> None:
    at = open_page()
    assert {"benchmark", "unit", "metric", "a", "b"} <= set(at.query_params)
    shared = open_page({k: at.query_params[k] for k in at.query_params})
    assert [m.value for m in shared.metric] == [m.value for m in at.metric]


def test_the_level_reads_as_a_level(data: Path) -> None:
    a, b = run_id(data, "strong"), run_id(data, "random-guess")
    at = open_page({"a": a, "b": b})
    assert at.selectbox(key="cmp.unit").options == ["summary level"]
    assert at.selectbox(key="cmp.unit").value == "summary"
    assert "summary" in at.dataframe[1].value.columns
