"""Granite Guardian 3.3 end to end on a tiny random-weight Granite model built offline: the
groundedness prompt of the 3.3 template (exact text), IBM's P(yes) over the generated steps, the
transformers path against the model run plainly one prompt at a time, the server path (the fake
server answering with the tiny model's own greedy steps and log-probabilities) against the
transformers path, the chat-template check, the command line, and the errors."""

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

NEW_TOKENS = 6  # generated steps in the equality tests (the default, 20, is slower on a CPU)


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
        "granite-guardian",
        checkpoint=tiny["granite"],
        device="cpu",
        batch_size=3,
        options=options or None,
    )


def test_prompt_is_the_templates_groundedness_case() -> None:
    from evaluator.detectors.granite import granite_prompt

    # written out from IBM's port of the 3.3 template (ibm-granite/gguf,
    # resources/ollama/granite3.3-guardian/template.txt) for one document and an assistant turn
    assert granite_prompt("The library opened in 2021.", "The library is new.") == (
        "<|start_of_role|>system<|end_of_role|>As a judge agent, your role is to help assess "
        "whether the provided text meets the given judging criteria, utilizing all available "
        "information, including conversations, documents, and tools.<|end_of_text|>\n"
        '<|start_of_role|>document {"document_id" :"0"}<|end_of_role|>\n'
        "The library opened in 2021.<|end_of_text|>\n"
        "<|start_of_role|>assistant<|end_of_role|>The library is new.<|end_of_text|>\n"
        "<|start_of_role|>judge_protocol<|end_of_role|>### Criteria: A text is considered "
        "ungrounded or unfaithful if it includes information lacking support from, or directly "
        "contradicting, the provided document(s). This risk arises when the text fabricates "
        "details, misinterprets the content, or makes unsupported extrapolations beyond what is "
        "explicitly stated in the document(s).\n\n### Scoring Schema: If the last assistant's "
        "text meets the criteria, return 'yes'; otherwise, return 'no'.<|end_of_text|>\n"
        "<|start_of_role|>judge{no_think}<|end_of_role|>"
    )


def test_risk_is_ibms_yes_share_over_every_step() -> None:
    from evaluator.detectors.granite import granite_risk

    steps = [
        [("<", math.log(0.9)), (" yes", math.log(0.02))],
        [(" yes", math.log(0.3)), (" No", math.log(0.1)), ("YES", math.log(0.1)), ("nope", 0.0)],
    ]
    # yes: 0.02 + 0.3 + 0.1; no: 0.1 (spaces stripped, any case; other words ignored)
    assert granite_risk(steps) == pytest.approx(0.42 / 0.52)
    assert granite_risk([[("<", 0.0)]]) == pytest.approx(0.5)  # neither: one half
    assert granite_risk([[("no", 0.0)]]) == pytest.approx(0.0, abs=1e-40)


def _expected(det, tiny: dict[str, str], documents, summaries) -> list[float]:
    from evaluator.detectors.granite import granite_risk
    from tests.support.tiny_decoders import reference_steps

    out = []
    for d, s in zip(documents, summaries, strict=True):
        chunks, claims = det.chunks(d), det.claims(s)
        m = np.array(
            [
                [
                    1
                    - granite_risk(
                        reference_steps(tiny["granite"], det.prompt(c, t), NEW_TOKENS, 20)
                    )
                    for t in claims
                ]
                for c in chunks
            ]
        )
        out.append(float(m.max(axis=0).min()))
    return out


def test_transformers_path_equals_the_model_run_one_prompt_at_a_time(
    tiny: dict[str, str],
) -> None:
    det = _det(tiny, max_new_tokens=NEW_TOKENS, chunk_size=60)
    scores, evidence = det.score_with_evidence(DOCS[:2], SUMMARIES[:2])
    assert len(det.chunks(DOCS[1])) > 1
    expected = _expected(det, tiny, DOCS[:2], SUMMARIES[:2])
    assert scores == pytest.approx(expected, abs=1e-5)
    assert len({round(v, 6) for v in scores}) == len(scores)  # they vary with the input
    ev = evidence[1]
    assert ev is not None and ev["unit"] == "sentence" and len(ev["items"]) == 2
    assert scores[1] == pytest.approx(min(i["score"] for i in ev["items"]))
    for item in ev["items"]:
        assert item["score"] == pytest.approx(max(item["extra"]["chunk_scores"]))
    assert det.deviations() == ["chunk_size=60"]  # max_new_tokens is not a fidelity option
    assert "checkpoint has no chat template" in " ".join(det.describe()["stats"]["notes"])


