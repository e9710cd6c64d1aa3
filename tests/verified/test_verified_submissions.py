"""Submitted runs with a recipe: the worker re-runs the recipe and records the run's verification
status (reproduced, or differs with the figures); a submission without a recipe is
self-reported; a bad recipe is refused naming its field."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from evaluator.cli.main import main
from evaluator.detectors.runner import predict_detector
from evaluator.jobs import queue, reproduce_run, worker
from evaluator.store import runs
from evaluator.submissions import recipes, verification
from evaluator.submissions.service import SubmissionMeta, submit
from tests.verified.test_detector_packages import installed  # noqa: F401 (a fixture)

TOKEN = "maintainer-token-0123456789"


def _csv(frame: pd.DataFrame) -> bytes:
    buf = io.StringIO()
    frame[["sample_id", "score"]].to_csv(buf, index=False)
    return buf.getvalue().encode()


def _lexical_predictions(root: Path) -> pd.DataFrame:
    p = predict_detector("lexical-overlap", "demo", root=root)
    p.checkpoints.clear()
    return p.predictions


def _submit(root: Path, data: bytes, name: str, recipe: dict | None) -> str:
    res = submit(
        data,
        "preds.csv",
        SubmissionMeta(benchmark="demo", model_name=name, recipe=recipe),
        data_root=root,
        resamples=200,
    )
    assert res.ok, res.problems
    assert res.run_id is not None
    return res.run_id


def _status(root: Path, run_id: str) -> str:
    return verification.record_status(runs.read_record(runs.find_run(run_id, root)))


def test_a_recipe_that_reproduces_bit_for_bit_is_marked_reproduced(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", TOKEN)
    preds = _lexical_predictions(demo_root)
    run_id = _submit(demo_root, _csv(preds), "My overlap", {"detector": "lexical-overlap"})
    rec = runs.read_record(runs.find_run(run_id, demo_root))
    assert rec.submission is not None
    assert rec.submission["recipe"] == {
        "kind": "detector",
        "detector": "lexical-overlap",
        "splits": ["dev", "test"],
        "unit": "summary",
    }
    assert _status(demo_root, run_id) == "pending"

    job = reproduce_run.approve(run_id, TOKEN, data_root=demo_root, resamples=200)
    assert reproduce_run.approve(run_id, TOKEN, data_root=demo_root).id == job.id  # once
    assert worker.run_worker(once=True, data_root=demo_root) == 1
    done = queue.get(job.id)
    assert done is not None and done.status == "done", done and done.error
    assert done.result is not None and done.result["status"] == "reproduced"
    assert _status(demo_root, run_id) == "reproduced"
    v = runs.read_record(runs.find_run(run_id, demo_root)).submission["verification"]  # type: ignore[index]
    assert v["labels_differ"] == 0 and v["max_score_difference"] == 0.0
    assert v["metric"]["difference"] == 0.0

    assert main(["runs", "--benchmark", "demo"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith(run_id))
    assert " reproduced " in line

    # the exports and the Every Eval Ever record carry it
    from evaluator.interop import eee
    from evaluator.interop.export import run_files
    from evaluator.store.export import run_rows

    rows = run_rows(demo_root, "demo")
    assert set(rows.loc[rows["run_id"] == run_id, "verification"]) == {"reproduced"}
    assert "reproducible" in set(rows["verification"])  # the demo's own baseline runs
    record = run_files(run_id, demo_root).record
    eee.check_record(record)
    source = record["source_metadata"]
    assert source["evaluator_relationship"] == "third_party"
    details = source["additional_details"]
    assert details["factboard_verification"] == "reproduced"
    assert details["factboard_verification_details"] == "identical on 294 samples"
    assert json.loads(details["factboard_recipe"])["detector"] == "lexical-overlap"


def test_a_recipe_that_differs_is_marked_differs_with_its_figures(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", TOKEN)
    preds = _lexical_predictions(demo_root).copy()
    # the submitted scores differ from what the recipe makes on the first six samples
    preds.loc[preds.index[:6], "score"] = 1.0 - preds.loc[preds.index[:6], "score"]
    run_id = _submit(demo_root, _csv(preds), "Not quite overlap", {"detector": "lexical-overlap"})
    outcome = verification.verify(run_id, demo_root, resamples=200)
    assert outcome["status"] == "differs"
    assert outcome["scores_differ"] == 6
    assert outcome["max_score_difference"] > 0
    assert outcome["metric"]["name"] == "balanced_accuracy"
    assert (
        outcome["metric"]["ci_low"]
        <= outcome["metric"]["difference"]
        <= outcome["metric"]["ci_high"]
    )
    assert _status(demo_root, run_id) == "differs"
    sub = runs.read_record(runs.find_run(run_id, demo_root)).submission
    words = verification.label_of("submitted", {}, sub)
    assert words.startswith("⚠️ differs: ")
    assert "largest score difference" in words and "paired 95% CI" in words


def test_a_submission_without_a_recipe_is_self_reported_and_cannot_be_approved(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", TOKEN)
    run_id = _submit(demo_root, _csv(_lexical_predictions(demo_root)), "Plain file", None)
    assert _status(demo_root, run_id) == "self-reported"
    from evaluator.interop.export import run_files

    source = run_files(run_id, demo_root).record["source_metadata"]
    assert source["evaluator_relationship"] == "other"
    assert source["additional_details"]["factboard_verification"] == "self-reported"
    with pytest.raises(Exception, match="not a submitted run with a recipe"):
        reproduce_run.approve(run_id, TOKEN, data_root=demo_root)
    # FactBoard's own runs carry their recipe
    baselines = [r for r in runs.list_runs(demo_root).runs if r.origin != "submitted"]
    assert {verification.record_status(r) for r in baselines} == {"reproducible"}


def test_a_bad_recipe_is_refused_naming_the_field(demo_root: Path) -> None:
    bad = {"detector": "summac-zs", "checkpoint": "/home/me/model", "options": {"nope": 1}}
    res = submit(
        _csv(_lexical_predictions(demo_root)),
        "preds.csv",
        SubmissionMeta(benchmark="demo", model_name="Bad recipe", recipe=bad),
        data_root=demo_root,
    )
    assert res.status == "rejected"
    text = "\n".join(res.problems)
    assert "recipe.checkpoint: '/home/me/model' is not a public Hub model id" in text
    assert "recipe.revision: required with a checkpoint" in text
    assert "recipe.options.nope: not an option of this detector" in text


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ({"kind": "magic"}, "recipe.kind: 'magic' is not one of detector, llm, package"),
        ({"llm": "gpt-4o", "prompt": "summedits-zs-v1"}, "recipe.llm: 'gpt-4o' is not of the form"),
        ({"llm": "openai:gpt-4o", "prompt": "nope"}, "recipe.prompt: 'nope' is not a prompt id"),
        (
            {"llm": "openai:gpt-4o", "prompt": "summedits-zs-v1", "temperature": 9},
            "recipe.temperature: 9 is not between 0 and 2",
        ),
        ({"package": "my-det"}, "recipe.version: required"),
        ("{not json", "recipe: not valid JSON"),
        (
            {"llm": "openai:" + "x" * 300, "prompt": "summedits-zs-v1"},
            "recipe.llm: longer than 200 characters",
        ),
        ({"detector": "lexical-overlap", "extra": 1}, "recipe: extra not a field"),
    ],
)
def test_recipe_problems_name_the_field(given: object, problem: str) -> None:
    recipe, problems = recipes.parse_recipe(given)
    assert recipe is None
    assert any(p.startswith(problem) for p in problems), problems


def test_the_submit_command_takes_a_recipe(
    demo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "preds.csv"
    f.write_bytes(_csv(_lexical_predictions(demo_root)))
    argv = ["submit", str(f), "--benchmark", "demo", "--model-name", "CLI overlap"]
    assert main([*argv, "--recipe-detector", "lexical-overlap"]) == 0
    assert "verification: ⏳ pending" in capsys.readouterr().out
    assert main([*argv[:-1], "Other", "--recipe", json.dumps({"llm": "x"})]) == 1
    assert "recipe.llm: 'x' is not of the form provider:model" in capsys.readouterr().err


def test_a_tiny_model_recipe_pinned_by_revision_reproduces_bit_for_bit(
    demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recipe naming a Hub checkpoint at a commit: the reproduction takes the weights from
    the Hub client's cache (offline, as after a first download) and matches bit for bit; the
    same recipe at a revision nobody has fails with the reason."""
    import shutil

    from huggingface_hub import constants

    from tests.support.detectors import build_tiny_models, require_model_libraries
    from tests.support.tiny_summac import punkt_installed

    require_model_libraries()
    tiny = build_tiny_models(tmp_path / "tiny")
    sha = "0123456789abcdef0123456789abcdef01234567"
    cache = tmp_path / "hub-cache"
    snapshot = cache / "models--factboard-test--tiny-nli" / "snapshots" / sha
    shutil.copytree(tiny["nli"], snapshot)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with punkt_installed(None):
        p = predict_detector("summac-zs", "demo", checkpoint=str(snapshot), device="cpu")
        p.checkpoints.clear()
        recipe = {"detector": "summac-zs", "checkpoint": "factboard-test/tiny-nli"}
        run_id = _submit(demo_root, _csv(p.predictions), "Tiny NLI", {**recipe, "revision": sha})
        outcome = verification.verify(run_id, demo_root, device="cpu", resamples=200)
        assert outcome["status"] == "reproduced", outcome
        assert outcome["scores_differ"] == 0 and outcome["compared"] == len(p.predictions)

        gone = _submit(
            demo_root,
            _csv(p.predictions.assign(score=p.predictions["score"][::-1].to_numpy())),
            "Tiny NLI elsewhere",
            {**recipe, "revision": "f" * 40},
        )
        failed = verification.verify(gone, demo_root, device="cpu", resamples=200)
        assert failed["status"] == "failed"
        assert (
            f"checkpoint factboard-test/tiny-nli at revision {'f' * 40} cannot be fetched"
            in (failed["reason"])
        )
        assert _status(demo_root, gone) == "failed"


