"""Bespoke-MiniCheck-7B end to end on a tiny random-weight Qwen2 chat model built offline: the
authors' prompt and Yes-probability, their chunking and sentence fusion, the transformers path
against the model run plainly one prompt at a time, the OpenAI-compatible server path (the fake
server answering with the tiny model's own log-probabilities, through the real openai client)
against the transformers path, evidence, truncation, the command line, and the errors."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from evaluator.detectors.base import DetectorError
from evaluator.detectors.runner import build_detector, default_model_name
from tests.support.detectors import DOCS, SUMMARIES
from tests.support.llm_servers import FakeLLMServer, Recorded, Reply

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    from tests.support.detectors import require_model_libraries
    from tests.support.tiny_decoders import build_tiny_decoders

    require_model_libraries()

    return build_tiny_decoders(tmp_path_factory.mktemp("tiny-decoders"))


@pytest.fixture(autouse=True)
def _punkt(nltk_data: Path) -> Path:
    """Every test here runs with nltk's punkt (a tiny model; tests/detectors/conftest.py)."""
    return nltk_data


def _det(tiny: dict[str, str], **options: object):
    return build_detector(
        "bespoke-minicheck",
        checkpoint=tiny["qwen2-chat"],
        device="cpu",
        batch_size=3,
        options=options or None,
    )


def test_prompt_is_the_authors_system_and_user_message(tiny: dict[str, str]) -> None:
    det = _det(tiny)
    det.ensure_loaded()
    text = det.prompt("The library opened in 2021.", "The library is new.")
    assert text == (
        "<|im_start|>system\nDetermine whether the provided claim is consistent with the "
        "corresponding document. Consistency in this context implies that all information "
        "presented in the claim is substantiated by the document. If not, it should be "
        "considered inconsistent. Please assess the claim's consistency with the document by "
        'responding with either "Yes" or "No".<|im_end|>\n'
        "<|im_start|>user\nDocument: The library opened in 2021.\nClaim: The library is new."
        "<|im_end|>\n<|im_start|>assistant\n"
    )


def test_support_is_the_yes_mass_of_the_top_five_not_renormalised() -> None:
    from evaluator.detectors.bespoke import bespoke_support

    step = [
        ("Yes", math.log(0.5)),
        ("No", math.log(0.3)),
        ("yes", math.log(0.1)),
        (" Yes", math.log(0.05)),  # a space before: not "yes" for the authors
        ("YES", math.log(0.01)),
    ]
    assert bespoke_support([step]) == pytest.approx(0.61)
    assert bespoke_support([[("No", 0.0)]]) == 0.0
    assert bespoke_support([]) == 0.0
    # only the first generated step counts
    assert bespoke_support([[("No", 0.0)], [("Yes", 0.0)]]) == 0.0


def test_chunks_as_the_authors_pack_them() -> None:
    from evaluator.detectors.decoder import llmcheck_chunks, llmcheck_sentences

    doc = "First one here. Second one.\nThird line.\n\nLast one."
    items = llmcheck_sentences(doc)
    assert items == ["First one here.", "Second one.", "\n", "Third line.", "\n", "\n", "Last one."]
    sizes = [len(s.split()) or 1 for s in items]  # 3 2 1 2 1 1 2
    whole = "First one here. Second one.\nThird line.\n\n Last one."
    assert llmcheck_chunks(items, sizes, 100) == [whole]
    assert llmcheck_chunks(items, sizes, 5) == [
        "First one here. Second one.",
        "Third line.",
        "Last one.",
    ]
    # an item longer than the limit is a chunk of its own; empty text is one empty chunk
    assert llmcheck_chunks(["a b c d", "e"], [4, 1], 2) == ["a b c d", "e"]
    assert llmcheck_chunks([], [], 10) == [""]


def _expected(det, reference, documents, summaries) -> list[float]:
    """min over sentences of max over chunks of the Yes mass, each prompt run on its own."""
    from evaluator.detectors.bespoke import bespoke_support

    out = []
    for d, s in zip(documents, summaries, strict=True):
        chunks, claims = det.chunks(d), det.claims(s)
        m = np.array(
            [[bespoke_support(reference(det.prompt(c, t))) for t in claims] for c in chunks]
        )
        out.append(float(m.max(axis=0).min()))
    return out


