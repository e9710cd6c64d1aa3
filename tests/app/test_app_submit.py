"""AppTest for the Submit and Queue pages: results with CIs at once, the exact problems of a bad
file, untrusted text shown as text, the private email, maintainer moderation, the job list."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evaluator.jobs import queue
from evaluator.store import runs
from evaluator.submissions import moderation
from evaluator.submissions import service as submit
from tests.support.submit import REPO, demo_copy, predictions_csv

SUBMIT_PAGE = str(REPO / "views" / "submit.py")
QUEUE_PAGE = str(REPO / "views" / "queue.py")
TOKEN = "maintainer-token-0123456789"
HOSTILE_NAME = "Evil **bold** [click](javascript:alert(1)) _x_ #h"
HOSTILE_DESCRIPTION = "<script>alert('x')</script> **not bold** <img src=x onerror=alert(1)>"


@pytest.fixture
def demo(tmp_data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_copy(tmp_data_root, tmp_path_factory)


def page(path: str) -> AppTest:
    """The page through app.py's navigation (its links to other pages resolve there)."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.switch_page(str(Path(path).relative_to(REPO)))
    return at.run()


def fill_and_submit(at: AppTest, data: bytes, name: str = "Page model", **fields: str) -> AppTest:
    at.text_input(key="submit.name").input(name)
    for key, value in fields.items():
        widget = at.text_area(key=key) if key == "submit.description" else at.text_input(key=key)
        widget.input(value)
    at.file_uploader(key="submit.file").set_value(("preds.csv", data, "text/csv"))
    next(b for b in at.button if b.label == "Submit").click()
    return at.run()


def _query(qs: str) -> dict[str, str]:
    from urllib.parse import parse_qsl

    return dict(parse_qsl(qs))


def all_text(at: AppTest, kinds: tuple[str, ...]) -> list[str]:
    return [str(e.value) for kind in kinds for e in at.get(kind)]


def test_no_benchmark_yet(tmp_data_root: Path) -> None:
    at = page(SUBMIT_PAGE)
    assert not at.exception
    assert at.info[0].value.startswith("No benchmark's samples are on this board yet")
    assert "python -m" not in at.info[0].value


def test_a_valid_upload_shows_its_results_with_cis_at_once(demo: Path) -> None:
    at = page(SUBMIT_PAGE)
    assert not at.exception
    assert at.selectbox(key="submit.benchmark").value == "demo"
    assert at.selectbox(key="submit.split").value == "test"
    assert [b.label for b in at.get("download_button")] == ["⬇️ Template (CSV)"]
    at = fill_and_submit(at, predictions_csv(60), "Page model", **{"submit.org": "Lab"})
    assert not at.exception
    assert at.success[0].value.startswith("Scored and added to the board as run `demo-page-model-")
    texts = all_text(at, ("text",))
    assert "Threshold: labels as given (no threshold)" in texts
    assert "Samples: 210  ·  predicted 210  ·  missing 0  ·  unusable 0" in texts
    table = at.dataframe[0].value
    # the board's words: no raw metric ids, no ci_low, no empty judge column
    assert list(table.columns) == ["split", "level", "slice", "metric", "value", "95% CI", "n"]
    assert "balanced_accuracy" not in set(table["metric"])
    bacc = table[table["metric"] == "BAcc"].iloc[0]
    assert bacc["level"] == "summary level" and bacc["slice"] == "Overall" and bacc["n"] == 210
    [run] = [r for r in runs.list_runs().runs if r.origin == "submitted"]
    assert run.model.name == "Page model" and run.model.org == "Lab"
    res = run.result("balanced_accuracy")
    assert bacc["value"] == f"{res.value:.3f}"  # the board's form, not "0.499 – 0.502"
    assert bacc["95% CI"] == f"[{res.ci_low:.3f}, {res.ci_high:.3f}]"
    # links to its row on the board and to the samples it gets wrong
    links = {p.label: p for p in at.get("page_link")}
    board = links["Its row on the leaderboard"].proto
    assert board.page_script_hash  # a page of the app (the leaderboard is its default page)
    assert _query(board.query_string) == {
        "benchmark": "demo",
        "slice": "overall",
        "q": "Page model",
        "unit": "summary",
        "metric": "balanced_accuracy",
    }
    samples = links["The samples it gets wrong"].proto
    assert samples.page == "samples" and samples.page_script_hash != board.page_script_hash
    assert _query(samples.query_string) == {
        "benchmark": "demo",
        "wrong": run.run_id,
        "unit": "summary",
    }