@pytest.mark.usefixtures("installed")
def test_a_package_recipe_reproduces_through_its_entry_point(demo_root: Path) -> None:
    p = predict_detector("word-overlap", "demo", root=demo_root)
    p.checkpoints.clear()
    recipe = {"package": "overlap-detector", "version": "1.2.3", "detector": "word-overlap"}
    run_id = _submit(demo_root, _csv(p.predictions), "Packaged overlap", recipe)
    outcome = verification.verify(run_id, demo_root, resamples=200)
    assert outcome["status"] == "reproduced", outcome
    assert outcome["notes"] == []
    # a recipe pinned to another version than the one installed says so
    older = _submit(
        demo_root,
        _csv(p.predictions.assign(score=p.predictions["score"][::-1].to_numpy())),
        "Older packaged overlap",
        {**recipe, "version": "1.0.0"},
    )
    outcome = verification.verify(older, demo_root, resamples=200)
    assert outcome["status"] == "differs"
    assert outcome["notes"] == ["the run used overlap-detector 1.0.0; 1.2.3 is installed here"]


@pytest.mark.usefixtures("installed")
def test_evaluate_submits_a_packaged_detector_with_its_recipe(demo_root: Path) -> None:
    """From a Python function to a verified row: the package's function given to evaluate is
    submitted with its recipe, and its reproduction is identical."""
    from overlap_detector import LengthRatio, score  # type: ignore[import-not-found]

    import evaluator
    from evaluator.api import package_recipe

    assert package_recipe(LengthRatio()) == {
        "package": "overlap-detector",
        "version": "1.2.3",
        "detector": "length-ratio",
    }
    assert package_recipe(lambda d, s: [1.0] * len(d)) is None
    result = evaluator.evaluate(
        score,
        "demo",
        progress=False,
        root=demo_root,
        resamples=200,
        submit={"benchmark": "demo", "model_name": "Word overlap (package)"},
    )
    sub = result.submission
    assert sub.ok, sub.problems
    rec = runs.read_record(runs.find_run(sub.run_id, demo_root))
    assert rec.submission is not None
    assert rec.submission["recipe"]["package"] == "overlap-detector"
    assert verification.verify(sub.run_id, demo_root, resamples=200)["status"] == "reproduced"


