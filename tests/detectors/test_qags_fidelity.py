"""QAGS as its authors run it (W4ngatang/qags @ 47798e9). The authors' code does not install
(fairseq fork, unreleased checkpoints), so its steps are re-computed here from their code path,
each cited, and compared with the detector's: the answer-candidate selection, the question
filter (answer consistency, the cut at the first '?', duplicates, length, the random fill-up)
and the answer F1. Then the detector end to end on tiny random-weight models, and with the two
models replaced at their interface (a scripted generator and QA) to follow a question through
every step into the evidence."""

from __future__ import annotations

import math
import os
import random
import re
import string
from collections import Counter

import pytest

from evaluator.detectors.qags import token_f1
from evaluator.detectors.runner import build_detector
from tests.support.detectors import DOCS, SUMMARIES, build_tiny_models

os.environ.setdefault("HF_HUB_OFFLINE", "1")


# --------------------------------------------------------------------------------------------
# the authors' steps, re-computed from their code


def authors_select_answers(anss: list[str], n_ans_per_txt: int, rng: random.Random) -> list[str]:
    """qg_utils.prepare_ans_conditional_data, the branch without NO_ANS."""
    anss = list(anss)
    if len(anss) < n_ans_per_txt:
        extra_anss = rng.choices(anss, k=n_ans_per_txt - len(anss))
        anss += extra_anss
    if len(anss) > n_ans_per_txt:
        anss = rng.sample(anss, n_ans_per_txt)
    assert len(anss) == n_ans_per_txt
    return anss


def authors_filter_qsts(qsts, n_qsts, prbs, exp_anss, act_anss, rng: random.Random) -> list[str]:
    """qa_utils.filter_qsts(qsts, n_qsts, prbs=..., reverse_prob=False, exp_anss=...,
    act_anss=...), with one expected answer per question (the README's answer consistency)."""
    qsts_and_prbs = [(q, p) for q, p, a in zip(qsts, prbs, act_anss, strict=True) if a]
    qsts_and_prbs = [
        (q, p) for q, p, a, e in zip(qsts, prbs, act_anss, exp_anss, strict=True) if a == e
    ]
    qsts_and_prbs = sorted(qsts_and_prbs, key=lambda x: x[1], reverse=True)
    clean_qsts: list[str] = []
    for qst, _prob in qsts_and_prbs:
        try:
            qst_idx = qst.index("?")  # get idx of *first* '?'
        except ValueError:  # no '?' mark
            continue
        clean_qst = qst[: qst_idx + 1]
        clean_toks = clean_qst.split()
        if clean_qst in clean_qsts or len(clean_toks) < 3:
            continue
        clean_qsts.append(clean_qst)
    n_clean_qsts = len(clean_qsts)
    if n_clean_qsts < n_qsts:
        supp_qsts = rng.sample(qsts, n_qsts - n_clean_qsts)
        clean_qsts += supp_qsts
    return clean_qsts[:n_qsts]