def test_a_bad_file_lists_every_problem_exactly(demo: Path) -> None:
    at = page(SUBMIT_PAGE)
    at = fill_and_submit(at, b"sample_id,label\nnope,1\ndemo-news-04_og,maybe\n", "Bad upload")
    assert not at.exception
    assert at.error[0].value.startswith("3 problems with submission ")
    assert at.code[0].value == "\n".join(
        [
            "line 2: 1 sample_id not in the benchmark: 'nope' (line 2)",
            "line 3: label 'maybe' is not one of 0/1, yes/no, consistent/inconsistent, true/false",
            "209 sample_ids of the scored split have no prediction, e.g. 'demo-meeting-04_0', "
            "'demo-meeting-04_1', 'demo-meeting-04_2', 'demo-meeting-04_3', 'demo-meeting-04_4'",
        ]
    )
    assert not [r for r in runs.list_runs().runs if r.origin == "submitted"]


def test_a_refused_name_is_reported_not_rendered(demo: Path) -> None:
    at = fill_and_submit(page(SUBMIT_PAGE), predictions_csv(61), "<script>alert(1)</script>")
    assert at.code[0].value.split("\n")[0] == (
        "model name: must start with a letter or a digit, not '<'"
    )
    for kind in ("markdown", "html", "success", "error", "info", "warning", "caption"):
        for v in all_text(at, (kind,)):
            assert "<script>" not in v