def test_transformers_path_equals_the_model_run_one_prompt_at_a_time(
    tiny: dict[str, str],
) -> None:
    from tests.support.tiny_decoders import reference_steps, reference_text

    det = _det(tiny, chunk_size=40)  # the documents fall into several chunks
    docs, sums = DOCS + DOCS[:1], SUMMARIES + [SUMMARIES[1]]
    scores, evidence = det.score_with_evidence(docs, sums)

    def reference(prompt: str):
        return reference_steps(tiny["qwen2-chat"], prompt, 1, 5)

    expected = _expected(det, reference, docs, sums)
    assert scores == pytest.approx(expected, abs=1e-5)
    assert len(set(np.round(scores, 6))) > 1 or len(set(np.round(expected, 6))) > 1
    assert any(v > 0.01 for v in scores)  # the tiny model does say "Yes" sometimes
    # evidence: one item per summary sentence, its best chunk and every chunk's P(Yes)
    ev = evidence[0]
    assert ev is not None and ev["unit"] == "sentence" and len(ev["items"]) == 2
    chunks = det.chunks(docs[0])
    assert len(chunks) > 1 and "chunks of at most 40 tokens" in ev["note"]
    for item in ev["items"]:
        per_chunk = item["extra"]["chunk_scores"]
        assert len(per_chunk) == len(chunks)
        assert item["score"] == pytest.approx(max(per_chunk))
        best = chunks[item["extra"]["best_chunk"]]
        assert item["support"] == best
        # the model's answer there: its greedy first token
        answer = reference_text(tiny["qwen2-chat"], det.prompt(best, item["text"]), 1)
        assert item["extra"]["answer"] == answer
    assert scores[0] == pytest.approx(min(i["score"] for i in ev["items"]))
    stats = det.describe()["stats"]
    assert stats["samples"] == 4 and stats["inputs_truncated"] == 0
    assert det.deviations() == ["chunk_size=40"]
    assert default_model_name(det).endswith("[variant: chunk_size=40]")


def test_whole_summary_as_one_claim(tiny: dict[str, str]) -> None:
    det = _det(tiny, aggregate="whole")
    scores, evidence = det.score_with_evidence(DOCS[:1], SUMMARIES[:1])
    assert evidence[0] is not None and evidence[0]["unit"] == "claim"
    assert [i["text"] for i in evidence[0]["items"]] == [SUMMARIES[0]]
    assert "aggregate=whole" in det.deviations()


def _logprob_server(path: str, steps: int, k: int):
    from tests.support.tiny_decoders import reference_steps

    def answer(req: Recorded) -> Reply:
        got = reference_steps(path, req.json["prompt"], int(req.json["max_tokens"]), k)
        return Reply(text="".join(s[0][0] for s in got), logprobs=got)

    return FakeLLMServer("openai", responder=answer, completions=True)


def test_server_path_gives_the_transformers_scores(tiny: dict[str, str]) -> None:
    local = _det(tiny, chunk_size=60)
    want, want_ev = local.score_with_evidence(DOCS, SUMMARIES)
    with _logprob_server(tiny["qwen2-chat"], 1, 5) as server:
        remote = _det(tiny, chunk_size=60, base_url=server.url, served_model="bespoke")
        got, got_ev = remote.score_with_evidence(DOCS, SUMMARIES)
        reqs = list(server.requests)
    assert got == pytest.approx(want, abs=1e-5)

    def per_chunk(ev: list) -> list[float]:
        return [v for e in ev for item in e["items"] for v in item["extra"]["chunk_scores"]]

    assert per_chunk(got_ev) == pytest.approx(per_chunk(want_ev), abs=1e-5)
    assert max(per_chunk(got_ev)) > 0.01  # not zeros on both sides
    # every distinct (chunk, sentence) prompt sent once, as raw text, one token, top 5
    assert len(reqs) == remote.stats.model_inputs
    assert {r.path for r in reqs} == {"/v1/completions"}
    assert {(r.json["model"], r.json["max_tokens"], r.json["logprobs"]) for r in reqs} == {
        ("bespoke", 1, 5)
    }
    assert reqs[0].json["temperature"] == 0
    sent = {r.json["prompt"] for r in reqs}
    first = remote.chunks(DOCS[0])[0]
    assert remote.prompt(first, "Construction starts in June.") in sent
    info = remote.describe()
    assert info["device"] == "server" and info["options"]["base_url"] == server.url
    assert remote.deviations() == ["chunk_size=60"]


def test_server_credentials_stay_out_of_the_record(tiny: dict[str, str]) -> None:
    det = _det(tiny, base_url="http://someone:s3cret@127.0.0.1:9/v1?key=abc")
    det.ensure_loaded()  # loads the tokenizer and builds the client; sends nothing
    text = json.dumps(det.describe())
    assert "s3cret" not in text and "key=abc" not in text
    assert det.describe()["options"]["base_url"] == "http://127.0.0.1:9/v1"


def test_server_errors_are_named(tiny: dict[str, str]) -> None:
    with FakeLLMServer("openai", completions=True) as server:
        server.responder = lambda req: Reply(text="Yes", logprobs=None)
        det = _det(tiny, base_url=server.url)
        with pytest.raises(DetectorError, match="returned no log-probabilities"):
            det.score(DOCS[:1], ["A claim."])
        server.responder = lambda req: Reply(status=404, message="no such model")
        det = _det(tiny, base_url=server.url)
        with pytest.raises(DetectorError, match="server refused.*no such model"):
            det.score(DOCS[:1], ["A claim."])


