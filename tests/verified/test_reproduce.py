"""`python -m evaluator reproduce RUN_ID`: a run FactBoard made is re-run from its run.json and
compared sample by sample: identical bit for bit on the CPU, or figures that say how much it
differs; a run with no recipe says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evaluator
from evaluator import runner
from evaluator.cli.main import main
from evaluator.core import metrics as M
from evaluator.core.types import ModelInfo
from evaluator.detectors.runner import run_detector
from evaluator.reproduce import NotReproducible, recipe_of, reproduce
from evaluator.store import runs
from tests.support.detectors import build_tiny_models, require_model_libraries


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    require_model_libraries()
    return build_tiny_models(tmp_path_factory.mktemp("tiny-reproduce"))


def _copy_run(run_dir: Path, new_id: str) -> Path:
    """A copy of a run under another id (the tests tamper with copies, never with a run)."""
    dst = run_dir.parent / new_id
    shutil.copytree(run_dir, dst)
    data = json.loads((dst / runs.RUN_FILE).read_text())
    data["run_id"] = new_id
    (dst / runs.RUN_FILE).write_text(json.dumps(data))
    return dst


def _write(frame: pd.DataFrame, path: Path) -> None:
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)


def test_a_weight_free_detector_run_reproduces_identically(
    demo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = run_detector("lexical-overlap", "demo", root=demo_root)
    rec = runs.read_record(path)
    recipe = recipe_of(rec)
    assert recipe.kind == "detector" and recipe.detector == "lexical-overlap"
    assert main(["reproduce", rec.run_id]) == 0
    out = capsys.readouterr().out
    assert "reproduced: identical" in out
    assert "BAcc: stored 0.621, reproduced 0.621, difference 0.000" in out
    assert "paired 95% CI [0.000, 0.000]" in out


def test_a_tiny_model_run_reproduces_bit_for_bit_and_a_tampered_copy_differs(
    demo_root: Path, tiny: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.support.tiny_summac import punkt_installed

    with punkt_installed(None):
        path = run_detector("summac-zs", "demo", checkpoint=tiny["nli"], device="cpu", batch_size=8)
        before = {r.run_id for r in runs.list_runs(demo_root).runs}
        rec = runs.read_record(path)
        same = reproduce(rec.run_id, demo_root)
        assert same.identical, same.lines()
        assert same.compared == len(runs.read_predictions(path)) > 0
        assert same.scores_differ == 0 and same.max_score_difference == 0.0
        assert same.labels_differ == 0
        assert same.metric is not None and same.metric.metric == "balanced_accuracy"
        assert same.metric.reproduced == same.metric.stored
        assert same.metric.paired is not None
        assert same.metric.paired.ci_low == same.metric.paired.ci_high == 0.0
        assert {r.run_id for r in runs.list_runs(demo_root).runs} == before  # nothing written

        # a copy whose stored scores were changed on five test samples, its labels re-made
        tampered = _copy_run(path, rec.run_id + "-tampered")
        preds = runs.read_predictions(tampered)
        labels = runs.read_labels(tampered)
        assert labels is not None
        test_ids = set(
            runner.load_inputs("demo", demo_root)
            .samples.query("split == 'test'")["sample_id"]
            .astype(str)
        )
        thr = float(rec.threshold.threshold)  # type: ignore[arg-type]
        changed = [i for i in preds.index if str(preds.at[i, "sample_id"]) in test_ids][:5]
        flips = 0
        for k, i in enumerate(changed):
            old = float(preds.at[i, "score"])
            new = thr - 0.25 if old >= thr else thr + 0.25 + 0.01 * k  # across the threshold
            preds.at[i, "score"] = new
            sid = str(preds.at[i, "sample_id"])
            row = labels["sample_id"].astype(str) == sid
            labels.loc[row, "final_label"] = int(new >= thr)
            labels.loc[row, "score"] = new
            flips += 1
        pq.write_table(
            pa.Table.from_pandas(preds, preserve_index=False), tampered / "predictions.parquet"
        )
        pq.write_table(
            pa.Table.from_pandas(labels, preserve_index=False), tampered / "labels.parquet"
        )
        stored = preds.set_index("sample_id")["score"]
        original = runs.read_predictions(path).set_index("sample_id")["score"]
        largest = float((stored - original).abs().max())

        diff = reproduce(rec.run_id + "-tampered", demo_root)
        assert not diff.identical
        assert diff.scores_differ == 5
        assert diff.max_score_difference == pytest.approx(largest)
        assert diff.labels_differ == flips
        # the metric's difference: the reproduction (the original run's labels) minus the
        # tampered labels, with its paired CI
        m = diff.metric
        assert m is not None and m.paired is not None
        assert m.reproduced == pytest.approx(rec.result("balanced_accuracy", split="test").value)
        assert m.reproduced - m.stored == pytest.approx(m.paired.difference)
        assert m.paired.difference != 0
        assert m.paired.ci_low <= m.paired.difference <= m.paired.ci_high
        # the same figures from the command, and its exit code says "differs"
        assert main(["reproduce", rec.run_id + "-tampered", "--json", "--resamples", "200"]) == 3
        figures = json.loads(capsys.readouterr().out)
        assert figures["identical"] is False
        assert figures["scores_differ"] == 5 and figures["labels_differ"] == flips
        assert figures["max_score_difference"] == pytest.approx(largest)
        assert figures["metric"]["difference"] == pytest.approx(m.reproduced - m.stored)


def test_the_paired_difference_is_the_engines_paired_bootstrap(demo_root: Path) -> None:
    """On a hand-made pair of label vectors the figures are M.paired_bootstrap's."""
    path = run_detector("lexical-overlap", "demo", root=demo_root)
    rec = runs.read_record(path)
    tampered = _copy_run(path, rec.run_id + "-flipped")
    labels = runs.read_labels(tampered)
    assert labels is not None
    test_ids = set(
        runner.load_inputs("demo", demo_root).samples.query("split == 'test'")["sample_id"]
    )
    rows = labels.index[labels["sample_id"].isin(test_ids)][:10]
    labels.loc[rows, "final_label"] = 1 - labels.loc[rows, "final_label"]
    _write(labels, tampered / runs.LABELS_FILE)
    result = reproduce(rec.run_id + "-flipped", demo_root, resamples=300)
    assert result.labels_differ == 10 and result.scores_differ == 0
    samples = runner.load_inputs("demo", demo_root).samples.set_index("sample_id")
    both = runs.read_labels(path).set_index("sample_id").loc[sorted(test_ids)]  # type: ignore[union-attr]
    flipped = labels.set_index("sample_id").loc[sorted(test_ids)]
    y = samples.loc[sorted(test_ids), "label"].to_numpy(dtype=np.int8)
    a = both["final_label"].to_numpy(dtype=np.int8)
    b = flipped["final_label"].to_numpy(dtype=np.int8)
    # the demo's Overall is the mean over its domains: resampled within each domain
    domains = samples.loc[sorted(test_ids), "domain"].astype(str).to_numpy()

    def over_domains(x: np.ndarray) -> M.Stat:
        return M.mean_over_strata_w(
            lambda W, g: M.balanced_accuracy_w(W[:, g], y[g], x[g]), domains
        )

    want = M.paired_bootstrap(
        over_domains(a), over_domains(b), len(y), resamples=300, strata=domains
    )
    assert result.metric is not None and result.metric.paired is not None
    assert result.metric.paired.difference == pytest.approx(want.difference)
    assert (result.metric.paired.ci_low, result.metric.paired.ci_high) == pytest.approx(
        (want.ci_low, want.ci_high)
    )


