"""The detectors' aggregations, chunkings and helpers, each checked against an independent,
straightforward re-computation on hand-made inputs (no model weights needed)."""

from __future__ import annotations

import bisect
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evaluator.core.errors import UnknownNameError
from evaluator.detectors import detector_names, get_detector
from evaluator.detectors.alignscore import alignscore_aggregate
from evaluator.detectors.base import DetectorError, Opt, parse_options
from evaluator.detectors.batching import length_sorted_batches, unique
from evaluator.detectors.ldfacts import ldfacts_aggregate, snippet, top_k
from evaluator.detectors.minicheck import minicheck_aggregate
from evaluator.detectors.qags import normalize_answer, qags_aggregate, regex_candidates, token_f1
from evaluator.detectors.summac import label_order_from_config, zs_score
from evaluator.detectors.summac_conv import (
    PERCENTILE_BINS,
    conv_bins,
    conv_histogram,
    conv_probability,
)
from evaluator.detectors.text import (
    alignscore_chunks,
    doc_blocks,
    greedy_chunks,
    split_sentences,
)

# An NLI image [3 channels (entail, contradict, neutral), 4 blocks, 3 sentences], by hand.
E = [[0.9, 0.1, 0.2], [0.3, 0.05, 0.6], [0.0, 0.95, 0.1], [0.5, 0.5, 0.5]]
C = [[0.05, 0.8, 0.1], [0.6, 0.9, 0.3], [0.99, 0.0, 0.2], [0.1, 0.1, 0.1]]
IMAGE = np.array(
    [E, C, [[1 - e - c for e, c in zip(re, rc, strict=True)] for re, rc in zip(E, C, strict=True)]]
)


def test_summac_zs_is_mean_of_max_entail_minus_max_contradict() -> None:
    n_blocks, n_sents = 4, 3
    per_sentence = []
    for j in range(n_sents):
        best_e = max(E[i][j] for i in range(n_blocks))
        best_c = max(C[i][j] for i in range(n_blocks))
        per_sentence.append(best_e - best_c)
    assert zs_score(IMAGE) == pytest.approx(sum(per_sentence) / n_sents)
    # sentence 0: 0.9 - 0.99; sentence 1: 0.95 - 0.9; sentence 2: 0.6 - 0.3
    assert zs_score(IMAGE) == pytest.approx(((0.9 - 0.99) + (0.95 - 0.9) + (0.6 - 0.3)) / 3)
    assert zs_score(IMAGE, use_con=False) == pytest.approx((0.9 + 0.95 + 0.6) / 3)
    assert zs_score(IMAGE, use_ent=False) == pytest.approx(((1 - 0.99) + (1 - 0.9) + (1 - 0.3)) / 3)


def _histogram_by_hand(values: list[float], edges: tuple[float, ...]) -> list[int]:
    """numpy.histogram semantics: bins [a, b) except the last, which is [a, b]."""
    counts = [0] * (len(edges) - 1)
    for v in values:
        if v == edges[-1]:
            counts[-1] += 1
        else:
            counts[bisect.bisect_right(edges, v) - 1] += 1
    return counts


def test_summac_conv_histogram_rows_per_sentence() -> None:
    h = conv_histogram(IMAGE, PERCENTILE_BINS, "e")
    assert h.shape == (10, 23)
    for j in range(3):
        column = [E[i][j] for i in range(4)]
        assert h[j].tolist() == _histogram_by_hand(column, PERCENTILE_BINS)
        assert h[j].sum() == 4  # every block counted once
    assert not h[3:].any()  # missing sentences are zero rows
    h2 = conv_histogram(IMAGE, PERCENTILE_BINS, "ec")
    assert h2.shape == (10, 46)
    for j in range(3):
        assert h2[j, 23:].tolist() == _histogram_by_hand(
            [C[i][j] for i in range(4)], PERCENTILE_BINS
        )
    # more than 10 sentences: only the first 10 are used
    big = np.random.default_rng(0).random((3, 2, 14))
    assert conv_histogram(big, conv_bins("even5")).shape == (10, 5)


def test_summac_conv_forward_by_hand() -> None:
    rng = np.random.default_rng(1)
    width = 23
    state = {
        "conv_weight": rng.normal(size=width).tolist(),
        "conv_bias": 0.3,
        "final_weight": rng.normal(size=(2, 3)).tolist(),
        "final_bias": [0.1, -0.2],
    }
    hists = np.stack(
        [
            conv_histogram(IMAGE, PERCENTILE_BINS),
            conv_histogram(IMAGE[:, :, :1], PERCENTILE_BINS),
            np.zeros((10, width)),  # a summary with no sentence
        ]
    )
    got = conv_probability(hists, state)
    for k, h in enumerate(hists):
        rows = [
            sum(h[r][b] * state["conv_weight"][b] for b in range(width)) + state["conv_bias"]
            for r in range(10)
            if sum(h[r]) != 0
        ]
        m = sum(rows) / len(rows) if rows else 0.0
        logits = [
            sum(state["final_weight"][c][t] * m for t in range(3)) + state["final_bias"][c]
            for c in range(2)
        ]
        expected = math.exp(logits[1]) / (math.exp(logits[0]) + math.exp(logits[1]))
        assert got[k] == pytest.approx(expected, rel=1e-12)