def test_server_path_gives_the_transformers_scores(tiny: dict[str, str]) -> None:
    from tests.support.tiny_decoders import reference_steps

    local = _det(tiny, max_new_tokens=NEW_TOKENS)
    want = local.score(DOCS, SUMMARIES)

    def answer(req: Recorded) -> Reply:
        got = reference_steps(tiny["granite"], req.json["prompt"], req.json["max_tokens"], 20)
        return Reply(text="".join(s[0][0] for s in got), logprobs=got)

    with FakeLLMServer("openai", responder=answer, completions=True) as server:
        remote = _det(tiny, max_new_tokens=NEW_TOKENS, base_url=server.url, concurrency=4)
        got = remote.score(DOCS, SUMMARIES)
        reqs = list(server.requests)
    assert got == pytest.approx(want, abs=1e-5)
    assert len({round(v, 6) for v in got}) == len(got)
    assert len(reqs) == remote.stats.model_inputs == 5
    assert {(r.json["max_tokens"], r.json["logprobs"], r.json["temperature"]) for r in reqs} == {
        (NEW_TOKENS, 20, 0)
    }
    assert {r.json["model"] for r in reqs} == {tiny["granite"]}  # the checkpoint by default
    assert remote.prompt(remote.chunks(DOCS[2])[0], SUMMARIES[2]) in {
        r.json["prompt"] for r in reqs
    }