def authors_f1_score(a_gold: str, a_pred: str) -> float:
    """qa_utils.f1_score with qa_utils.normalize_answer and get_tokens."""

    def normalize_answer(s: str) -> str:
        s = s.lower()
        s = "".join(ch for ch in s if ch not in set(string.punctuation))
        s = re.sub(r"\b(a|an|the)\b", " ", s)
        return " ".join(s.split())

    def get_tokens(s: str) -> list[str]:
        return normalize_answer(s).split() if s else []

    gold_toks, pred_toks = get_tokens(a_gold), get_tokens(a_pred)
    num_same = sum((Counter(gold_toks) & Counter(pred_toks)).values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return int(gold_toks == pred_toks)
    if num_same == 0:
        return 0
    precision, recall = num_same / len(pred_toks), num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


# --------------------------------------------------------------------------------------------
# the steps compared, no model needed (a detector is built without loading anything)


def _detector(**options):
    return build_detector("qags", checkpoint="unused", device="cpu", options=options)


def test_faithful_defaults_and_named_variants() -> None:
    det = _detector()
    assert det.deviations() == []
    o = det.options
    assert (o["candidates"], o["question_filter"]) == ("random", "consistent")
    assert (o["n_answers"], o["num_beams"], o["questions_per_answer"]) == (10, 5, 5)
    assert (o["n_questions"], o["min_question_tokens"], o["min_question_length"]) == (20, 3, 5)
    assert det.KNOWN_DIFFERENCES and det.gpu_precision == "float32"
    old = _detector(
        candidates="first", question_filter="answerable", num_beams=10, questions_per_answer=10
    )
    assert old.deviations() == [
        "candidates=first",
        "question_filter=answerable",
        "num_beams=10",
        "questions_per_answer=10",
    ]
    assert _detector(precision="float16").deviations() == ["precision=float16"]
    with pytest.raises(Exception, match="questions_per_answer=6 cannot exceed num_beams=5"):
        _detector(questions_per_answer=6)


def test_answer_candidates_are_selected_as_the_authors_do() -> None:
    det = _detector()
    summary = "some summary"
    for found in (
        [f"c{i}" for i in range(14)],  # more than 10: a random sample of 10
        ["Paris", "May", "the council"],  # fewer: padded by random repeats
        [f"c{i}" for i in range(10)],
    ):
        got = det.select_answers(summary, found)
        rng = random.Random(f"0:answers:{summary}")
        assert got == authors_select_answers(found, 10, rng)
        assert len(got) == 10 and set(got) <= set(found)
    many = [f"c{i}" for i in range(30)]
    assert det.select_answers(summary, many) != many[:10]  # not the first ten
    assert det.select_answers(summary, many) == det.select_answers(summary, many)  # seeded
    assert _detector(seed=1).select_answers(summary, many) != det.select_answers(summary, many)
    assert _detector(candidates="first").select_answers(summary, many) == many[:10]
    assert _detector(candidates="first").select_answers(summary, many[:3]) == many[:3]
    assert det.select_answers(summary, []) == []


def _random_case(rng: random.Random, summary: str):
    cands = ["Paris", "May 3", "the council", "Maria Okafor", "12 percent"]
    stems = ["Who met Bob", "What did the council approve", "When", "Where is it", "How much"]
    raw, answers = [], {}
    for _ in range(rng.randint(6, 30)):  # the authors always have more than n_qsts
        q = rng.choice(stems) + rng.choice(["?", "? extra words", "", "?? twice?", " x?"])
        cand = rng.choice(cands)
        score = rng.choice([-0.5, -1.0, -1.5, rng.uniform(-3, 0)])  # ties too
        raw.append((q, score, cand))
        answers[(q, summary)] = rng.choice([cand, cand, "", rng.choice(cands)])
    return raw, answers


def test_question_filter_equals_the_authors_filter_qsts() -> None:
    det = _detector(n_questions=6)
    rng = random.Random(7)
    filled = consistent = 0
    for case in range(300):
        summary = f"summary {case}"
        raw, answers = _random_case(rng, summary)
        det._answers = dict(answers)  # the QA model's answers on the summary
        got = det.filter_consistent(summary, raw)
        qsts = [q for q, _, _ in raw]
        expected = authors_filter_qsts(
            qsts,
            6,
            [p for _, p, _ in raw],
            [c for _, _, c in raw],
            [answers[(q, summary)] for q in qsts],
            random.Random(f"0:questions:{summary}"),
        )
        assert [q for q, _ in got] == expected, case
        for q, cand in got:
            if cand is None:
                filled += 1
            else:
                consistent += 1
                assert q.endswith("?")
                assert any("?" in r and r[: r.index("?") + 1] == q for r in qsts)
    assert filled > 100 and consistent > 100  # both branches were exercised
    assert det.filter_consistent("empty", []) == []


def test_answer_f1_is_the_authors() -> None:
    pairs = [
        ("", ""),
        ("", "Paris"),
        ("The Paris.", "paris"),
        ("3 May 2021", "May 3"),
        ("a", "the"),  # both empty after normalisation
        ("Maria Okafor, mayor", "mayor Maria"),
    ]
    for a, b in pairs:
        assert token_f1(a, b) == pytest.approx(authors_f1_score(a, b))


# --------------------------------------------------------------------------------------------
# end to end


def _need(*modules: str) -> None:
    for m in modules:
        try:
            __import__(m)
        except ImportError:
            msg = f"{m} is not installed (pip install -r requirements-detectors.txt)"
            if os.environ.get("CI"):
                pytest.fail(msg)
            pytest.skip(msg)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    _need("torch", "transformers", "tokenizers")
    return build_tiny_models(tmp_path_factory.mktemp("tiny-qags"))


def _tiny_qags(tiny: dict[str, str], **options):
    opts = {"qa_model": tiny["qa"], "spacy_model": "none", "max_question_tokens": 12, **options}
    return build_detector("qags", checkpoint=tiny["t5"], device="cpu", batch_size=4, options=opts)


def test_qags_evidence_per_question_on_tiny_models(tiny: dict[str, str]) -> None:
    det = _tiny_qags(tiny, n_questions=4, n_answers=3)
    docs = [*DOCS, "Nothing here."]
    sums = [*SUMMARIES, "no candidate at all."]
    scores, ev = det.score_with_evidence(docs, sums)
    assert math.isnan(scores[-1]) and ev[-1] is not None and ev[-1]["items"] == []
    assert "no answer candidate" in ev[-1]["note"]
    for score, e in zip(scores[:-1], ev[:-1], strict=True):
        assert e is not None and e["unit"] == "question"
        assert len(e["items"]) == 4
        f1s = []
        for it in e["items"]:
            x = it["extra"]
            assert set(x) == {"summary_answer", "source_answer", "generated_from"}
            assert it["score"] == pytest.approx(
                authors_f1_score(x["source_answer"], x["summary_answer"])
            )
            f1s.append(it["score"])
        assert score == pytest.approx(sum(f1s) / len(f1s))
    assert det.describe()["fidelity"]["faithful"] is False  # n_questions=4
    assert det.stats.undefined == 1


class _ScriptedQA:
    """The QA model replaced at its interface: answers from a table (question, context)."""

    def __init__(self, table: dict[tuple[str, str], str]):
        self.table = table
        self.asked: list[tuple[str, str]] = []

    def answer(self, questions, contexts, batch_size, max_answer_tokens, progress=None):
        keys = list(zip(questions, contexts, strict=True))
        self.asked += keys
        return [self.table.get(k, "") for k in keys], len(keys)


def test_qags_pipeline_with_scripted_models(tiny: dict[str, str]) -> None:
    """A question whose summary answer is not its candidate is dropped, one whose answer is
    kept, cut at its '?', and scored by F1 against the source answer; the fill-up comes from
    the generated questions; the summary is whitespace-normalised first."""
    summary = "Maria Okafor met Bob in  Paris."
    norm = "Maria Okafor met Bob in Paris."
    doc = "Maria Okafor met Bob in London.\nShe left."
    doc_norm = "Maria Okafor met Bob in London. She left."
    det = _tiny_qags(tiny, n_questions=3)
    det.ensure_loaded()
    generated = {
        "Paris": [("Where did Maria meet Bob? in Paris", -0.1), ("Where is it", -0.2)],
        "Maria Okafor": [("Who met Bob?", -0.3), ("Who is he?", -0.4)],
        "Bob": [("Whom did Maria meet?", -0.5), ("Whom?", -0.6)],
    }
    inputs: list[str] = []

    def fake_generate(qg_inputs):
        inputs.extend(qg_inputs)
        return [next(v for k, v in generated.items() if f"answer: {k} " in i) for i in qg_inputs]

    det.generate = fake_generate
    det._qg_truncated = [False] * 10
    qa = _ScriptedQA(
        {
            ("Where did Maria meet Bob? in Paris", norm): "Paris",
            ("Where is it", norm): "Paris",  # consistent, but no '?': dropped
            ("Who met Bob?", norm): "Maria Okafor",
            ("Who is he?", norm): "Bob",  # not its candidate: dropped
            ("Whom did Maria meet?", norm): "Okafor",  # not its candidate: dropped
            ("Whom?", norm): "Bob",  # consistent, but under 3 tokens: dropped
            ("Where did Maria meet Bob?", norm): "Paris",
            ("Where did Maria meet Bob?", doc_norm): "London",
            ("Who met Bob?", doc_norm): "Maria Okafor",
        }
    )
    det.qa = qa
    scores, ev = det.score_with_evidence([doc], [summary])
    assert all(norm in i for i in inputs) and len(inputs) == 10  # 3 candidates padded to 10
    items = ev[0]["items"]
    assert [it["text"] for it in items[:2]] == ["Where did Maria meet Bob?", "Who met Bob?"]
    assert [it["extra"]["generated_from"] for it in items] == ["Paris", "Maria Okafor", None]
    assert items[0]["extra"] == {
        "summary_answer": "Paris",
        "source_answer": "London",
        "generated_from": "Paris",
    }
    assert [it["score"] for it in items[:2]] == [0.0, 1.0]
    fill = items[2]["text"]  # drawn from the generated questions, as generated
    assert fill in {q for qs in generated.values() for q, _ in qs}
    src_fill = qa.table.get((fill, doc_norm), "")
    assert items[2]["score"] == authors_f1_score(src_fill, qa.table.get((fill, norm), ""))
    assert scores[0] == pytest.approx((0.0 + 1.0 + items[2]["score"]) / 3)
    assert len(qa.asked) == len(set(qa.asked))  # each (question, context) asked once


def authors_predictions(
    model,
    cls_id,
    sep_id,
    q_ids,
    c_ids,
    offsets,
    context,
    *,
    max_seq_length,
    doc_stride,
    max_query_length=64,
    n_best_size=20,
    max_answer_length=30,
):
    """One answer as pytorch-pretrained-BERT's run_squad (finetune_pt_squad.py's utilities)
    computes it for a BERT tokenizer: convert_examples_to_features, then write_predictions with
    version_2_with_negative and null_score_diff_threshold 0.0."""
    import torch

    query_tokens = q_ids[:max_query_length]
    max_tokens_for_doc = max_seq_length - len(query_tokens) - 3
    doc_spans, start_offset = [], 0
    while start_offset < len(c_ids):
        length = min(len(c_ids) - start_offset, max_tokens_for_doc)
        doc_spans.append((start_offset, length))
        if start_offset + length == len(c_ids):
            break
        start_offset += min(length, doc_stride)

    def is_max_context(span_index, position):  # _check_is_max_context
        best_score, best_span_index = None, None
        for i, (start, length) in enumerate(doc_spans):
            end = start + length - 1
            if position < start or position > end:
                continue
            score = min(position - start, end - position) + 0.01 * length
            if best_score is None or score > best_score:
                best_score, best_span_index = score, i
        return span_index == best_span_index

    prelim, score_null = [], float("inf")
    for span_index, (start, length) in enumerate(doc_spans):
        tokens = [cls_id, *query_tokens, sep_id, *c_ids[start : start + length], sep_id]
        segment_ids = [0] * (len(query_tokens) + 2) + [1] * (length + 1)
        token_to_orig_map = {len(query_tokens) + 2 + i: start + i for i in range(length)}
        with torch.no_grad():
            out = model(
                input_ids=torch.tensor([tokens]), token_type_ids=torch.tensor([segment_ids])
            )
        start_logits = out.start_logits[0].tolist()
        end_logits = out.end_logits[0].tolist()
        score_null = min(score_null, start_logits[0] + end_logits[0])

        def best_indexes(logits):  # _get_best_indexes
            ranked = sorted(enumerate(logits), key=lambda x: x[1], reverse=True)
            return [i for i, _ in ranked[:n_best_size]]

        for s in best_indexes(start_logits):
            for e in best_indexes(end_logits):
                if s not in token_to_orig_map or e not in token_to_orig_map:
                    continue
                if not is_max_context(span_index, token_to_orig_map[s]):
                    continue
                if e < s or e - s + 1 > max_answer_length:
                    continue
                prelim.append(
                    (start_logits[s] + end_logits[e], token_to_orig_map[s], token_to_orig_map[e])
                )
    prelim.sort(key=lambda x: x[0], reverse=True)
    if not prelim:
        return ""
    best, a, b = prelim[0]
    if score_null - best > 0.0:
        return ""
    return context[offsets[a][0] : offsets[b][1]].strip()


def test_extractive_qa_decodes_as_the_authors_script(tiny: dict[str, str]) -> None:
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    from evaluator.detectors.device import resolve_device
    from evaluator.detectors.qags import ExtractiveQA

    tok = AutoTokenizer.from_pretrained(tiny["qa"])
    model = AutoModelForQuestionAnswering.from_pretrained(tiny["qa"]).eval()
    long_ctx = " ".join(DOCS)
    questions = [
        "Who is the mayor?",
        "What rose?",
        "How much will the library cost in the end, and who said so, and when?",
        "Who?",
    ]
    contexts = [long_ctx, DOCS[1], long_ctx, DOCS[2]]
    for max_len, stride, n_best in ((64, 16, 20), (96, 40, 3)):
        qa = ExtractiveQA(tiny["qa"], resolve_device("cpu"), max_length=max_len, stride=stride)
        qa.n_best = n_best
        got, windows = qa.answer(questions * 2, contexts * 2, 3, 10)
        assert windows > 2 * len(questions)  # the long contexts needed several windows
        expected = []
        for q, c in zip(questions, contexts, strict=True):
            enc = tok(c, add_special_tokens=False, return_offsets_mapping=True)
            q_ids = tok(q, add_special_tokens=False)["input_ids"]
            expected.append(
                authors_predictions(
                    model,
                    tok.cls_token_id,
                    tok.sep_token_id,
                    q_ids,
                    enc["input_ids"],
                    enc["offset_mapping"],
                    c,
                    max_seq_length=max_len,
                    doc_stride=stride,
                    max_query_length=min(64, (max_len - 3) // 2),
                    n_best_size=n_best,
                    max_answer_length=10,
                )
            )
        assert got == expected * 2
        assert any(expected) and expected != [""] * len(expected)
