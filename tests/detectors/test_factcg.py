"""FactCG-DeBERTa on a tiny random-weight DeBERTa-v2 classifier: the instruction text, the NLTK
token counts and the chunking pinned on hand-made inputs; scores recomputed here chunk by chunk
(max over chunks of softmax index 1); the best chunk as evidence; truncation counted; the wrong
checkpoint refused by name; a CLI run on the demo."""

from __future__ import annotations

import functools
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.detectors.base import DetectorError
from evaluator.detectors.factcg import factcg_chunks, factcg_input, nltk_token_count
from evaluator.detectors.runner import build_detector
from evaluator.detectors.text import split_sentences
from tests.support.detectors import DOCS, SUMMARIES, require_model_libraries

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    require_model_libraries(("torch", "transformers", "tokenizers", "nltk"))
    from tests.support.tiny_checkers import build_factcg

    return build_factcg(tmp_path_factory.mktemp("tiny-factcg"))


@pytest.fixture(autouse=True)
def _punkt(nltk_data: Path) -> Path:
    """Every test here runs with nltk's punkt (a tiny model; tests/detectors/conftest.py)."""
    return nltk_data


def test_the_instruction_text_is_the_authors() -> None:
    assert factcg_input("Doc line one.\nDoc line two.", "The claim.") == (
        "Doc line one.\nDoc line two.\n\nChoose your answer: based on the paragraph above can "
        'we conclude that "The claim."?\n\nOPTIONS:\n- Yes\n- No\nI think the answer is '
    )


def test_token_counts_are_nltk_word_tokens() -> None:
    pytest.importorskip("nltk")
    # The | mayor | would | n't | pay | $ | 4.5 | million | .
    assert nltk_token_count("The mayor wouldn't pay $4.5 million.") == 9
    # "Okafor" | , | a | well-known | critic | , | said | `` | no | '' | .
    assert nltk_token_count('Okafor, a well-known critic, said "no".') == 11


def test_chunking_packs_sentences_greedily_within_the_limit() -> None:
    s = ("a b c.", "d e f g.", "h i j k l.", "m.")
    sizes = [3, 4, 5, 1]
    # 3 + 4 = 7 fits exactly; 7 + 5 overflows; 5 + 1 fits
    assert factcg_chunks(s, sizes, 7) == ("a b c.\nd e f g.", "h i j k l.\nm.")
    assert factcg_chunks(s, sizes, 100) == ("a b c.\nd e f g.\nh i j k l.\nm.",)
    # an over-long sentence later on is a chunk of its own
    assert factcg_chunks(s, sizes, 4) == ("a b c.", "d e f g.", "h i j k l.", "m.")
    # the authors' loop emits an empty chunk first when the first sentence alone is too long
    assert factcg_chunks(s, sizes, 2) == ("", "a b c.", "d e f g.", "h i j k l.", "m.")
    assert factcg_chunks((), [], 550) == ()