def test_a_prompt_over_max_length_is_cut_in_the_chunk_and_counted(tiny: dict[str, str]) -> None:
    probe = _det(tiny)
    probe.ensure_loaded()
    limit = len(probe.tokenizer(probe.prompt("", ""))["input_ids"]) + 30  # the template + 30
    det = _det(tiny, max_length=limit, chunk_size=20)
    long_claim = "The council approved the library and the mayor said so. " * 4
    scores = det.score([DOCS[0]], [long_claim.strip()])
    assert len(scores) == 1 and math.isfinite(scores[0])
    stats = det.describe()["stats"]
    assert stats["inputs_truncated"] >= 1 and stats["samples_truncated"] == 1
    chunk = det.chunks(DOCS[0])[0]
    text, cut = det.fitted_prompt(chunk, long_claim)
    assert cut and len(det.tokenizer(text)["input_ids"]) <= limit
    assert "Claim: The council" in text  # the chunk went first, then the claim's tail
    assert det.fitted_prompt(chunk, "Short.") == (det.prompt(chunk, "Short."), False)


def test_bad_options_and_checkpoints_are_named(tiny: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(DetectorError, match="chunk_size=40000 .* less than max_length=32768"):
        _det(tiny, chunk_size=40000)
    with pytest.raises(DetectorError, match="base_url .* not an http"):
        _det(tiny, base_url="localhost:8000")
    with pytest.raises(DetectorError, match="unknown option 'top_k'"):
        _det(tiny, top_k=3)
    # a tokenizer without a chat template cannot render the authors' prompt
    det = build_detector("bespoke-minicheck", checkpoint=tiny["granite"], device="cpu")
    with pytest.raises(DetectorError, match="no chat template"):
        det.score(DOCS[:1], SUMMARIES[:1])
    # the real checkpoint is InternLM2, its code shipped with it: refused unless trusted
    remote = tmp_path / "internlm2"
    remote.mkdir()
    auto = {"AutoModelForCausalLM": "modeling_internlm2.InternLM2ForCausalLM"}
    (remote / "config.json").write_text(json.dumps({"model_type": "internlm2", "auto_map": auto}))
    det = build_detector("bespoke-minicheck", checkpoint=str(remote), device="cpu")
    with pytest.raises(DetectorError, match="code ships with the checkpoint.*trust_remote_code"):
        det.score(DOCS[:1], SUMMARIES[:1])
    det = build_detector("bespoke-minicheck", checkpoint=str(tmp_path / "none"), device="cpu")
    with pytest.raises(DetectorError, match="cannot load the Bespoke-MiniCheck-7B tokenizer"):
        det.score(DOCS[:1], SUMMARIES[:1])


def test_defaults_are_the_authors_setup() -> None:
    from evaluator.detectors.bespoke import BespokeMiniCheck

    det = BespokeMiniCheck()
    assert det.checkpoint == "bespokelabs/Bespoke-MiniCheck-7B"
    assert det.options["max_length"] == 32768 and det.options["chunk_size"] == 32768 - 300
    assert det.options["aggregate"] == "min" and det.deviations() == []
    assert det.gpu_precision == "bfloat16" and det.KNOWN_DIFFERENCES
    assert default_model_name(det) == "Bespoke-MiniCheck-7B"


def test_cli_run_on_the_demo(tiny: dict[str, str], tmp_data_root: Path) -> None:
    from evaluator.cli.main import main
    from evaluator.ingest.demo import build_demo
    from evaluator.store import runs

    list(build_demo(root=tmp_data_root))
    before = {r.run_id for r in runs.list_runs(benchmark="demo").runs}  # the demo baselines
    argv = ["run", "--detector", "bespoke-minicheck", "--benchmark", "demo"]
    argv += ["--checkpoint", tiny["qwen2-chat"], "--device", "cpu", "--limit", "6"]
    assert main(argv) == 0
    new = [r for r in runs.list_runs(benchmark="demo").runs if r.run_id not in before]
    assert len(new) == 1
    record = json.loads((tmp_data_root / "runs" / new[0].run_id / "run.json").read_text())
    assert record["config"]["detector"] == "bespoke-minicheck"
    extra = record["config"]["extra"]
    assert extra["fidelity"]["splitter"] == "nltk-punkt"
    assert extra["fidelity"]["faithful"] is True and extra["fidelity"]["known_differences"]
    assert extra["stats"]["samples"] == 12 and extra["dtype"] == "float32"
    assert record["model"]["name"] == "Bespoke-MiniCheck-7B (qwen2-chat)"

    # the same run on a server answering with the tiny model's log-probabilities: same scores
    import pandas as pd

    with _logprob_server(tiny["qwen2-chat"], 1, 5) as server:
        argv_server = argv + ["--option", f"base_url={server.url}", "--model-name", "served"]
        assert main(argv_server) == 0
    served = [r for r in runs.list_runs(benchmark="demo").runs if r.model.name == "served"]
    assert len(served) == 1
    folder = tmp_data_root / "runs"
    a = pd.read_parquet(folder / new[0].run_id / "predictions.parquet").set_index("sample_id")
    b = pd.read_parquet(folder / served[0].run_id / "predictions.parquet").set_index("sample_id")
    assert len(a) == 12 and a.index.equals(b.index) and a["score"].max() > 0.5
    assert np.allclose(a["score"], b["score"], atol=1e-5)
    rec = json.loads((folder / served[0].run_id / "run.json").read_text())["config"]["extra"]
    assert rec["device"] == "server" and rec["options"]["base_url"] == server.url