def test_summac_conv_training_learns_a_separable_signal() -> None:
    pytest.importorskip("torch")
    from evaluator.detectors.summac_conv import train_conv

    rng = np.random.default_rng(0)
    imgs, labels = [], []
    for k in range(40):
        consistent = k % 2
        n_sent = 1 + k % 4
        ent = rng.uniform(0.9, 1.0, (6, n_sent)) if consistent else rng.uniform(0, 0.1, (6, n_sent))
        imgs.append(np.stack([ent, 1 - ent, np.zeros_like(ent)]))
        labels.append(consistent)
    h = np.stack([conv_histogram(i, PERCENTILE_BINS) for i in imgs])
    st = train_conv(h, labels, epochs=200, lr=0.05, seed=0)
    p = conv_probability(h, st)
    assert ((p > 0.5).astype(int) == np.array(labels)).all()
    assert st == train_conv(h, labels, epochs=200, lr=0.05, seed=0)  # deterministic
    with pytest.raises(DetectorError, match="both classes"):
        train_conv(h[:1], labels[:1], epochs=1, lr=0.1, seed=0)


def test_conv_bins() -> None:
    assert len(conv_bins("percentile")) == 24
    assert conv_bins("even4") == (0.0, 0.25, 0.5, 0.75, 1.0)
    with pytest.raises(DetectorError, match="unknown SummaC-Conv bins"):
        conv_bins("odd3")


def test_nli_label_order_from_names() -> None:
    assert label_order_from_config({0: "SUPPORTS", 1: "REFUTES", 2: "NOT ENOUGH INFO"}) == (0, 1, 2)
    assert label_order_from_config({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}) == (2, 0, 1)
    assert label_order_from_config({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}) is None


def test_alignscore_and_minicheck_aggregations_by_hand() -> None:
    m = np.array([[0.2, 0.9, 0.4], [0.7, 0.1, 0.3]])  # [chunks, sentences]
    best = [max(m[i][j] for i in range(2)) for j in range(3)]  # 0.7, 0.9, 0.4
    assert alignscore_aggregate(m) == pytest.approx(sum(best) / 3)
    assert minicheck_aggregate(m) == pytest.approx(min(best))
    assert minicheck_aggregate(m, "mean") == pytest.approx(sum(best) / 3)


def test_alignscore_chunks_follow_the_released_rule() -> None:
    sents = [f"Sentence number {i} has exactly seven words." for i in range(120)]
    doc = " ".join(sents)  # 840 words -> 840 // 350 + 1 = 3 chunks wanted -> 40 sentences each
    chunks = alignscore_chunks(doc)
    assert len(chunks) == 3
    assert chunks[0] == " ".join(sents[:40])
    assert alignscore_chunks("One. Two.") == ("One. Two.",)
    assert alignscore_chunks("") == ("",)


def test_minicheck_greedy_chunks() -> None:
    sents = ("a b c", "d e", "f g h i", "j")
    assert greedy_chunks(sents, [3, 2, 4, 1], 5) == ("a b c d e", "f g h i j")
    assert greedy_chunks(sents, [3, 2, 4, 1], 3) == ("a b c", "d e", "f g h i", "j")
    assert greedy_chunks((), [], 5) == ()


def test_sentence_splitting_and_blocks() -> None:
    text = "Dr. Smith arrived at 5 p.m. on Monday. He left.\n\nThe U.S. team won 2.5 points."
    assert split_sentences(text) == (
        "Dr. Smith arrived at 5 p.m. on Monday.",
        "He left.",
        "The U.S. team won 2.5 points.",
    )
    assert split_sentences("") == ()
    assert doc_blocks(text, "paragraph") == (
        "Dr. Smith arrived at 5 p.m. on Monday. He left.",
        "The U.S. team won 2.5 points.",
    )
    assert doc_blocks(text, "2sents")[0] == "Dr. Smith arrived at 5 p.m. on Monday. He left."
    assert len(doc_blocks(text, "2sents")) == 2
    assert doc_blocks(text, "document") == (text.strip(),)


