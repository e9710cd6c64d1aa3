"""Prompted LLM detectors end to end: run_llm against fake servers on 127.0.0.1 writes ordinary
runs (labels, explanations, raw outputs), counts unparsable and failed replies, resumes from the
cache, rolls TofuEval sentence labels up to summaries, and measures self-agreement."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluator.core.errors import FactBoardError
from evaluator.ingest.demo import build_demo
from evaluator.llm.execute import RetryPolicy
from evaluator.llm.runner import run_llm
from evaluator.store import ingested, runs

if os.environ.get("CI"):
    import openai  # noqa: F401  (CI must have requirements-llm.txt)
else:
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")

from tests.support.llm_data import TOFU_SENTENCES, ingest_summexecedit, write_tofueval
from tests.support.llm_servers import FakeLLMServer, Recorded, Reply

KEY = "sk-test-RUNNER-KEY-9876543210"
NO_WAIT = RetryPolicy(max_attempts=3, base=0.0, sleep=lambda s: None)


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "FACTBOARD_COMPATIBLE_API_KEY"):
        monkeypatch.setenv(var, KEY)
    monkeypatch.delenv("FACTBOARD_LLM_CACHE", raising=False)


@pytest.fixture
def demo_root(tmp_data_root: Path) -> Path:
    list(build_demo(root=tmp_data_root))
    return tmp_data_root


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


def _summary_of(req: Recorded) -> str:
    return req.user.split("Summary:\n", 1)[1].split("\n\nIs the summary", 1)[0]


def _verdicts(req: Recorded) -> Reply:
    """A deterministic fake detector: Yes or No by a hash of the summary."""
    return Reply(text="Yes." if _h(_summary_of(req)) % 3 else "No. The second clause is wrong.")


def _opts(server: FakeLLMServer, **more: str) -> dict[str, str]:
    return {"base_url": server.url, "timeout": "5", **more}


def _all_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())


def test_a_prompted_detector_makes_a_normal_run(demo_root: Path) -> None:
    with FakeLLMServer("openai", responder=_verdicts) as s:
        paths = run_llm(
            "compatible:fake-llama",
            "demo",
            prompt_id="summedits-zs-v1",
            limit=12,
            options=_opts(s),
            root=demo_root,
            retry=NO_WAIT,
        )
        assert len(paths) == 1 and s.count == 12
        assert s.requests[0].json["temperature"] == 0.0
    rec = runs.read_record(paths[0])
    preds = runs.read_predictions(paths[0])
    samples = ingested.load_samples("demo", demo_root)
    test_ids = sorted(samples[(samples["split"] == "test")]["sample_id"])[:12]
    assert sorted(preds["sample_id"]) == test_ids
    assert rec.origin == "evaluated" and rec.model.kind == "open-llm"
    assert rec.model.name == "fake-llama (summedits-zs-v1)"
    assert rec.config.llm == "compatible:fake-llama" and rec.config.prompt_id == "summedits-zs-v1"
    extra = rec.config.extra
    assert extra["prompt"]["template"].startswith("Given the document below")
    assert extra["client"]["base_url"] == s.url
    assert extra["usage"]["input_tokens"] == 12 * 12 and extra["usage"]["cost_usd"] is None
    assert (rec.counts.n, rec.counts.predicted, rec.counts.unparsable) == (210, 12, 0)
    # labels, explanations and raw outputs as the fake answered
    for r in preds.to_dict("records"):
        summary = samples.set_index("sample_id").loc[r["sample_id"], "summary"]
        expect_yes = bool(_h(summary) % 3)
        assert r["label"] == (1 if expect_yes else 0)
        assert r["raw_output"] == ("Yes." if expect_yes else "No. The second clause is wrong.")
        if expect_yes:
            assert pd.isna(r["explanation"])
        else:
            assert r["explanation"] == "The second clause is wrong."
    # the engine's numbers agree with a direct computation
    y = samples.set_index("sample_id").loc[preds["sample_id"], "label"].to_numpy()
    p = preds["label"].to_numpy(dtype=int)
    bacc = np.mean([np.mean(p[y == c] == c) for c in (0, 1)])
    assert rec.result("balanced_accuracy", unit="summary").value == pytest.approx(bacc)
    # the key is nowhere on disk: runs, cache
    assert KEY.encode() not in _all_bytes(demo_root)


def test_unparsable_and_failed_replies_are_stored_and_counted(demo_root: Path) -> None:
    def answer(req: Recorded) -> Reply:
        summary = _summary_of(req)
        if _h(summary) % 5 == 0:
            return Reply(status=500, message=f"upstream broke; key {KEY}")
        if _h(summary) % 5 == 1:
            return Reply(text="I believe the summary is mostly fine.")
        return Reply(text="No. It is wrong.")

    with FakeLLMServer("openai", responder=answer) as s:
        (path,) = run_llm(
            "compatible:m",
            "demo",
            prompt_id="summedits-zs-v1",
            limit=40,
            options=_opts(s),
            root=demo_root,
            retry=NO_WAIT,
        )
    rec = runs.read_record(path)
    preds = runs.read_predictions(path)
    samples = ingested.load_samples("demo", demo_root).set_index("sample_id")
    ids = sorted(samples[samples["split"] == "test"].index)[:40]
    kinds = [_h(samples.loc[i, "summary"]) % 5 for i in ids]
    n_failed, n_unparsable = kinds.count(0), kinds.count(1)
    assert n_failed > 0 and n_unparsable > 0
    assert rec.counts.failed == n_failed
    assert rec.counts.unparsable == n_unparsable
    assert rec.counts.predicted == 40 - n_failed - n_unparsable  # usable predictions
    assert rec.counts.missing == 210 - 40 + n_failed  # not asked (limit) or failed
    bad = preds[preds["label"].isna()]
    assert len(bad) == n_unparsable
    assert set(bad["raw_output"]) == {"I believe the summary is mostly fine."}
    parse = rec.config.extra["parse"]
    assert parse["failed"] == n_failed and parse["unparsable"] == n_unparsable
    assert "does not start with Yes or No" in parse["unparsable_examples"][0]["problem"]
    assert "HTTP 500" in parse["failed_examples"][0]["error"]
    assert KEY.encode() not in _all_bytes(demo_root)


def test_a_rerun_or_resume_sends_only_what_is_missing(demo_root: Path) -> None:
    with FakeLLMServer("openai", responder=_verdicts) as s:
        kw = dict(prompt_id="summedits-zs-v1", options=_opts(s), root=demo_root, retry=NO_WAIT)
        (a,) = run_llm("compatible:m", "demo", limit=5, **kw)  # type: ignore[arg-type]
        assert s.count == 5
        (b,) = run_llm("compatible:m", "demo", limit=5, **kw)  # type: ignore[arg-type]
        assert s.count == 5  # fully cached
        (c,) = run_llm("compatible:m", "demo", limit=9, **kw)  # type: ignore[arg-type]
        assert s.count == 9  # resumed: only the 4 new samples
        assert runs.read_record(b).config.extra["usage"]["replies_from_cache"] == 5
    pa, pb = runs.read_predictions(a), runs.read_predictions(b)
    pd.testing.assert_frame_equal(pa, pb)
    assert len(runs.read_predictions(c)) == 9


def test_an_interrupted_run_resumes_where_it_stopped(demo_root: Path) -> None:
    def answer(req: Recorded) -> Reply:
        if state["broken"]:
            return Reply(status=401)  # e.g. the key was revoked mid-run: the run stops
        return _verdicts(req)

    state = {"broken": False}
    with FakeLLMServer("openai", responder=answer) as s:
        kw = dict(prompt_id="summedits-zs-v1", options=_opts(s), root=demo_root, retry=NO_WAIT)
        run_llm("compatible:m", "demo", limit=6, concurrency=1, **kw)  # type: ignore[arg-type]
        state["broken"] = True
        with pytest.raises(FactBoardError, match="HTTP 401"):
            run_llm("compatible:m", "demo", limit=20, concurrency=1, **kw)  # type: ignore[arg-type]
        sent_before = s.count
        state["broken"] = False
        (path,) = run_llm("compatible:m", "demo", limit=20, **kw)  # type: ignore[arg-type]
        # the 6 answered before are not asked again; the refused one is
        assert s.count - sent_before == 14
    assert runs.read_record(path).counts.predicted == 20


def test_repeats_store_self_agreement(demo_root: Path) -> None:
    from sklearn.metrics import cohen_kappa_score

    seen: dict[str, int] = {}

    def flaky(req: Recorded) -> Reply:
        s = _summary_of(req)
        k = seen.get(s, 0)
        seen[s] = k + 1
        # the r-th ask of a summary: a different answer on some of them
        yes = (_h(s) + (k if _h(s) % 4 == 0 else 0)) % 2
        return Reply(text="Yes." if yes else "No.")

    with FakeLLMServer("openai", responder=flaky) as s:
        paths = run_llm(
            "compatible:m",
            "demo",
            prompt_id="summedits-zs-v1",
            temperature=0.7,
            repeats=3,
            limit=30,
            concurrency=4,
            options=_opts(s),
            root=demo_root,
            retry=NO_WAIT,
        )
        assert s.count == 90 and {r.json["temperature"] for r in s.requests} == {0.7}
    assert len(paths) == 3
    labels = [runs.read_predictions(p).set_index("sample_id")["label"].sort_index() for p in paths]
    pairs = [(0, 1), (0, 2), (1, 2)]
    expect = np.mean([cohen_kappa_score(labels[a], labels[b]) for a, b in pairs])
    recs = [runs.read_record(p) for p in paths]
    for i, rec in enumerate(recs):
        sa = rec.config.extra["self_agreement"]
        assert sa["mean_pairwise_cohen_kappa"] == pytest.approx(expect)
        assert sa["n"] == 30 and sa["run_ids"] == [r.run_id for r in recs]
        assert rec.config.extra["repeat"] == i + 1
        assert rec.model.name.endswith(f"run {i + 1}/3")
    assert 0 < expect < 1


def test_tofueval_sentence_prompts_roll_up_to_summaries(tmp_data_root: Path) -> None:
    write_tofueval(tmp_data_root)

    def answer(req: Recorded) -> Reply:
        sentence = req.user.split("Sentence: ", 1)[1].split("\n", 1)[0]
        return Reply(text="No." if "taxes" in sentence or "Everyone" in sentence else "Yes.")

    with FakeLLMServer("anthropic", responder=answer) as s:
        (path,) = run_llm(
            "anthropic:claude-3-haiku-20240307",
            "tofueval",
            prompt_id="tofueval-dir-sentence-v1",
            options=_opts(s),
            root=tmp_data_root,
            retry=NO_WAIT,
        )
        assert s.count == 4  # the test split's sentences that have a document
    rec = runs.read_record(path)
    assert rec.model.kind == "proprietary-llm"
    assert rec.config.extra["left_out_missing_fields"] == {"document": 1}
    assert rec.config.extra["usage"]["cost_usd"] == pytest.approx(
        (4 * 12 * 0.25 + 4 * 3 * 1.25) / 1e6
    )
    preds = runs.read_predictions(path)
    assert sorted(preds["sample_id"]) == ["s1:0", "s1:1", "s2:0", "s2:1"]
    # sentence level: s1:1 caught, s2:1 a false alarm -> BAcc (1 + 2/3) / 2
    assert rec.result("balanced_accuracy", unit="sentence").value == pytest.approx(5 / 6)
    # summary level, rolled up: s1 (inconsistent) flagged, s2 (consistent) flagged -> 0.5
    gold = {sid: min(r[4] for r in TOFU_SENTENCES if r[1] == sid) for sid in ("s1", "s2")}
    assert gold == {"s1": 0, "s2": 1}
    assert rec.result("balanced_accuracy", unit="summary").value == pytest.approx(0.5)


def test_summexecedit_de_and_ed(tmp_path: Path, tmp_data_root: Path) -> None:
    ingest_summexecedit(tmp_path, tmp_data_root)

    def de(req: Recorded) -> Reply:
        if "rejected" in req.user or "governor" in req.user or "museum" in req.user:
            return Reply(text='```json\n{"consistent": "no", "explanation": "Wrong actor."}\n```')
        return Reply(text='{"consistent": "yes", "explanation": ""}')

    with FakeLLMServer("openai", responder=de) as s:
        (path,) = run_llm(
            "compatible:m",
            "summexecedit",
            prompt_id="summexecedit-de-v1",
            options=_opts(s),
            root=tmp_data_root,
            retry=NO_WAIT,
        )
    rec = runs.read_record(path)
    # 4 inconsistent (2 flagged) + 2 consistent (1 flagged): DA 3/6, DS 2/4
    assert rec.result("detection_accuracy").value == pytest.approx(3 / 6)
    assert rec.result("detection_score").value == pytest.approx(2 / 4)
    preds = runs.read_predictions(path).set_index("sample_id")
    assert preds.loc["se-1", "explanation"] == "Wrong actor."
    assert pd.isna(preds.loc["se-2", "explanation"])

    with FakeLLMServer("openai", responder=lambda r: Reply(text='{"explanation": "X."}')) as s:
        (ed,) = run_llm(
            "compatible:m",
            "summexecedit",
            prompt_id="summexecedit-ed-v1",
            options=_opts(s),
            root=tmp_data_root,
            retry=NO_WAIT,
        )
        assert s.count == 4  # only the inconsistent summaries
    erec = runs.read_record(ed)
    assert "labels_given" in erec.config.extra
    assert set(runs.read_predictions(ed)["label"]) == {0}


def test_bad_requests_are_refused_before_anything_is_sent(
    demo_root: Path, tmp_data_root: Path
) -> None:
    with FakeLLMServer("openai") as s:
        o = _opts(s)
        with pytest.raises(FactBoardError, match="--prompt is required.*summedits-zs-v1"):
            run_llm("compatible:m", "demo", prompt_id=None, options=o, root=demo_root)
        with pytest.raises(FactBoardError, match="judge prompt"):
            run_llm("compatible:m", "demo", prompt_id="judge-evalv4-v1", options=o, root=demo_root)
        with pytest.raises(FactBoardError, match="sentence.*units summary"):
            run_llm(
                "compatible:m",
                "demo",
                prompt_id="tofueval-dir-sentence-v1",
                options=o,
                root=demo_root,
            )
        with pytest.raises(FactBoardError, match="unknown option 'temperature'"):
            run_llm(
                "compatible:m",
                "demo",
                prompt_id="summedits-zs-v1",
                options={**o, "temperature": "1"},
                root=demo_root,
            )
        with pytest.raises(FactBoardError, match="unknown split 'validation'"):
            run_llm(
                "compatible:m",
                "demo",
                prompt_id="summedits-zs-v1",
                splits=["validation"],
                options=o,
                root=demo_root,
            )
        with pytest.raises(FactBoardError, match="not ingested"):
            run_llm(
                "compatible:m",
                "summexecedit",
                prompt_id="summexecedit-de-v1",
                options=o,
                root=demo_root,
            )
        assert s.count == 0


def test_every_reply_unusable_writes_nothing(demo_root: Path) -> None:
    with (
        FakeLLMServer("openai", responder=lambda r: Reply(text="Maybe.")) as s,
        pytest.raises(FactBoardError, match="no usable label.*unparsable"),
    ):
        run_llm(
            "compatible:m",
            "demo",
            prompt_id="summedits-zs-v1",
            limit=3,
            options=_opts(s),
            root=demo_root,
            retry=NO_WAIT,
        )
    assert not [
        r for r in runs.list_runs(demo_root).runs if r.config.prompt_id == "summedits-zs-v1"
    ]
    # the replies were cached all the same
    cached = list((demo_root / ".cache" / "llm").rglob("*.json"))
    assert len(cached) == 3 and json.loads(cached[0].read_text())["response"]["text"] == "Maybe."


def test_the_cli_runs_a_detector_and_a_judge(tmp_path: Path, tmp_data_root: Path) -> None:
    import re
    import subprocess
    import sys

    ingest_summexecedit(tmp_path, tmp_data_root)
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "FACTBOARD_DATA": str(tmp_data_root)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "evaluator", *args],
            env=env,
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def de(req: Recorded) -> Reply:
        if "rejected" in req.user.split("[Summary]")[-1]:
            return Reply(text='{"consistent": "no", "explanation": "It was approved."}')
        return Reply(text='{"consistent": "yes", "explanation": ""}')

    with FakeLLMServer("openai", responder=de) as s:
        out = cli(
            "run",
            "--llm",
            "compatible:det",
            "--prompt",
            "summexecedit-de-v1",
            "--benchmark",
            "summexecedit",
            "--option",
            f"base_url={s.url}",
        )
        assert out.returncode == 0, out.stderr
        assert s.count == 6
    m = re.search(r"runs/([A-Za-z0-9._-]+)", out.stdout)
    assert m is not None
    judge = lambda req: Reply(text=f"Same error.\nGRADE {req.judge_tag}: 1")  # noqa: E731
    with FakeLLMServer("openai", responder=judge) as j:
        out = cli(
            "judge",
            "--run",
            m.group(1),
            "--judge",
            "compatible:j",
            "--protocol",
            "EvalV4",
            "--option",
            f"base_url={j.url}",
        )
        assert out.returncode == 0, out.stderr
        assert j.count == 1
    assert re.search(r"explanation_score\s+1\.0000", out.stdout)
    assert re.search(r"joint_score\s+0\.2500", out.stdout)  # 1 of 4 inconsistent, graded 1
    bad = cli(
        "run", "--llm", "bedrock:x", "--prompt", "summexecedit-de-v1", "--benchmark", "summexecedit"
    )
    assert bad.returncode == 1 and "anthropic, compatible, openai" in bad.stderr
    assert KEY not in out.stdout + out.stderr
