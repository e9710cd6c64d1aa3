"""An LLM checks LLM-AggreFact claims with the MiniCheck paper's prompt: one request per claim,
the claim and its document filled in, yes/no read as supported/unsupported, and Overall the mean
of the per-dataset balanced accuracies (fake OpenAI-compatible server on 127.0.0.1)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from evaluator.cli.main import main
from evaluator.llm import prompts as P
from evaluator.llm.execute import RetryPolicy
from evaluator.llm.runner import run_llm
from evaluator.store import ingested, runs

if os.environ.get("CI"):
    import openai  # noqa: F401  (CI must have requirements-llm.txt)
else:
    pytest.importorskip("openai")

from tests.support.llm_aggrefact_data import write_release
from tests.support.llm_servers import FakeLLMServer, Recorded, Reply

KEY = "sk-test-AGGREFACT-KEY-0123456789"
NO_WAIT = RetryPolicy(max_attempts=3, base=0.0, sleep=lambda s: None)


def _claim(req: Recorded) -> str:
    return req.user.split("\nClaim: ", 1)[1].split("\nPlease assess", 1)[0]


def _answer(req: Recorded) -> Reply:
    """Says yes to the claims that repeat the document, and wrongly to every claim numbered 0."""
    return Reply(text="yes" if _says_yes(_claim(req)) else "no")


def _says_yes(claim: str) -> bool:
    return "approved" in claim or "(0)" in claim


def test_prompt_is_the_papers_and_asks_about_one_claim() -> None:
    p = P.get("llm-aggrefact-zs-v1")
    assert p.unit == "claim" and p.output == "yes_no"
    assert p.template.startswith("Determine whether the provided claim is consistent")
    assert p.template.endswith('responding with either "yes" or "no".\nAnswer:')
    text = P.render_detector(p, {"sample_id": "x", "document": "Doc [CLAIM].", "summary": "C."})
    assert "Document: Doc [CLAIM].\nClaim: C.\n" in text  # one pass: the document is not refilled


def test_an_llm_run_on_llm_aggrefact(
    tmp_data_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOARD_COMPATIBLE_API_KEY", KEY)
    monkeypatch.delenv("FACTBOARD_LLM_CACHE", raising=False)
    assert main(["ingest", "llm_aggrefact", "--from", str(write_release(tmp_path / "rel"))]) == 0
    with FakeLLMServer("openai", responder=_answer) as s:
        paths = run_llm(
            "compatible:fake-checker",
            "llm_aggrefact",
            prompt_id="llm-aggrefact-zs-v1",
            splits=["test"],
            options={"base_url": s.url, "timeout": "5"},
            root=tmp_data_root,
            retry=NO_WAIT,
        )
    samples = ingested.load_samples("llm_aggrefact", tmp_data_root)
    test = samples[samples["split"] == "test"].set_index("sample_id")
    assert s.count == len(test)
    assert {_claim(r) for r in s.requests} == set(test["summary"])
    rec = runs.read_record(paths[0])
    preds = runs.read_predictions(paths[0]).set_index("sample_id")
    for sid, row in test.iterrows():
        assert preds.loc[sid, "label"] == int(_says_yes(row["summary"]))
    baccs = []
    for _, grp in test.groupby("domain"):
        y = grp["label"].to_numpy(int)
        p = preds.loc[grp.index, "label"].to_numpy(int)
        baccs.append(np.mean([np.mean(p[y == c] == c) for c in (0, 1) if (y == c).any()]))
    assert 0.5 < float(np.mean(baccs)) < 1.0  # the fake errs, and not alike on every dataset
    overall = rec.result("balanced_accuracy", unit="claim")
    assert overall is not None and overall.value == pytest.approx(float(np.mean(baccs)))