def test_a_server_hiccup_is_retried(tiny: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    import evaluator.llm.execute as execute

    monkeypatch.setattr(execute.RetryPolicy, "delay", lambda self, attempt, after: 0.0)
    steps = [[(" no", math.log(0.8)), (" yes", math.log(0.2))]]
    with FakeLLMServer("openai", completions=True) as server:
        server.script(Reply(status=503), Reply(drop=True))
        server.responder = lambda req: Reply(text=" no", logprobs=steps)
        det = _det(tiny, base_url=server.url, concurrency=1)
        assert det.score([DOCS[0]], ["The library will cost $4.5 million."]) == pytest.approx([0.8])
        assert server.count == 3


def test_think_mode_is_the_aggrefact_setup_as_a_variant(tiny: dict[str, str]) -> None:
    from evaluator.detectors.granite import think_support
    from tests.support.tiny_decoders import reference_text

    assert think_support("<think> fine </think>\n<score> No </score>") == 1.0
    assert think_support("<score> yes </score>") == 0.0
    assert think_support("no tag at all") == 0.0

    def answer(req: Recorded) -> Reply:
        verdict = "no" if "assistant<|end_of_role|>Construction" in req.json["prompt"] else "yes"
        text = f"<think> checked </think> <score> {verdict} </score>"
        return Reply(text=text, logprobs=[[("<", -0.1)]])

    with FakeLLMServer("openai", responder=answer, completions=True) as server:
        det = _det(tiny, think="true", base_url=server.url)
        doc = DOCS[0]
        scores, ev = det.score_with_evidence([doc, doc], ["Construction starts in June.", "Ok."])
        assert scores == [1.0, 0.0]
        reqs = list(server.requests)
    # the evidence shows the model's reasoning and verdict for the sentence
    assert ev[0] is not None and ev[0]["items"][0]["extra"]["answer"] == (
        "<think> checked </think> <score> no </score>"
    )
    assert {r.json["max_tokens"] for r in reqs} == {2048}
    assert all(
        r.json["prompt"].endswith("<|start_of_role|>judge{think}<|end_of_role|>") for r in reqs
    )
    assert det.deviations() == ["think=True"]
    assert default_model_name(det).endswith("[variant: think=True]")
    # on transformers, the text scored is the greedy text of the model
    local = _det(tiny, think="true", max_new_tokens=5)
    local.ensure_loaded()
    prompt = local.prompt("The library opened.", "It opened.")
    got = local.generate([prompt])[0]
    assert got.text == reference_text(tiny["granite"], prompt, 5)
    assert got.steps == []  # the thinking verdict is read from the text alone


def test_template_check_is_recorded(tiny: dict[str, str], tmp_path: Path) -> None:
    import shutil

    from transformers import AutoTokenizer

    from evaluator.detectors import granite
    from evaluator.detectors.granite import granite_prompt

    ckpt = tmp_path / "granite-with-template"
    shutil.copytree(tiny["granite"], ckpt)

    tok = AutoTokenizer.from_pretrained(ckpt)
    # a template that renders the groundedness case from the kwargs the real one takes
    tok.chat_template = (
        "{% set system_text = " + json.dumps(granite.JUDGE_SYSTEM) + " %}"
        "{% set criteria = " + json.dumps(granite.GROUNDEDNESS_CRITERIA) + " %}"
        "{% set schema = " + json.dumps(granite.ASSISTANT_SCORING) + " %}"
        "{{ '<|start_of_role|>system<|end_of_role|>' + system_text + '<|end_of_text|>\\n' }}"
        '{% for d in documents %}{{ \'<|start_of_role|>document {"document_id" :"\' + d.doc_id '
        "+ '\"}<|end_of_role|>\\n' + d.text + '<|end_of_text|>\\n' }}{% endfor %}"
        "{% for m in messages %}{{ '<|start_of_role|>' + m.role + '<|end_of_role|>' + m.content "
        "+ '<|end_of_text|>\\n' }}{% endfor %}"
        "{{ '<|start_of_role|>judge_protocol<|end_of_role|>### Criteria: ' + criteria + "
        "'\\n\\n### Scoring Schema: ' + schema + '<|end_of_text|>\\n' }}"
        "{{ '<|start_of_role|>judge{' + ('think' if think else 'no_think') + '}<|end_of_role|>' }}"
    )
    tok.save_pretrained(ckpt)
    rendered = tok.apply_chat_template(
        [{"role": "assistant", "content": "B."}],
        documents=[{"doc_id": "0", "text": "A."}],
        guardian_config={"criteria_id": "groundedness"},
        think=False,
        tokenize=False,
        add_generation_prompt=True,
    )
    assert rendered == granite_prompt("A.", "B.")
    det = build_detector("granite-guardian", checkpoint=str(ckpt), device="cpu")
    det.ensure_loaded()
    assert "chat template renders the same prompt: yes" in det.stats.notes[-1]
    # the checkpoint's template instead of the built-in text: the same prompts, the same scores
    opts = {"checkpoint_template": "true", "max_new_tokens": 2}
    own = build_detector("granite-guardian", checkpoint=str(ckpt), device="cpu", options=opts)
    builtin = build_detector(
        "granite-guardian", checkpoint=str(ckpt), device="cpu", options={"max_new_tokens": 2}
    )
    assert own.score(DOCS[:1], SUMMARIES[:1]) == builtin.score(DOCS[:1], SUMMARIES[:1])
    assert "the checkpoint's prompt is used" in own.stats.notes[-1]

    tok.chat_template = "{{ 'something else' }}"
    tok.save_pretrained(ckpt)
    det = build_detector("granite-guardian", checkpoint=str(ckpt), device="cpu")
    det.ensure_loaded()
    assert "chat template renders the same prompt: NO" in det.stats.notes[-1]
    det = build_detector("granite-guardian", checkpoint=tiny["granite"], device="cpu", options=opts)
    with pytest.raises(DetectorError, match="checkpoint_template=true: .* no chat template"):
        det.ensure_loaded()


def test_defaults_and_errors(tiny: dict[str, str]) -> None:
    from evaluator.detectors.granite import GraniteGuardian

    det = GraniteGuardian()
    assert det.checkpoint == "ibm-granite/granite-guardian-3.3-8b"
    assert det.max_new_tokens() == 20 and det.top_logprobs == 20 and not det.options["think"]
    assert GraniteGuardian(options={"think": "true"}).max_new_tokens() == 2048
    assert det.deviations() == [] and det.gpu_precision == "bfloat16"
    assert default_model_name(det) == "Granite Guardian 3.3 8B"
    with pytest.raises(
        DetectorError, match="max_new_tokens='0' of detector granite-guardian: must be at least 1"
    ):
        GraniteGuardian(options={"max_new_tokens": "0"})
    with pytest.raises(DetectorError, match="aggregate='mean'.*must be one of min, whole"):
        GraniteGuardian(options={"aggregate": "mean"})


def test_cli_run_on_the_demo(tiny: dict[str, str], tmp_data_root: Path) -> None:
    from evaluator.cli.main import main
    from evaluator.ingest.demo import build_demo
    from evaluator.store import runs

    list(build_demo(root=tmp_data_root))
    before = {r.run_id for r in runs.list_runs(benchmark="demo").runs}
    argv = ["run", "--detector", "granite-guardian", "--benchmark", "demo", "--device", "cpu"]
    argv += ["--checkpoint", tiny["granite"], "--limit", "3", "--option", "max_new_tokens=3"]
    assert main(argv) == 0
    new = [r for r in runs.list_runs(benchmark="demo").runs if r.run_id not in before]
    assert len(new) == 1
    record = json.loads((tmp_data_root / "runs" / new[0].run_id / "run.json").read_text())
    extra = record["config"]["extra"]
    assert extra["fidelity"]["splitter"] == "nltk-punkt"
    assert record["config"]["detector"] == "granite-guardian"
    assert extra["options"]["max_new_tokens"] == 3 and extra["fidelity"]["faithful"] is True
    assert extra["stats"]["samples"] == 6
    assert record["model"]["name"] == "Granite Guardian 3.3 8B (granite)"