def test_an_llm_recipe_reproduces_against_the_fake_chat_server(
    tmp_path: Path, tmp_data_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file made by an LLM with a prompt, submitted with that recipe: the worker's
    environment names the server (FACTBOARD_COMPATIBLE_BASE_URL, as for any LLM run), the
    requests are sent again and the labels compared."""
    pytest.importorskip("openai")
    from evaluator.llm.runner import run_llm
    from tests.support.llm_data import ingest_summexecedit
    from tests.support.llm_servers import FakeLLMServer, Recorded, Reply

    def flags_edits(req: Recorded) -> Reply:
        summary = req.user.split("[Summary]\n")[-1]
        if "museum" in summary or "council" in summary:
            return Reply(text='{"consistent": "no", "explanation": "A detail is wrong."}')
        return Reply(text='{"consistent": "yes", "explanation": ""}')

    def always_yes(req: Recorded) -> Reply:
        return Reply(text='{"consistent": "yes", "explanation": ""}')

    ingest_summexecedit(tmp_path, tmp_data_root)
    recipe = {"llm": "compatible:det", "prompt": "summexecedit-de-v1", "temperature": 0}
    with FakeLLMServer("openai", responder=flags_edits) as s:
        (path,) = run_llm(
            "compatible:det",
            "summexecedit",
            prompt_id="summexecedit-de-v1",
            options={"base_url": s.url},
            root=tmp_data_root,
        )
        preds = runs.read_predictions(path)
        buf = io.StringIO()
        preds[["sample_id", "label"]].to_csv(buf, index=False)
        res = submit(
            buf.getvalue().encode(),
            "llm.csv",
            SubmissionMeta(benchmark="summexecedit", model_name="Det (submitted)", recipe=recipe),
            data_root=tmp_data_root,
            resamples=200,
        )
        assert res.ok, res.problems
        monkeypatch.setenv("FACTBOARD_COMPATIBLE_BASE_URL", s.url)
        sent = s.count
        outcome = verification.verify(str(res.run_id), tmp_data_root, resamples=200)
        assert s.count > sent  # asked again
    assert outcome["status"] == "reproduced", outcome
    with FakeLLMServer("openai", responder=always_yes) as other:
        monkeypatch.setenv("FACTBOARD_COMPATIBLE_BASE_URL", other.url)
        outcome = verification.verify(str(res.run_id), tmp_data_root, resamples=200)
    assert outcome["status"] == "differs"
    assert outcome["labels_differ"] > 0
    assert outcome["max_score_difference"] is None  # labels only


def test_the_outcome_goes_to_the_submitted_run_and_the_runs_that_supersede_it(
    demo_root: Path,
) -> None:
    """A submitted run whose explanations were graded is superseded by its judged copy: a
    reproduction of either is recorded on both (the board shows the copy)."""
    import shutil

    preds = _lexical_predictions(demo_root)
    run_id = _submit(demo_root, _csv(preds), "Judged overlap", {"detector": "lexical-overlap"})
    src = runs.find_run(run_id, demo_root)
    judged = src.parent / f"{run_id}-judged"
    shutil.copytree(src, judged)
    data = json.loads((judged / runs.RUN_FILE).read_text())
    data.update(run_id=judged.name, supersedes=run_id)
    (judged / runs.RUN_FILE).write_text(json.dumps(data))
    changed = verification.record_outcome(
        judged.name, verification.failure("the worker had no network")
    )
    assert changed == [run_id, judged.name]
    assert _status(demo_root, run_id) == _status(demo_root, judged.name) == "failed"
    sub = runs.read_record(judged).submission
    assert verification.label_of("submitted", {}, sub) == (
        "❌ not reproduced: the worker had no network"
    )
    verification.verify(run_id, demo_root, resamples=100)
    assert _status(demo_root, judged.name) == "reproduced"