@functools.lru_cache(maxsize=2)
def _reference(path: str):
    """The saved classifier and tokenizer, loaded plainly with transformers."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    return tok, AutoModelForSequenceClassification.from_pretrained(path).eval()


def _by_hand(tiny: dict[str, str], chunks: tuple[str, ...], claim: str, max_length: int):
    """P(index 0) and P(index 1) of each chunk, one chunk at a time."""
    import torch

    tok, model = _reference(tiny["factcg"])
    out = []
    for c in chunks:
        text = factcg_input(c, claim)
        enc = tok(text, truncation=True, max_length=max_length, return_tensors="pt")
        with torch.no_grad():
            p = torch.softmax(model(**enc).logits[0], dim=-1)
        out.append((float(p[0]), float(p[1])))
    return out


def test_scores_are_max_over_chunks_of_p_supported(tiny: dict[str, str]) -> None:
    det = build_detector("factcg", checkpoint=tiny["factcg"], device="cpu", batch_size=3)
    assert det.deviations() == []
    scores, ev = det.score_with_evidence(DOCS, SUMMARIES)
    small = build_detector(
        "factcg", checkpoint=tiny["factcg"], device="cpu", options={"chunk_size": "25"}
    )
    assert small.deviations() == ["chunk_size=25"]
    s_scores, s_ev = small.score_with_evidence(DOCS, SUMMARIES)
    n_chunks = [len(small.chunks(d)) for d in DOCS]
    assert [len(det.chunks(d)) for d in DOCS] == [1, 1, 1]  # 550 tokens hold each document
    assert n_chunks[0] > 1 and n_chunks[1] > 1
    # the document's sentences, joined by line breaks, in order
    assert small.chunks(DOCS[0])[0] == (
        "The council of Westmere approved a new public library on Monday.\n"
        "The library will cost $4.5 million."
    )
    for d_, got, e, whole in (
        (det, scores, ev, True),
        (small, s_scores, s_ev, False),
    ):
        for doc, claim, score, evd in zip(DOCS, SUMMARIES, got, e, strict=True):
            chunks = d_.chunks(doc)
            probs = _by_hand(tiny, chunks, claim, 2048)
            p1 = [p[1] for p in probs]
            best = max(range(len(p1)), key=lambda i: p1[i])
            assert score == pytest.approx(p1[best], abs=1e-5)
            assert any(abs(p[1] - p[0]) > 1e-3 for p in probs)  # index 1, not 0
            assert evd["unit"] == "chunk" and evd["aggregate"] == "max over chunks"
            (item,) = evd["items"]
            assert item["text"] == claim and item["support"] == chunks[best]
            assert item["extra"]["chunk"] == best and item["extra"]["chunks"] == len(chunks)
            assert item["extra"]["chunk_scores"] == pytest.approx(p1, abs=1e-5)
            if whole:  # one chunk: every sentence of the document, one per line
                assert item["support"] == "\n".join(split_sentences(doc, "nltk"))
    notes = " ".join(det.describe()["stats"]["notes"])
    assert "550 NLTK tokens" in notes and "P(supported)" in notes
    assert det.describe()["stats"]["max_input_tokens"] == {"checker": 2048}
    assert det.describe()["fidelity"]["known_differences"]


def test_truncation_cuts_from_the_right_and_is_counted(tiny: dict[str, str]) -> None:
    det = build_detector(
        "factcg", checkpoint=tiny["factcg"], device="cpu", options={"max_length": "128"}
    )
    assert det.deviations() == ["max_length=128"]
    # 193 and 84 tokens: only the first is cut
    scores = det.score([DOCS[0], "Short source."], [SUMMARIES[0], "Short."])
    chunk = det.chunks(DOCS[0])[0]
    (p,) = _by_hand(tiny, (chunk,), SUMMARIES[0], 128)
    assert scores[0] == pytest.approx(p[1], abs=1e-5)
    assert det.stats.inputs_truncated == 1 and det.stats.samples_truncated == 1
    faithful = build_detector("factcg", checkpoint=tiny["factcg"], device="cpu")
    faithful.score([DOCS[0]], [SUMMARIES[0]])
    assert faithful.stats.inputs_truncated == 0


def test_a_document_without_sentences_has_no_score(tiny: dict[str, str]) -> None:
    det = build_detector("factcg", checkpoint=tiny["factcg"], device="cpu")
    scores, ev = det.score_with_evidence(["  ", DOCS[2]], ["A claim.", SUMMARIES[2]])
    assert math.isnan(scores[0]) and ev[0] is None
    assert 0.0 <= scores[1] <= 1.0 and ev[1] is not None
    assert det.stats.undefined == 1


def test_a_checkpoint_of_another_architecture_is_refused_by_name(
    tiny: dict[str, str], tmp_path: Path
) -> None:
    from transformers import DebertaV2Config, RobertaConfig

    roberta = tmp_path / "roberta"
    RobertaConfig(architectures=["RobertaForSequenceClassification"]).save_pretrained(roberta)
    with pytest.raises(DetectorError, match="RobertaForSequenceClassification, not FactCG"):
        build_detector("factcg", checkpoint=str(roberta), device="cpu").score(["a."], ["b."])
    three = tmp_path / "three-labels"
    DebertaV2Config(num_labels=3).save_pretrained(three)
    with pytest.raises(DetectorError, match="has 3 labels, not 2"):
        build_detector("factcg", checkpoint=str(three), device="cpu").score(["a."], ["b."])
    with pytest.raises(DetectorError, match="cannot load the FactCG config"):
        build_detector("factcg", checkpoint=str(tmp_path / "none"), device="cpu").score(
            ["a."], ["b."]
        )
    with pytest.raises(DetectorError, match="chunk_size='0' of detector factcg: must be at"):
        build_detector("factcg", checkpoint=tiny["factcg"], options={"chunk_size": "0"})


def test_cli_run_on_the_demo(tiny: dict[str, str], tmp_data_root: Path, nltk_data: Path) -> None:
    from evaluator.ingest.demo import build_demo
    from evaluator.store import ingested, layout, runs

    list(build_demo(root=tmp_data_root))
    env = {**os.environ, "FACTBOARD_DATA": str(tmp_data_root), "HF_HUB_OFFLINE": "1"}
    env["NLTK_DATA"] = str(nltk_data)  # the punkt model, for the command's own nltk
    cmd = [sys.executable, "-m", "evaluator", "run", "--detector", "factcg", "--benchmark"]
    cmd += ["demo", "--checkpoint", tiny["factcg"], "--device", "cpu", "--limit", "10"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "written to" in out.stdout
    listed = [r for r in runs.list_runs(benchmark="demo").runs if r.config.detector == "factcg"]
    assert len(listed) == 1
    rec = listed[0]
    assert rec.model.name == "FactCG-DeBERTa-L (factcg)"
    assert rec.config.checkpoint == tiny["factcg"]
    extra = rec.config.extra
    assert extra["fidelity"]["faithful"] is True
    assert extra["fidelity"]["splitter"] == "nltk-punkt"
    assert extra["options"] == {
        "chunk_size": 550,
        "max_length": 2048,
        "splitter": "nltk",
        "precision": "auto",
    }
    stats = extra["stats"]
    samples = ingested.load_samples("demo")
    assert stats["samples"] == 10 * samples["split"].nunique()
    assert stats["max_input_tokens"] == {"checker": 2048}
    assert any("P(supported)" in n for n in stats["notes"])
    preds = runs.read_predictions(layout.run_dir(rec.run_id))
    assert len(preds) == stats["samples"]
    assert all(0.0 <= v <= 1.0 for v in preds["score"])
