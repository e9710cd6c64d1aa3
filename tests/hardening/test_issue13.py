"""One test per failure of the public-space hardening issue, reproducing it as described and
asserting the fixed behaviour (the read side's items are tested in tests/explorer and tests/app).
"""

from __future__ import annotations

import json
import subprocess
import tomllib
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluator.cli.main import main as cli_main
from evaluator.core import metrics
from evaluator.core.errors import CorruptRunError
from evaluator.core.sanitize import dumps_strict
from evaluator.core.types import Counts, ModelInfo, RunRecord, ThresholdInfo
from evaluator.jobs import queue, worker
from evaluator.llm.cache import ResponseCache
from evaluator.llm.clients import MAX_REPLY_CHARS, ChatResponse
from evaluator.store import export, ingested, layout, runs
from evaluator.submissions import moderation, records
from evaluator.submissions import service as submit
from evaluator.submissions import validation as V
from tests.support.submit import predictions_csv

REPO = Path(__file__).resolve().parents[2]


def meta(name: str = "My detector", **kw: object) -> submit.SubmissionMeta:
    return submit.SubmissionMeta(benchmark="demo", model_name=name, **kw)  # type: ignore[arg-type]


def _strict_load(path: Path) -> object:
    def refuse(const: str) -> object:
        raise ValueError(f"bare {const} in {path}")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def _record(run_id: str, **kw: object) -> RunRecord:
    base: dict[str, object] = {
        "run_id": run_id,
        "benchmark": "demo",
        "benchmark_version": "v",
        "model": ModelInfo(name="M", kind="non-llm"),
        "origin": "evaluated",
        "threshold": ThresholdInfo(policy="labels"),
        "splits": ["test"],
        "created_at": runs.now_iso(),
        "counts": Counts(n=1, predicted=1, missing=0),
    }
    base.update(kw)
    return RunRecord(**base)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# 3, 4: corrupt job files; requeue and cancel