def test_runs_without_a_recipe_say_so(demo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a submitted prediction file: no recipe
    rows = runner.load_inputs("demo", demo_root).samples
    preds = pd.DataFrame({"sample_id": rows["sample_id"], "score": 0.5})
    path = evaluator.score_file_to_run(
        "demo", preds, ModelInfo(name="Someone's model", kind="non-llm"), root=demo_root
    )
    run_id = runs.read_record(path).run_id
    with pytest.raises(NotReproducible, match="records no recipe"):
        recipe_of(runs.read_record(path))
    assert main(["reproduce", run_id]) == 1
    assert "records no recipe" in capsys.readouterr().err
    # the demo's always-consistent baseline names a detector that is not registered
    (const,) = [r for r in runs.list_runs(demo_root).runs if r.config.detector == "constant"]
    with pytest.raises(NotReproducible, match="not a registered detector"):
        reproduce(const.run_id, demo_root)

    result = evaluator.evaluate(lambda d, s: [0.5] * len(d), "demo", store=True, progress=False)
    assert result.run_id is not None
    with pytest.raises(NotReproducible, match="Python function given to evaluator.evaluate"):
        reproduce(result.run_id, demo_root)


def test_an_llm_run_reproduces_against_the_same_server_and_differs_against_another(
    tmp_path: Path, tmp_data_root: Path
) -> None:
    pytest.importorskip("openai")
    from evaluator.llm.execute import RetryPolicy
    from evaluator.llm.runner import run_llm
    from tests.support.llm_data import ingest_summexecedit
    from tests.support.llm_servers import FakeLLMServer, Recorded, Reply

    no_wait = RetryPolicy(max_attempts=2, base=0.0, sleep=lambda s: None)

    def flags_edits(req: Recorded) -> Reply:
        summary = req.user.split("[Summary]\n")[-1]
        if "museum" in summary or "council" in summary:
            return Reply(text='{"consistent": "no", "explanation": "A detail is wrong."}')
        return Reply(text='{"consistent": "yes", "explanation": ""}')

    def always_yes(req: Recorded) -> Reply:
        return Reply(text='{"consistent": "yes", "explanation": ""}')

    ingest_summexecedit(tmp_path, tmp_data_root)
    with FakeLLMServer("openai", responder=flags_edits) as s:
        (path,) = run_llm(
            "compatible:det",
            "summexecedit",
            prompt_id="summexecedit-de-v1",
            options={"base_url": s.url},
            root=tmp_data_root,
            retry=no_wait,
        )
        rec = runs.read_record(path)
        recipe = recipe_of(rec)
        assert recipe.kind == "llm" and recipe.llm == "compatible:det"
        assert recipe.prompt_id == "summexecedit-de-v1" and recipe.temperature == 0.0
        sent = s.count
        same = reproduce(rec.run_id, tmp_data_root, retry=no_wait)
        assert s.count == 2 * sent  # asked again, not answered from the response cache
    assert same.identical, same.lines()
    assert same.compared == len(runs.read_predictions(path))
    assert len(runs.list_runs(tmp_data_root).runs) == 1  # nothing written to the board

    stored = runs.read_predictions(path)
    saying_no = int((stored["label"] == 0).sum())
    assert saying_no > 0
    with FakeLLMServer("openai", responder=always_yes) as other:
        diff = reproduce(rec.run_id, tmp_data_root, options={"base_url": other.url}, retry=no_wait)
    assert not diff.identical
    assert diff.labels_differ == saying_no
    assert diff.max_score_difference is None  # labels only: no scores to compare
    assert any(f"labels that differ: {saying_no} of" in line for line in diff.lines())


def test_a_judged_run_regrades_the_same_and_says_how_far_another_judge_differs(
    tmp_path: Path, tmp_data_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("openai")
    from evaluator.llm.execute import RetryPolicy
    from evaluator.llm.judges import judge_run
    from evaluator.llm.runner import run_llm
    from tests.llm.test_llm_judges import detector, fair_judge
    from tests.support.llm_data import ingest_summexecedit
    from tests.support.llm_servers import FakeLLMServer, Recorded, Reply

    no_wait = RetryPolicy(max_attempts=2, base=0.0, sleep=lambda s: None)

    def harsh_judge(req: Recorded) -> Reply:
        return Reply(text=f"Not the reference.\nGRADE {req.judge_tag}: 0")

    ingest_summexecedit(tmp_path, tmp_data_root)
    with FakeLLMServer("openai", responder=detector) as s:
        (llm_path,) = run_llm(
            "compatible:det",
            "summexecedit",
            prompt_id="summexecedit-de-v1",
            options={"base_url": s.url},
            root=tmp_data_root,
            retry=no_wait,
        )
    with FakeLLMServer("openai", responder=fair_judge) as j:
        judged = judge_run(
            llm_path.name,
            "compatible:fake-judge",
            "EvalV4",
            options={"base_url": j.url},
            root=tmp_data_root,
            retry=no_wait,
        )
        rec = runs.read_record(judged)
        recipe = recipe_of(rec)
        assert recipe.kind == "judge" and recipe.judge == "compatible:fake-judge"
        assert recipe.protocol == "EvalV4" and recipe.graded_run == llm_path.name
        same = reproduce(rec.run_id, tmp_data_root, retry=no_wait)
        assert j.count == 4  # graded twice: the run, and its reproduction (no cache)
    assert same.identical, same.lines()
    grades = runs.read_grades(judged)
    assert grades is not None and same.compared == len(grades) == 2
    assert "every grade bit for bit" in "\n".join(same.lines())
    stored_mean = float(grades["grade"].mean())

    with FakeLLMServer("openai", responder=harsh_judge) as other:
        diff = reproduce(rec.run_id, tmp_data_root, options={"base_url": other.url}, retry=no_wait)
    assert not diff.identical
    assert diff.scores_differ == int((grades["grade"] != 0).sum())
    assert diff.max_score_difference == float(grades["grade"].max())
    m = diff.metric
    assert m is not None and m.metric == "explanation_score"
    assert m.stored == pytest.approx(stored_mean) and m.reproduced == 0.0
    assert m.paired is not None and m.paired.difference == pytest.approx(-stored_mean)
    assert any("grades that differ" in line for line in diff.lines())
    # the command, for the same run: another server is named with --option
    with FakeLLMServer("openai", responder=harsh_judge) as other:
        code = main(["reproduce", rec.run_id, "--option", f"base_url={other.url}"])
    assert code == 3
    assert "grades that differ: 2" in capsys.readouterr().out
