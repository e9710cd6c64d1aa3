"""HHEM-2.1-open on a tiny random-weight checkpoint in the released layout (config.json naming
HHEMv2ForSequenceClassification, `t5.*` weights in model.safetensors, the tokenizer from the
`foundation` folder): the prompt, the first-token read-out and the label index recomputed here
by hand; no truncation by default; the wrong checkpoint refused by name; a CLI run on the demo."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evaluator.detectors.base import DetectorError
from evaluator.detectors.runner import build_detector
from tests.support.detectors import DOCS, SUMMARIES, require_model_libraries

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    require_model_libraries(("torch", "transformers", "tokenizers", "safetensors"))
    from tests.support.tiny_checkers import build_hhem

    return build_hhem(tmp_path_factory.mktemp("tiny-hhem"))


def _by_hand(tiny: dict[str, str], premise: str, hypothesis: str) -> tuple[float, float, int]:
    """(P(class 0), P(class 1), first token id) for one pair, from the saved tensors: the
    released prompt, flan-t5's tokenizer, the T5 encoder, the head on the first position."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoTokenizer, T5Config, T5EncoderModel

    state = load_file(str(Path(tiny["hhem"]) / "model.safetensors"))
    cfg = T5Config.from_pretrained(tiny["hhem-foundation"])
    enc = T5EncoderModel(cfg)
    enc_state = {
        k[len("t5.transformer.") :]: v for k, v in state.items() if k.startswith("t5.transformer.")
    }
    enc_state["encoder.embed_tokens.weight"] = enc_state["shared.weight"]
    enc.load_state_dict(enc_state, strict=True)
    enc.eval()
    tok = AutoTokenizer.from_pretrained(tiny["hhem-foundation"])
    text = (
        "<pad> Determine if the hypothesis is true given the premise?\n\n"
        f"Premise: {premise}\n\nHypothesis: {hypothesis}"
    )
    ids = tok(text, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        hidden = enc(input_ids=ids).last_hidden_state[0, 0]
        logits = hidden @ state["t5.classifier.weight"].T + state["t5.classifier.bias"]
        p = torch.softmax(logits, dim=-1)
    return float(p[0]), float(p[1]), int(ids[0, 0])


def test_the_prompt_is_the_released_template() -> None:
    from evaluator.detectors.hhem import HHEM_PROMPT, hhem_prompt

    assert hhem_prompt("The cat sat.", "A cat sat.") == (
        "<pad> Determine if the hypothesis is true given the premise?\n\n"
        "Premise: The cat sat.\n\nHypothesis: A cat sat."
    )
    # braces in the texts are data, not format fields
    tail = "Premise: {x}\n\nHypothesis: {text1}"
    assert hhem_prompt("{x}", "{text1}", HHEM_PROMPT).endswith(tail)


def test_scores_are_p_consistent_at_the_first_token(tiny: dict[str, str]) -> None:
    det = build_detector("hhem", checkpoint=tiny["hhem"], device="cpu", batch_size=2)
    docs = [*DOCS, DOCS[0]]
    sums = [*SUMMARIES, SUMMARIES[1]]
    scores, ev = det.score_with_evidence(docs, sums)
    pad = det.tokenizer.pad_token_id
    for d, s, got, e in zip(docs, sums, scores, ev, strict=True):
        p0, p1, first = _by_hand(tiny, d, s)
        assert first == pad  # the literal "<pad>" opens every input: its logits are read
        assert got == pytest.approx(p1, abs=1e-5)
        assert abs(p1 - p0) > 1e-3  # the two classes differ: index 1 is pinned, not 0
        assert e == {
            "unit": "claim",
            "aggregate": "single",
            "items": [{"text": s, "score": pytest.approx(got)}],
            "note": "HHEM reads the whole document and the summary as one input: one verdict",
        }
    assert len(set(np.round(scores, 6))) == len(scores)  # the model reads its input
    assert det.stats.model_inputs == len(docs)
    assert det.deviations() == [] and det.describe()["fidelity"]["faithful"] is True
    notes = " ".join(det.describe()["stats"]["notes"])
    assert "P(consistent)" in notes and "0 hallucinated, 1 consistent" in notes
    assert "no input limit" in notes
    # deterministic: a second detector gives the same scores
    again = build_detector("hhem", checkpoint=tiny["hhem"], device="cpu").score(docs, sums)
    assert again == pytest.approx(scores, abs=1e-6)


def test_either_tied_embedding_name_and_either_weight_file_load(
    tiny: dict[str, str], tmp_path: Path
) -> None:
    from safetensors.torch import load_file, save_file

    state = load_file(str(Path(tiny["hhem"]) / "model.safetensors"))
    state["t5.transformer.encoder.embed_tokens.weight"] = state.pop("t5.transformer.shared.weight")
    other = tmp_path / "hhem-embed-name"
    other.mkdir()
    shutil.copy(Path(tiny["hhem"]) / "config.json", other / "config.json")
    save_file(state, str(other / "model.safetensors"))
    base = build_detector("hhem", checkpoint=tiny["hhem"], device="cpu").score(DOCS, SUMMARIES)
    moved = build_detector("hhem", checkpoint=str(other), device="cpu").score(DOCS, SUMMARIES)
    assert moved == pytest.approx(base, abs=1e-6)
    # the older pytorch_model.bin layout, read weights-only
    import torch

    (other / "model.safetensors").unlink()
    torch.save(state, other / "pytorch_model.bin")
    binary = build_detector("hhem", checkpoint=str(other), device="cpu").score(DOCS, SUMMARIES)
    assert binary == pytest.approx(base, abs=1e-6)
    with pytest.raises(DetectorError, match="precision='float16' of detector hhem"):
        build_detector("hhem", checkpoint=tiny["hhem"], options={"precision": "float16"})


def test_long_inputs_are_not_truncated_unless_a_limit_is_asked(tiny: dict[str, str]) -> None:
    long_doc = " ".join([DOCS[0]] * 12)
    det = build_detector("hhem", checkpoint=tiny["hhem"], device="cpu")
    det.ensure_loaded()
    rows, flags = det._rows([(long_doc, SUMMARIES[0])])
    assert flags == [False] and len(rows[0]["input_ids"]) > 1000  # past flan-t5's 512
    det.score([long_doc], [SUMMARIES[0]])
    assert det.stats.inputs_truncated == 0 and det.stats.samples_truncated == 0

    var = build_detector(
        "hhem", checkpoint=tiny["hhem"], device="cpu", options={"max_length": "300"}
    )
    assert var.deviations() == ["max_length=300"]
    scores = var.score([long_doc, DOCS[2]], [SUMMARIES[0], SUMMARIES[2]])
    assert all(0.0 <= v <= 1.0 for v in scores)
    assert var.stats.inputs_truncated == 1 and var.stats.samples_truncated == 1
    assert var.describe()["stats"]["max_input_tokens"] == {"classifier": 300}
    rows, flags = var._rows([(long_doc, SUMMARIES[0])])
    assert flags == [True] and len(rows[0]["input_ids"]) <= 300
    text = var.tokenizer.decode(rows[0]["input_ids"], skip_special_tokens=True)
    # the premise is shortened; the hypothesis and the end of the prompt are kept whole
    assert text.rstrip().endswith(f"Hypothesis: {SUMMARIES[0]}")
    assert "Premise: The council of Westmere" in text
    with pytest.raises(DetectorError, match="max_length=8 of detector hhem"):
        build_detector("hhem", checkpoint=tiny["hhem"], options={"max_length": "8"})


def test_a_checkpoint_of_another_architecture_is_refused_by_name(
    tiny: dict[str, str], tmp_path: Path
) -> None:
    # the foundation folder is a plain T5 config: not HHEM
    det = build_detector("hhem", checkpoint=tiny["hhem-foundation"], device="cpu")
    with pytest.raises(DetectorError, match=r"model_type 't5'.*not HHEM-2.1-open"):
        det.score(["a"], ["b"])
    seq2seq = tmp_path / "seq2seq"
    seq2seq.mkdir()
    (seq2seq / "config.json").write_text(
        json.dumps({"architectures": ["T5ForConditionalGeneration"], "model_type": "t5"})
    )
    with pytest.raises(DetectorError, match="T5ForConditionalGeneration, not HHEM-2.1-open"):
        build_detector("hhem", checkpoint=str(seq2seq), device="cpu").score(["a"], ["b"])
    # the right config over weights without the head
    from safetensors.torch import load_file, save_file

    headless = tmp_path / "headless"
    headless.mkdir()
    shutil.copy(Path(tiny["hhem"]) / "config.json", headless / "config.json")
    state = load_file(str(Path(tiny["hhem"]) / "model.safetensors"))
    save_file(
        {k: v for k, v in state.items() if "classifier" not in k},
        str(headless / "model.safetensors"),
    )
    with pytest.raises(DetectorError, match=r"does not hold HHEM-2.1-open weights"):
        build_detector("hhem", checkpoint=str(headless), device="cpu").score(["a"], ["b"])
    (headless / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(DetectorError, match=r"cannot read HHEM weights .*model.safetensors"):
        build_detector("hhem", checkpoint=str(headless), device="cpu").score(["a"], ["b"])
    # no weights at all, and a path that is nothing
    empty = tmp_path / "no-weights"
    empty.mkdir()
    shutil.copy(Path(tiny["hhem"]) / "config.json", empty / "config.json")
    with pytest.raises(DetectorError, match="no model.safetensors or pytorch_model.bin"):
        build_detector("hhem", checkpoint=str(empty), device="cpu").score(["a"], ["b"])
    with pytest.raises(DetectorError, match="cannot load the HHEM config"):
        build_detector("hhem", checkpoint=str(tmp_path / "missing"), device="cpu").score(
            ["a"], ["b"]
        )


def test_cli_run_on_the_demo(tiny: dict[str, str], tmp_data_root: Path) -> None:
    from evaluator.ingest.demo import build_demo
    from evaluator.store import ingested, layout, runs

    list(build_demo(root=tmp_data_root))
    env = {**os.environ, "FACTBOARD_DATA": str(tmp_data_root), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "evaluator", "run", "--detector", "hhem", "--benchmark", "demo"]
    cmd += ["--checkpoint", tiny["hhem"], "--device", "cpu", "--batch-size", "8", "--limit", "10"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "written to" in out.stdout
    listed = [r for r in runs.list_runs(benchmark="demo").runs if r.config.detector == "hhem"]
    assert len(listed) == 1
    rec = listed[0]
    assert rec.model.name == "HHEM-2.1-open (hhem)"
    assert rec.config.checkpoint == tiny["hhem"]
    extra = rec.config.extra
    assert extra["fidelity"]["faithful"] is True and extra["fidelity"]["deviations"] == []
    assert extra["fidelity"]["known_differences"]
    assert extra["options"] == {"foundation": None, "max_length": 0, "precision": "auto"}
    assert extra["dtype"] == "float32"
    stats = extra["stats"]
    samples = ingested.load_samples("demo")
    assert stats["samples"] == 10 * samples["split"].nunique()  # the first 10 of each split
    assert stats["inputs_truncated"] == 0
    assert any("P(consistent)" in n for n in stats["notes"])
    preds = runs.read_predictions(layout.run_dir(rec.run_id))
    assert len(preds) == stats["samples"]
    assert all(0.0 <= v <= 1.0 and not math.isnan(v) for v in preds["score"])