def test_html_js_and_markdown_are_shown_as_text(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", TOKEN)
    email = "hidden.person@example.org"
    at = fill_and_submit(
        page(SUBMIT_PAGE),
        predictions_csv(62, "<img src=x onerror=alert(1)> **explained**"),
        HOSTILE_NAME,
        **{"submit.description": HOSTILE_DESCRIPTION, "submit.email": email},
    )
    assert not at.exception
    assert at.success, [e.value for e in at.error]
    # the model name is shown in a text element, verbatim: never parsed as Markdown or HTML
    assert f"Model: {HOSTILE_NAME}  ·  demo  ·  split test" in all_text(at, ("text",))
    rendered = all_text(at, ("markdown", "caption", "success", "info", "warning", "error", "html"))
    for v in rendered:
        assert HOSTILE_NAME not in v and "<script>" not in v and "<img" not in v
    # the maintainers' table carries it as a dataframe cell (text)
    at.text_input(key="submit.admin_token").input(TOKEN)
    at = at.run()
    names = list(at.dataframe[-1].value["model"])
    assert names == [HOSTILE_NAME]
    # the contact email appears nowhere but in its own input box
    shown = all_text(
        at, ("markdown", "caption", "success", "info", "warning", "error", "text", "code")
    )
    assert not any(email in v for v in shown)
    for df in at.dataframe:
        assert email not in df.value.to_csv()
    [run] = moderation.submitted_runs()
    assert run.model.description == HOSTILE_DESCRIPTION


def test_moderation_is_off_without_the_token_variable(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FACTBOARD_ADMIN_TOKEN", raising=False)
    at = page(SUBMIT_PAGE)
    assert "Moderation is off: set FACTBOARD_ADMIN_TOKEN where the app runs to enable it." in [
        c.value for c in at.caption
    ]
    assert not [t for t in at.text_input if t.key == "submit.admin_token"]


def test_a_maintainer_hides_and_deletes_a_run(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", TOKEN)
    res = submit.submit(predictions_csv(63), "p.csv", submit.SubmissionMeta("demo", "To hide"))
    assert res.ok and res.run_id
    at = page(SUBMIT_PAGE)
    at.text_input(key="submit.admin_token").input("wrong-token")
    at = at.run()
    assert [e.value for e in at.error] == ["wrong maintainer token"]
    assert not [b for b in at.button if b.key == "submit.mod_apply"]
    at.text_input(key="submit.admin_token").input(TOKEN)
    at = at.run()
    assert at.selectbox(key="submit.mod_run").value == res.run_id
    at.radio(key="submit.mod_action").set_value("hide")
    at.button(key="submit.mod_apply").click()
    at = at.run()
    assert not at.exception
    assert at.success[-1].value == f"hide: {res.run_id}"
    assert runs.read_record(runs.find_run(res.run_id)).hidden
    assert res.run_id not in {r.run_id for r in runs.list_runs().runs}
    assert list(at.dataframe[-1].value["hidden"]) == [True]
    at.radio(key="submit.mod_action").set_value("delete")
    at = at.run()
    assert at.button(key="submit.mod_apply").disabled  # until confirmed
    at.checkbox(key="submit.mod_sure").check()
    at = at.run()
    at.button(key="submit.mod_apply").click()
    at = at.run()
    assert at.success[-1].value == f"delete: {res.run_id}"
    assert moderation.submitted_runs() == []
    assert "No submitted run." in [c.value for c in at.caption]


# --------------------------------------------------------------------------------------------
# queue page


def test_the_queue_page_without_jobs(tmp_data_root: Path) -> None:
    at = page(QUEUE_PAGE)
    assert not at.exception
    assert [m.value for m in at.metric] == ["0", "0", "0", "0"]
    assert at.info[0].value.startswith("No job here.")


def test_the_queue_page_shows_jobs_with_progress_and_messages(tmp_data_root: Path) -> None:
    done = queue.enqueue("judge", {"run_id": "r-done"})
    failed = queue.enqueue("judge", {"run_id": "r-failed"})
    running = queue.enqueue("detector-run", {"detector": "summac"})
    pending = queue.enqueue("judge", {"run_id": "r-pending"})
    for expected in (done, failed, running):
        job = queue.claim()
        assert job is not None and job.id == expected.id
        if job.id == done.id:
            queue.complete(job, {"run_id": "r-new"})
        elif job.id == failed.id:
            queue.fail(job, "ValueError: <b>no</b> explanations in run r-failed")
        else:
            queue.report(job, "scored 40 of 100 samples", 0.4)
    at = page(QUEUE_PAGE)
    assert not at.exception
    assert [m.value for m in at.metric] == ["1", "1", "1", "1"]
    table = at.dataframe[0].value
    assert list(table["job"]) == [pending.id, running.id, failed.id, done.id]  # newest first
    by_id = table.set_index("job")
    assert by_id.loc[running.id, "progress"] == 0.4
    assert by_id.loc[running.id, "message"] == "scored 40 of 100 samples"
    assert by_id.loc[failed.id, "message"] == "ValueError: <b>no</b> explanations in run r-failed"
    assert by_id.loc[failed.id, "status"] == "failed"
    assert by_id.loc[done.id, "attempts"] == "1/3"
    at.radio(key="queue.status").set_value("failed")
    at = at.run()
    assert list(at.dataframe[0].value["job"]) == [failed.id]
    texts = all_text(at, ("text",))
    assert "Error: ValueError: <b>no</b> explanations in run r-failed" in texts
    messages = list(at.dataframe[1].value["message"])
    assert messages[0] == "failed: ValueError: <b>no</b> explanations in run r-failed"
    assert messages[-1] == "queued"


def test_the_template_lists_dev_then_test_ids(demo: Path) -> None:
    from evaluator.benchmarks import registry
    from explorer import submit as S
    from tests.support.submit import demo_ids

    text = S.template_csv("demo", registry.get("demo").splits, "test")
    lines = text.splitlines()
    assert lines[0] == "sample_id,split,label,score,explanation"
    ids = [line.split(",")[0] for line in lines[1:]]
    assert ids == demo_ids("dev") + demo_ids("test")  # one header, dev first
    assert S.template_splits(("dev", "test"), "dev") == ["dev"]
    assert S.template_splits(("test",), "test") == ["test"]
    # the page offers it, named after both splits; scores for every id of it are accepted
    at = page(SUBMIT_PAGE)
    [button] = at.get("download_button")
    assert "dev ids first" in button.proto.help


def _other_benchmark(root: Path, name: str = "summedits") -> list[str]:
    """A copy of demo's samples under another registered benchmark's name, with other ids."""
    import shutil

    import pandas as pd

    src, dst = root / "benchmarks" / "demo", root / "benchmarks" / name
    shutil.copytree(src, dst)
    s = pd.read_parquet(dst / "samples.parquet")
    s["sample_id"] = "se-" + s["sample_id"]
    s["benchmark"] = name
    s.to_parquet(dst / "samples.parquet", index=False)
    return sorted(s.loc[s["split"] == "test", "sample_id"])


def test_a_file_of_another_benchmark_says_which_one_it_looks_like(demo: Path) -> None:
    from evaluator.submissions import match

    other = _other_benchmark(demo)
    data = ("sample_id,label\n" + "".join(f"{i},1\n" for i in other)).encode()
    assert match.uploaded_ids(data, "p.csv") == set(other)
    found = match.looks_like(set(other), "demo", demo)
    assert found == match.Match("summedits", 1.0, len(other))
    assert match.looks_like(set(other), "summedits", demo) is None  # the chosen one fits
    assert match.looks_like({"nope", "nada"}, "demo", demo) is None
    at = fill_and_submit(page(SUBMIT_PAGE), data, "Wrong bench")
    assert not at.exception
    assert at.error[0].value.startswith("1 problem with submission ")
    assert [w.value for w in at.warning] == [
        ui_escaped(
            f"This looks like a SummEdits file: {len(other)} of its sample ids (100%) belong to "
            f"SummEdits, not to {benchmark_title('demo')}. Pick SummEdits above and upload it "
            "again."
        )
    ]


def benchmark_title(name: str) -> str:
    from explorer.widgets import benchmark_title as title

    return title(name)


def ui_escaped(text: str) -> str:
    from explorer.ui import md_escape

    return md_escape(text)


def test_a_scores_only_file_takes_one_page(demo: Path) -> None:
    """Template, scores only, upload: the page says how scores become labels before the upload
    and after it, in plain words, and writes no '1 rows' or 'run(s)'."""
    import io

    import pandas as pd

    at = page(SUBMIT_PAGE)
    steps = " ".join(m.value for m in at.markdown)
    assert "Download the template" in steps and "Only scores?" in steps
    assert "Keep the dev rows the template lists" in steps
    assert "cut-off" in at.selectbox(key="submit.policy").format_func("auto")
    [button] = at.get("download_button")
    template = submit.template_csv("demo")
    filled = pd.read_csv(io.StringIO(template), dtype=str, keep_default_na=False)
    filled["score"] = [f"{(i * 37 % 100) / 100:.2f}" for i in range(len(filled))]
    at = fill_and_submit(at, filled.to_csv(index=False).encode(), "Scores only model")
    assert not at.exception and at.success
    texts = all_text(at, ("text",))
    [line] = [t for t in texts if t.startswith("Threshold: ")]
    assert "or more counts as consistent, below as inconsistent" in line
    assert "the cut-off that separates the two best on the dev rows of your file" in line
    every = " ".join(all_text(at, ("text", "markdown", "caption", "info", "success", "warning")))
    assert "(s)" not in every and " 1 rows" not in every and "–" not in every


def test_a_full_disk_is_said_on_the_page(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC before the record was saved: the page had no handler and showed a traceback."""
    import errno
    import os

    from evaluator.submissions import records

    def full(*a: object, **k: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    at = page(SUBMIT_PAGE)
    monkeypatch.setattr(records, "write_json_atomic", full)
    at = fill_and_submit(at, b"sample_id,label\ndemo-news-04_og,1\n", "Full disk model")
    assert not at.exception
    assert any("was not saved" in e.value and "disk is full" in e.value for e in at.error)
