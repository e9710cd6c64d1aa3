"""The pages: the board shows each run's verification status (a column of the column picker)
and filters on it (URL-backed); the Submit page takes a recipe; the Queue page lets a
maintainer approve a submitted run's reproduction."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from evaluator.detectors.runner import predict_detector
from evaluator.jobs import queue, reproduce_run
from evaluator.store import runs
from evaluator.submissions import verification
from evaluator.submissions.service import SubmissionMeta, submit
from tests.support.apptest import open_app_page

TOKEN = "maintainer-token-0123456789"


def _csv(frame: pd.DataFrame) -> bytes:
    buf = io.StringIO()
    frame[["sample_id", "score"]].to_csv(buf, index=False)
    return buf.getvalue().encode()


@pytest.fixture
def three(demo_root: Path) -> dict[str, str]:
    """Three submitted runs: one reproduced, one that differs, one without a recipe."""
    p = predict_detector("lexical-overlap", "demo", root=demo_root)
    p.checkpoints.clear()
    same = p.predictions
    off = same.copy()
    test = off["sample_id"].isin(p.inputs.samples.query("split == 'test'")["sample_id"])
    at = off.index[test.to_numpy()][:10]  # ten test samples' scores turned round
    off.loc[at, "score"] = 1.0 - off.loc[at, "score"]
    recipe = {"detector": "lexical-overlap"}
    ids = {}
    for name, frame, r in (
        ("Verified overlap", same, recipe),
        ("Differing overlap", off, recipe),
        ("Self-reported file", same.assign(score=np.random.default_rng(0).random(len(same))), None),
    ):
        res = submit(
            _csv(frame),
            "p.csv",
            SubmissionMeta(benchmark="demo", model_name=name, recipe=r),
            data_root=demo_root,
            resamples=100,
        )
        assert res.ok, res.problems
        ids[name] = str(res.run_id)
    for name in ("Verified overlap", "Differing overlap"):
        verification.verify(ids[name], demo_root, resamples=100)
    return ids


def _table(at: AppTest) -> pd.DataFrame:
    return at.dataframe[0].value


def test_the_board_shows_and_filters_the_verification_status(three: dict[str, str]) -> None:
    at = open_app_page("views/leaderboard.py", {"cols": ["verified"]})
    assert not at.exception
    t = _table(at).set_index("Model")
    assert t.loc["Verified overlap", "Verification"] == "✅ reproduced: identical on 294 samples"
    differs = t.loc["Differing overlap", "Verification"]
    assert differs.startswith("⚠️ differs: ")
    assert "labels differ" in differs and "paired 95% CI" in differs
    assert t.loc["Self-reported file", "Verification"] == "📝 self-reported"

    # the run's card says it too
    at = open_app_page("views/leaderboard.py", {"run": three["Differing overlap"]})
    assert any(t.value.startswith("Verification: ⚠️ differs: ") for t in at.text)

    at = open_app_page("views/leaderboard.py", {"verified": "reproduced"})
    assert list(_table(at)["Model"]) == ["Verified overlap"]
    at.multiselect(key="lb.verified").set_value(["differs", "self-reported"]).run()
    assert set(_table(at)["Model"]) == {"Differing overlap", "Self-reported file"}
    assert at.query_params["verified"] == ["differs", "self-reported"]


def test_the_queue_page_approves_a_reproduction(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", TOKEN)
    p = predict_detector("lexical-overlap", "demo", root=demo_root)
    p.checkpoints.clear()
    res = submit(
        _csv(p.predictions),
        "p.csv",
        SubmissionMeta(
            benchmark="demo", model_name="Awaiting", recipe={"detector": "lexical-overlap"}
        ),
        data_root=demo_root,
        resamples=100,
    )
    assert res.ok and res.run_id
    at = open_app_page("views/queue.py")
    assert not at.exception
    at.text_input(key="queue.admin_token").input(TOKEN).run()
    awaiting = at.dataframe[0].value
    assert list(awaiting["run"]) == [res.run_id]
    assert awaiting["recipe"][0] == "detector lexical-overlap, options unit=summary"
    assert awaiting["status"][0] == "⏳ pending"
    at.selectbox(key="queue.reproduce_run").set_value(res.run_id).run()
    at.button(key="queue.approve").click().run()
    assert not at.exception
    [job] = queue.list_jobs("pending")
    assert job.kind == reproduce_run.KIND and job.payload["run_id"] == res.run_id
    done = [s.value for s in at.success if s.value.startswith("reproduction of")]
    assert done and done[0].endswith(" is pending")  # (escaped for Markdown)
    # the worker runs it and the run is marked reproduced
    from evaluator.jobs import worker

    assert worker.run_worker(once=True, data_root=demo_root) == 1
    rec = runs.read_record(runs.find_run(res.run_id, demo_root))
    assert verification.record_status(rec) == "reproduced"


def test_the_submit_page_has_a_recipe_form(demo_root: Path) -> None:
    """The form's recipe fields make the recipe the service checks (AppTest cannot upload a
    file, so the service's path is tested above and the form's fields here)."""
    from evaluator.submissions import recipes

    at = open_app_page("views/submit.py")
    at.text_input(key="submit.name").input("Form overlap")
    at.selectbox(key="submit.recipe_kind").set_value("detector")
    at.text_input(key="submit.recipe_detector").input("lexical-overlap")
    at.text_input(key="submit.recipe_checkpoint").input("org/model")
    at.text_area(key="submit.recipe_options").input("unit=summary\n")
    submit_button = next(b for b in at.button if "submit.form" in str(b.key))
    at = submit_button.click().run()
    assert not at.exception
    assert [e.value for e in at.error] == ["Choose a prediction file to upload."]
    made = recipes.from_form(
        at.selectbox(key="submit.recipe_kind").value,
        {
            "detector": at.text_input(key="submit.recipe_detector").value,
            "checkpoint": at.text_input(key="submit.recipe_checkpoint").value,
            "options": at.text_area(key="submit.recipe_options").value,
            "llm": at.text_input(key="submit.recipe_llm").value,
            "temperature": at.number_input(key="submit.recipe_temperature").value,
        },
    )
    assert made == {
        "kind": "detector",
        "detector": "lexical-overlap",
        "checkpoint": "org/model",
        "options": {"unit": "summary"},
    }
    assert recipes.parse_recipe(made)[1] == [
        "recipe.revision: required with a checkpoint (a commit hash, or a tag), so the same "
        "weights are re-run"
    ]