def test_3_a_corrupt_job_file_outside_pending_does_not_stop_the_queue(
    tmp_data_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = queue.enqueue("noop", {"x": 1})
    q = queue.queue_dir()
    (q / "done" / "broken.json").write_text("{not json")
    (q / "running" / "halfway.json").write_text('{"id": "halfway", "kind": 3, "payload": {}}')
    # the listing (the Queue page, `queue`) skips them and says which they are
    assert [j.id for j in queue.list_jobs()] == [good.id]
    assert cli_main(["queue"]) == 0
    out, err = capsys.readouterr()
    assert good.id in out and "broken.json" in err and "not valid JSON" in err
    # a worker starts, quarantines the corrupt running file, and runs the good job
    worker.register_handler("noop", lambda payload, report: {"ok": True})
    assert worker.run_worker(once=True, recover_grace=0) == 1
    assert queue.get(good.id).status == "done"  # type: ignore[union-attr]
    assert (q / "failed" / "halfway.corrupt").is_file()
    found = {p.name: why for p, why in queue.corrupt_files()}
    assert "broken.json" in found and "halfway.corrupt" in found
    assert "'kind' has a wrong type" in found["halfway.corrupt"]


def _failed_three_times() -> queue.Job:
    job = queue.enqueue("noop", {"x": 2})
    for _ in range(job.max_attempts):
        claimed = queue.claim({"worker": "gone:1", "host": "elsewhere", "pid": 1, "start": None})
        assert claimed is not None
        queue.reap(now=1e12, lease=1)  # the worker was killed: no heartbeat
    got = queue.get(job.id)
    assert got is not None and got.status == "failed" and got.attempts == 3
    return got


def test_4_a_job_killed_three_times_can_be_requeued_or_cancelled_by_a_maintainer(
    tmp_data_root: Path, admin: str, capsys: pytest.CaptureFixture[str]
) -> None:
    job = _failed_three_times()
    assert cli_main(["queue", "requeue", job.id, "--token", "wrong-token-wrong-token"]) == 1
    assert "wrong maintainer token" in capsys.readouterr().err
    assert cli_main(["queue", "requeue", job.id, "--token", admin]) == 0
    again = queue.get(job.id)
    assert again is not None and again.status == "pending" and again.attempts == 0
    assert cli_main(["queue", "cancel", job.id, "--token", admin]) == 0
    gone = queue.get(job.id)
    assert gone is not None and gone.status == "failed"
    assert gone.error == "cancelled by a maintainer" and queue.claim() is None
    assert cli_main(["queue", "cancel", "no-such-job", "--token", admin]) == 1
    assert "no pending or failed job 'no-such-job'" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# 5: one upload limit


def test_5_the_page_and_the_engine_have_one_upload_limit_in_decimal_megabytes() -> None:
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    mb = config["server"]["maxUploadSize"]
    assert mb == V.MAX_MB and mb * 1_000_000 == V.MAX_BYTES  # Streamlit counts decimal MB
    # a file between 50,000,000 and 52,428,800 bytes: refused by the engine too, with one message
    too_big = b"sample_id,label\n" + b"x" * 50_000_000
    assert [str(p) for p in V.precheck(too_big)] == ["the file is larger than the 50 MB limit"]
    assert V.precheck(b"sample_id,label\na,1\n" + b" " * (V.MAX_BYTES - 20)) == []


# --------------------------------------------------------------------------------------------
# 6: bounded problem lists


def test_6_rows_with_a_wrong_field_count_are_counted_and_problems_are_capped(demo: Path) -> None:
    data = b"sample_id,label\n" + b"a,1,2\n" * 1_750_000  # 10.5 MB
    tracemalloc.start()
    try:
        v = V.validate_predictions(data, "p.csv")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 150_000_000  # was 792 MB
    assert len(v.problems) <= V.MAX_PROBLEMS + 2
    msgs = v.messages
    assert msgs[0] == "line 2: 3 fields, the header has 2"
    assert "line 500002: more than 500,000 rows" in msgs
    assert msgs[-1].startswith("... and ") and "more problems" in msgs[-1]
    # what the submission record keeps is the summary, not 1.75 M problems
    res = submit.submit(data, "p.csv", meta())
    assert res.status == "rejected" and len(res.problems) <= V.MAX_PROBLEMS + 2
    rec = records.record_path(records.root_dir(), res.submission_id)
    assert rec.stat().st_size < 50_000  # was 79 MB
    assert not records.upload_path(res.submission_id).exists()


# --------------------------------------------------------------------------------------------
# 7: threshold overflow, strict JSON


def test_7_a_threshold_between_huge_scores_does_not_overflow(demo: Path) -> None:
    y = np.array([1, 1, 0, 0])
    s = np.array([1.7e308, 1.7e308, 1.5e308, 1.5e308])
    t = metrics.best_threshold(y, s)
    assert np.isfinite(t.value) and 1.5e308 < t.value <= 1.7e308 and t.balanced_accuracy == 1.0
    # through the whole submit path: a perfect separator scores BAcc 1.0, run.json strict JSON
    samples = ingested.load_samples("demo")
    df = pd.DataFrame(
        {
            "sample_id": samples["sample_id"],
            "score": np.where(samples["label"] == 1, 1.7e308, 1.5e308),
        }
    )
    res = submit.submit(df.to_csv(index=False).encode(), "s.csv", meta())
    assert res.ok and res.record is not None, res.problems
    assert res.record.result("balanced_accuracy").value == 1.0
    assert res.record.result("roc_auc").value == 1.0
    assert res.run_id is not None
    _strict_load(runs.find_run(res.run_id) / layout.RUN_FILE)


def test_7_run_json_never_holds_a_bare_infinity(tmp_data_root: Path) -> None:
    rec = _record("demo-m-inf-000000", threshold=ThresholdInfo(policy="dev", threshold=np.inf))
    path = runs.write_run(rec, pd.DataFrame({"sample_id": ["a"], "label": [1]}))
    data = _strict_load(path / layout.RUN_FILE)
    assert isinstance(data, dict) and data["threshold"]["threshold"] is None
    assert dumps_strict({"x": float("nan"), "y": [float("-inf"), 1.0]}) == (
        '{"x": null, "y": [null, 1.0]}'
    )


# --------------------------------------------------------------------------------------------
# 8: near-duplicates, confusable names, quotas


def _labels_file(seed: int = 0, **extra: object) -> bytes:
    df = pd.read_csv(pd.io.common.BytesIO(predictions_csv(seed)), dtype={"sample_id": str})
    for k, v in extra.items():
        df[k] = v
    return df.to_csv(index=False).encode()


def test_8_a_near_duplicate_with_the_same_final_labels_is_refused(demo: Path) -> None:
    first = submit.submit(_labels_file(), "a.csv", meta("Original"))
    assert first.ok, first.problems
    # one extra explanation character, or a constant score column: the same labels
    for i, extra in enumerate(({"explanation": "x"}, {"score": 0.5})):
        res = submit.submit(_labels_file(**extra), "b.csv", meta(f"Another {i}"))  # type: ignore[arg-type]
        assert res.status == "rejected"
        assert res.problems == [
            f"duplicate submission: it scores exactly as run {first.run_id} ('Original', "
            f"{first.record.created_at[:10]}) (the same final labels or the same scores on the "  # type: ignore[union-attr]
            "scored split, whatever else differs)"
        ]
    # different labels are a new submission
    assert submit.submit(_labels_file(seed=1), "c.csv", meta("Third")).ok


def test_8_confusable_model_names_are_one_name(demo: Path) -> None:
    assert submit.submit(predictions_csv(1), "a.csv", meta("Par 12")).ok
    res = submit.submit(predictions_csv(2), "b.csv", meta("\u0420\u0430r 12"))  # Cyrillic Р, а
    assert res.status == "rejected"
    assert any("a model named 'Раr 12' already has a run on demo" in p for p in res.problems)


def test_8_quotas_per_submitter_and_per_benchmark(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOARD_QUOTA_PER_DAY", "2")
    monkeypatch.setenv("FACTBOARD_QUOTA_BENCHMARK_PER_DAY", "4")
    alice = "hf:alice"
    for seed in (1, 2):
        assert submit.submit(predictions_csv(seed), "a.csv", meta(f"A{seed}"), submitter=alice).ok
    over = submit.submit(predictions_csv(3), "a.csv", meta("A3"), submitter=alice)
    assert over.status == "rejected"
    assert over.problems == [
        "submission limit reached: 2 submissions per day per submitter; try again tomorrow, "
        "or ask a maintainer"
    ]
    assert not records.upload_path(over.submission_id).exists()  # the bytes were never kept
    # a maintainer is exempt; another submitter has their own quota, until the benchmark's
    assert submit.submit(predictions_csv(3), "a.csv", meta("A3"), submitter=alice, exempt=True).ok
    assert submit.submit(predictions_csv(4), "b.csv", meta("B4"), submitter="hf:bob").ok
    full = submit.submit(predictions_csv(5), "b.csv", meta("B5"), submitter="hf:bob")
    assert full.problems == [
        "submission limit reached for demo: 4 submissions per day; try again tomorrow"
    ]
    # bytes kept per submitter
    monkeypatch.setenv("FACTBOARD_QUOTA_BENCHMARK_PER_DAY", "0")
    monkeypatch.setenv("FACTBOARD_QUOTA_BYTES", "100")
    big = submit.submit(predictions_csv(6), "c.csv", meta("C6"), submitter="hf:carol")
    assert big.status == "rejected" and big.problems[0].startswith("storage limit reached")


# --------------------------------------------------------------------------------------------
# 9: the board CSV keeps negative numbers


def test_9_the_board_csv_neutralises_formulas_but_not_negative_numbers() -> None:
    df = pd.DataFrame(
        {
            "threshold": ["-0.5 (tuned on dev)", '=HYPERLINK("http://x","y")', "-1+A1"],
            "value": [-0.5, 0.1, 0.2],
        }
    )
    text = export.to_csv(df)
    assert "\n-0.5 (tuned on dev),-0.5\n" in text
    assert "'=HYPERLINK" in text and "'-1+A1" in text


# --------------------------------------------------------------------------------------------
# 10: `python -m evaluator score` checks names and URLs, writes origin "evaluated"


def test_10_score_checks_names_and_urls_and_writes_evaluated(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "p.csv"
    f.write_bytes(predictions_csv(7))
    before = sorted(p.name for p in layout.runs_dir().iterdir())
    for name, msg in (
        ("x" * 121, "model name: 121 characters; at most 80 are allowed"),
        ("", "model name: empty (or only spaces)"),
        ("=cmd()", "model name: must start with a letter or a digit"),
    ):
        assert cli_main(["score", str(f), "--benchmark", "demo", "--model-name", name]) == 1
        err = capsys.readouterr().err
        assert msg in err and "Traceback" not in err
    bad_url = ["--url", "javascript:alert(1)"]
    assert cli_main(["score", str(f), "--benchmark", "demo", "--model-name", "Ok", *bad_url]) == 1
    assert "URL: must start with http:// or https://" in capsys.readouterr().err
    assert sorted(p.name for p in layout.runs_dir().iterdir()) == before
    assert cli_main(["score", str(f), "--benchmark", "demo", "--model-name", "Mine"]) == 0
    [rec] = [r for r in runs.list_runs().runs if r.model.name == "Mine"]
    assert rec.origin == "evaluated"


# --------------------------------------------------------------------------------------------
# 11: one redaction for everything written


SECRET = "echoed-secret-0123456789abcdef"


def test_11_an_echoed_key_never_reaches_a_run_or_the_cache(
    tmp_data_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOARD_COMPATIBLE_API_KEY", SECRET)
    monkeypatch.setenv("HF_TOKEN", "hf_" + "a" * 30)
    echoed = f"Yes. (my key is {SECRET}, token hf_{'a' * 30})"
    rec = _record(
        "demo-m-echo-000000",
        config={"llm": "compatible:m", "extra": {"served_models": [f"m-{SECRET}"]}},
    )
    preds = pd.DataFrame(
        {
            "sample_id": ["a", "b"],
            "label": [1, 0],
            "raw_output": [echoed, "No."],
            "explanation": [None, f"because {SECRET}"],
        }
    )
    path = runs.write_run(rec, preds)
    on_disk = b"".join(p.read_bytes() for p in path.rglob("*") if p.is_file())
    assert SECRET.encode() not in on_disk and b"hf_aaaa" not in on_disk
    stored = runs.read_predictions(path)
    assert stored.loc[0, "raw_output"] == "Yes. (my key is [redacted], token [redacted])"
    assert stored.loc[1, "raw_output"] == "No."
    assert runs.read_record(path).config.extra["served_models"] == ["m-[redacted]"]
    cache = ResponseCache(tmp_data_root / ".cache" / "llm")
    cache.put("ab" * 32, {"model": "m"}, ChatResponse(text=echoed, model=f"m {SECRET}"))
    cached = b"".join(p.read_bytes() for p in cache.directory.rglob("*.json"))
    assert SECRET.encode() not in cached
    got = cache.get("ab" * 32)
    assert got is not None and got.text == "Yes. (my key is [redacted], token [redacted])"


# --------------------------------------------------------------------------------------------
# 12: moderation delete removes the raw upload


def test_12_moderation_delete_removes_the_raw_upload(demo: Path, admin: str) -> None:
    res = submit.submit(predictions_csv(8), "p.csv", meta())
    assert res.ok and res.run_id is not None
    upload = records.upload_path(res.submission_id)
    assert upload.is_file()
    assert moderation.moderate("delete", res.run_id, admin) == [res.run_id]
    assert not upload.exists()
    assert records.read_submission(res.submission_id)["status"] == "deleted"


# --------------------------------------------------------------------------------------------
# minor


def test_minor_a_zip_after_a_byte_order_mark_is_reported_as_a_zip() -> None:
    [p] = V.precheck(b"\xef\xbb\xbfPK\x03\x04" + b"\x00" * 100)
    assert str(p).startswith("the file is a zip archive")


def test_minor_scores_written_with_digit_underscores_are_refused() -> None:
    v = V.validate_predictions(b"sample_id,score\na,1_000\nb,0.5\nc,-2e3\n", "p.csv")
    assert v.messages == ["line 2: score '1_000' is not a number"]


def test_minor_llm_replies_are_capped(tmp_path: Path) -> None:
    big = ChatResponse(text="x" * 2_000_000)
    assert len(big.text) == MAX_REPLY_CHARS and big.finish_reason == "capped"
    cache = ResponseCache(tmp_path)
    cache.put("cd" * 32, {}, ChatResponse(text="y" * 2_000_000))
    [f] = list(tmp_path.rglob("*.json"))
    assert f.stat().st_size < MAX_REPLY_CHARS + 1000


def test_minor_gitignore_keeps_only_the_demo_baselines() -> None:
    def ignored(path: str) -> bool:
        r = subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO, check=False)
        return r.returncode == 0

    runs_dir = "leaderboard_data/runs"
    assert not ignored(f"{runs_dir}/demo-always-consistent-20261122T055647-fe22a3/run.json")
    # runs submitted to the demo benchmark (an 8-hex submission id), whatever their name
    assert ignored(f"{runs_dir}/demo-my-model-20261124T025401-bb5b8151/run.json")
    assert ignored(f"{runs_dir}/demo-always-consistent-20261124T025401-bb5b8151/run.json")


# --------------------------------------------------------------------------------------------
# 2 (engine side): one record check for the CLI and the app


def test_2_validate_record_refuses_what_the_cli_refuses(tmp_path: Path) -> None:
    good = _record("demo-m-ok-000000").model_dump(mode="json")
    assert runs.validate_record(good, tmp_path / "demo-m-ok-000000").run_id == "demo-m-ok-000000"
    bad_value = json.loads(json.dumps(good))
    bad_value["results"] = [
        {
            "split": "test",
            "unit": "summary",
            "slice_kind": "overall",
            "slice_value": "",
            "metric": "balanced_accuracy",
            "value": "abc",
            "n": 3,
        }
    ]
    long_name = json.loads(json.dumps(good))
    long_name["model"]["name"] = "m" * 5000
    for data, field in ((bad_value, "results.0.value"), (long_name, "model.name")):
        with pytest.raises(CorruptRunError, match=f"field '{field}'"):
            runs.validate_record(data, tmp_path / "demo-m-ok-000000")
        # the CLI's read_record says the same about the same file
        d = tmp_path / "demo-m-ok-000000"
        d.mkdir(exist_ok=True)
        (d / layout.RUN_FILE).write_text(json.dumps(data))
        (d / layout.PREDICTIONS_FILE).write_bytes(b"")
        with pytest.raises(CorruptRunError, match=f"field '{field}'"):
            runs.read_record(d)


def test_8_a_maintainer_submits_from_the_cli_without_a_quota(
    demo: Path, admin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOARD_QUOTA_BENCHMARK_PER_DAY", "1")
    f = tmp_path / "p.csv"
    for seed in (1, 2):
        f.write_bytes(predictions_csv(seed))
        args = ["submit", str(f), "--benchmark", "demo", "--model-name", f"Model {seed}"]
        expected = 0 if seed == 1 else 1  # the second is over the benchmark's daily limit
        assert cli_main(args) == expected
    assert cli_main([*args, "--token", "wrong-token-wrong-token"]) == 1
    assert cli_main([*args, "--token", admin]) == 0


def test_2_write_run_applies_the_same_record_check(tmp_data_root: Path) -> None:
    # model_copy(update=...) skips pydantic's validation: the writer checks what it writes
    bad = _record("demo-m-copy-000000").model_copy(
        update={
            "model": ModelInfo(name="M", kind="non-llm").model_copy(update={"name": "m" * 5000})
        }
    )
    with pytest.raises(CorruptRunError, match="field 'model.name'"):
        runs.write_run(bad, pd.DataFrame({"sample_id": ["a"], "label": [1]}))
    assert not (layout.runs_dir() / "demo-m-copy-000000").exists()