def test_ldfacts_snippets_paper_and_released() -> None:
    s = ["s0", "s1", "s2", "s3"]
    assert [snippet(s, k, "paper") for k in range(4)] == ["s0 s1", "s0 s1 s2", "s1 s2 s3", "s2 s3"]
    # the released package slices [k-1 : k+1]: the previous sentence and s_k
    assert [snippet(s, k, "released") for k in range(4)] == ["s0 s1", "s0 s1", "s1 s2", "s2 s3"]
    assert snippet(["only"], 0, "released") == "only" == snippet(["only"], 0, "paper")
    assert top_k(np.array([0.1, 0.9, 0.5, 0.9]), 3) == [1, 3, 2]  # ties: earlier first
    assert top_k(np.array([0.3]), 3) == [0]
    scores = [[-2.0, -1.0, -3.0], [-0.5], [-4.0, -6.0]]
    assert ldfacts_aggregate(scores) == pytest.approx((-1.0 - 0.5 - 4.0) / 3)


def test_qags_token_f1_and_mean() -> None:
    assert normalize_answer("The  Quick, brown fox!") == "quick brown fox"
    assert token_f1("the cat sat", "a cat sat down") == pytest.approx(2 * 1 * (2 / 3) / (1 + 2 / 3))
    assert token_f1("", "") == 1.0
    assert token_f1("", "Paris") == 0.0
    assert token_f1("Paris", "London") == 0.0
    assert qags_aggregate(["Paris", "3 May", ""], ["Paris", "4 May", "x"]) == pytest.approx(
        (1.0 + 0.5 + 0.0) / 3
    )
    assert math.isnan(qags_aggregate([], []))


def test_qags_regex_candidates() -> None:
    text = (
        "The council of Westmere approved $4.5 million on 3 May. "
        'Maria Okafor called it "a new era".'
    )
    got = regex_candidates(text)
    assert "Westmere" in got
    assert "$4.5 million" in got
    assert "Maria Okafor" in got
    assert "a new era" in got
    assert "The" not in got  # a lone sentence-initial capital is not a name
    assert len(got) == len({g.lower() for g in got})


def test_length_sorted_batches_and_unique() -> None:
    lengths = [5, 9, 1, 9, 3, 7]
    batches = length_sorted_batches(lengths, 2)
    assert batches == [[1, 3], [5, 0], [4, 2]]
    assert sorted(i for b in batches for i in b) == list(range(6))
    capped = length_sorted_batches(lengths, 10, max_tokens=20)
    assert all(len(b) * max(lengths[i] for i in b) <= 20 for b in capped)
    assert unique(["a", "b", "a", "c", "b"]) == (["a", "b", "c"], [0, 1, 0, 2, 1])


def test_options_are_typed_and_unknown_ones_refused() -> None:
    spec = {"k": Opt(int, 3, "k", minimum=1), "mode": Opt(str, "a", "m", choices=("a", "b"))}
    assert parse_options("x", spec, {"k": "5"}) == {"k": 5, "mode": "a"}
    with pytest.raises(DetectorError, match="unknown option 'q' for detector x; known: k, mode"):
        parse_options("x", spec, {"q": 1})
    with pytest.raises(DetectorError, match="must be one of a, b"):
        parse_options("x", spec, {"mode": "c"})
    with pytest.raises(DetectorError, match="must be at least 1"):
        parse_options("x", spec, {"k": "0"})
    with pytest.raises(DetectorError, match=r"option k='x'"):
        parse_options("x", spec, {"k": "x"})


def test_registry_lists_every_detector_without_importing_torch() -> None:
    names = detector_names()
    for n in (
        "summac-zs",
        "summac-conv",
        "alignscore",
        "minicheck",
        "bartscore",
        "longdocfactscore",
        "qags",
        "rouge-1",
        "rouge-2",
        "rouge-l",
        "bertscore",
        "lexical-overlap",
        "novel-entities",
    ):
        assert n in names
    with pytest.raises(UnknownNameError, match="unknown detector 'summac'; known: alignscore"):
        get_detector("summac")
    # listing the detectors and constructing one loads nothing heavy (checked in a fresh process)
    code = (
        "import sys; from evaluator.detectors import detector_names, get_detector; "
        "detector_names(); d = get_detector('summac-zs')(checkpoint='/nonexistent', device='cpu'); "
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers', 'bert_score') "
        "if m in sys.modules))"
    )
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo
    )
    assert out.stdout.strip() == "[]"


def test_rouge_baselines_match_rouge_score() -> None:
    pytest.importorskip("rouge_score")
    from rouge_score import rouge_scorer

    doc = "The council approved a new library in Westmere on Monday."
    summ = "Westmere approved a library on Tuesday."
    for name, key in (("rouge-1", "rouge1"), ("rouge-2", "rouge2"), ("rouge-l", "rougeL")):
        ref = rouge_scorer.RougeScorer([key], use_stemmer=True).score(doc, summ)[key]
        assert get_detector(name)().score([doc], [summ]) == [pytest.approx(ref.precision)]
        f = get_detector(name)(options={"measure": "fmeasure"}).score([doc], [summ])
        assert f == [pytest.approx(ref.fmeasure)]
    # precision by hand: 5 of the summary's 6 unigrams (all but "tuesday") are in the document
    assert get_detector("rouge-1")().score([doc], [summ]) == [pytest.approx(5 / 6)]
