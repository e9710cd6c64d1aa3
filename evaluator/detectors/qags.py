"""QAGS (Wang, Cho & Lewis, ACL 2020, §4-5 and Appendix B): ask questions about the summary,
answer them from the summary and from the source, and average the answers' agreement. The
defaults follow the authors' released code (W4ngatang/qags @ 47798e9); the steps cite it.

1. Answer candidates (qg_utils.extract_ans): named entities and noun chunks from a spaCy
   pipeline when one is installed (option spacy_model), distinct texts; otherwise a documented
   fallback (`regex_candidates`): dates, numbers with their unit, runs of capitalised words and
   quoted spans. Exactly n_answers (10) are used (qg_utils.prepare_ans_conditional_data): a
   random sample when there are more, and random repeats (random.choices) pad them when there
   are fewer; seeded per summary (option candidates=first: the first 10, no padding).
2. Question generation (scripts/gen_qg.sh): an answer-conditional seq2seq model reads
   `qg_template` filled with the answer and the summary; beam search with beam 5 returns 5
   questions per candidate (`--beam 5 --nbest 10`: fairseq finalises at most `beam` hypotheses),
   at least 5 tokens long (`--min-len 5`), scored by their length-normalised log-probability.
   The paper's Appendix B says beam 10; the released script, which the numbers come from, has 5.
3. Filtering (qa_utils.filter_qsts; README "most importantly ... answer consistency"): the QA
   model answers every generated question on the summary, and a question is kept only when that
   answer is the candidate it was generated from; the rest, most probable first, are cut after
   their first '?' (dropped without one), exact duplicates and questions under 3 tokens are
   dropped, and if fewer than n_questions (20) remain, questions drawn at random (seeded) from
   all the generated ones fill up the list. (The released filter_qsts zips the 10 candidates
   against the 100 questions, which would test only the first 10; FactBoard tests each question
   against its own candidate, as the README and the paper describe.) question_filter=answerable
   is FactBoard's earlier filter (any answer on the summary, no '?' cut, normalised duplicates).
4. Extractive QA (finetune_pt_squad.py: SQuAD2.0 BERT, questions cut at 64 tokens, 384-token
   windows 128 tokens apart, the 20 best starts and ends, answers of at most 30 tokens starting
   in their max-context window, no answer when the null score beats the best span; see
   `ExtractiveQA`) answers each kept question from
   the summary and from the source, both whitespace-normalised as the authors' SQuAD files are
   (utils.format_squad); the score is the mean token F1 (qa_utils.f1_score, SQuAD's
   normalisation; two empty answers agree, one empty answer scores 0).

A summary with no answer candidate has no QAGS score (NaN, counted in the run as undefined; the
authors' code would fail on it). Checkpoint = the question generator; option qa_model = the QA
model. Evidence: one item per question (its F1, the answers from summary and source, and the
candidate it was generated from, None for a fill-up question).
"""

from __future__ import annotations

import random
import re
import string
from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from evaluator.detectors.base import (
    DetectorError,
    Evidence,
    ModelDetector,
    Opt,
    evidence,
    evidence_item,
)
from evaluator.detectors.registry import register_detector

# --------------------------------------------------------------------------------------------
# answer similarity (SQuAD's official normalisation and token F1)

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = set(string.punctuation)


def normalize_answer(s: str) -> str:
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def token_f1(a: str, b: str) -> float:
    """SQuAD token F1; when either answer is empty (no answer), 1 if both are, else 0."""
    ta, tb = normalize_answer(a).split(), normalize_answer(b).split()
    if not ta or not tb:
        return float(ta == tb)
    common = Counter(ta) & Counter(tb)
    same = sum(common.values())
    if same == 0:
        return 0.0
    p, r = same / len(ta), same / len(tb)
    return 2 * p * r / (p + r)


def qags_aggregate(summary_answers: Sequence[str], source_answers: Sequence[str]) -> float:
    """Mean token F1 over questions (NaN when there is no question)."""
    if not summary_answers:
        return float("nan")
    return float(
        np.mean([token_f1(a, b) for a, b in zip(summary_answers, source_answers, strict=True)])
    )


# --------------------------------------------------------------------------------------------
# answer candidates

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_DATE = re.compile(
    rf"\b(?:\d{{1,2}}\s+{_MONTH}(?:\s+\d{{4}})?|{_MONTH}\s+\d{{1,2}}(?:,?\s+\d{{4}})?)\b"
)
_NUMBER = re.compile(
    r"(?:[$€£]\s?)?\d+(?:[.,:]\d+)*(?:\s?(?:%|percent|per cent|million|billion|thousand|"
    r"years?|months?|weeks?|days?|hours?|minutes?|km|kg|miles?|metres?|meters?|people|pounds?|"
    r"dollars?|euros?)\b)?",
    re.IGNORECASE,
)
_CAP_WORD = r"[A-Z](?:[\w'’-]|\.(?=[A-Z])|(?<=\b[A-Z])\.)*"
_CAPS = re.compile(rf"\b{_CAP_WORD}(?:\s+(?:(?:of|de|del|van|von|the|and|&)\s+)?{_CAP_WORD})*")
_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")


def regex_candidates(text: str) -> list[str]:
    """The fallback answer candidates (no spaCy pipeline): dates, numbers with their unit or
    currency, runs of capitalised words (a single capitalised word that starts a sentence is
    skipped: it is usually not a name), and quoted spans. Overlapping matches keep the one that
    starts first (the longer on a tie); in order of appearance, without duplicates."""
    found: list[tuple[int, int, str]] = []
    for rx in (_DATE, _NUMBER):
        for m in rx.finditer(text):
            found.append((m.start(), m.end(), m.group(0).strip()))
    for m in _CAPS.finditer(text):
        span, start = m.group(0).strip(), m.start()
        before = text[:start].rstrip()
        initial = not before or before[-1] in '.!?"“:'
        if initial:
            first, _, rest = span.partition(" ")
            if not rest:
                continue
            if first in ("The", "A", "An", "In", "On", "At", "For", "But", "And"):
                span, start = rest, start + len(first) + 1
        found.append((start, m.end(), span))
    for m in _QUOTED.finditer(text):
        found.append((m.start(1), m.end(1), m.group(1).strip()))
    out: list[str] = []
    seen: set[str] = set()
    end = -1
    for start, stop, s in sorted(found, key=lambda t: (t[0], -(t[1] - t[0]))):
        if start < end or not s:
            continue
        end = stop
        if s.lower() not in seen:
            seen.add(s.lower())
            out.append(s)
    return out


# --------------------------------------------------------------------------------------------
# extractive QA


def doc_windows(n_tokens: int, max_tokens_for_doc: int, doc_stride: int) -> list[tuple[int, int]]:
    """The authors' windows over a context of n_tokens (run_squad's convert_examples_to_features):
    (start, length) pairs, each at most max_tokens_for_doc long, starting doc_stride tokens after
    the previous one, the last reaching the end. An empty context is one empty window."""
    spans: list[tuple[int, int]] = []
    start = 0
    while True:
        length = min(n_tokens - start, max_tokens_for_doc)
        spans.append((start, length))
        if start + length >= n_tokens:
            return spans
        start += min(length, doc_stride)


def max_context(spans: Sequence[tuple[int, int]], n_tokens: int) -> list[int]:
    """For each context token, the window where it has the most context (run_squad's
    _check_is_max_context: min(left, right) + 0.01 * window length; the first window wins a
    tie). An answer may start only at a token in its max-context window."""
    best = [-1] * n_tokens
    score = [float("-inf")] * n_tokens
    for w, (start, length) in enumerate(spans):
        for pos in range(start, start + length):
            s = min(pos - start, start + length - 1 - pos) + 0.01 * length
            if s > score[pos]:
                score[pos], best[pos] = s, w
    return best


def top_indexes(logits: np.ndarray, n_best: int) -> list[int]:
    """The n_best highest logits' positions, best first, ties in position order
    (run_squad's _get_best_indexes)."""
    return [int(i) for i in np.argsort(-logits, kind="stable")[:n_best]]


class ExtractiveQA:
    """A SQuAD2.0 span extractor decoding as the authors' BERT script does (finetune_pt_squad.py
    with pytorch-pretrained-BERT's run_squad utilities: --max_seq_length 384 --doc_stride 128
    --max_query_length 64 --n_best_size 20 --max_answer_length 30, null threshold 0):
    questions cut at 64 tokens; the context in windows of the tokens left beside the question,
    each starting `stride` tokens after the previous one; per window, the 20 best start and end
    positions are paired (start in the context, in its max-context window, end not before it,
    at most max_answer_tokens long); the best pair over all windows is the answer unless the
    smallest null score (start and end logits of the first token) beats it. The answer is the
    context's text from its first token's start to its last token's end (the authors map
    tokens back with get_final_text)."""

    def __init__(
        self,
        checkpoint: str,
        device: Any,
        max_length: int,
        stride: int,
        max_query_tokens: int = 64,
        n_best: int = 20,
    ):
        from transformers import AutoModelForQuestionAnswering, AutoTokenizer

        from evaluator.detectors.base import load_pretrained
        from evaluator.detectors.device import place

        self.tokenizer = load_pretrained("QA tokenizer", checkpoint, AutoTokenizer.from_pretrained)
        if not getattr(self.tokenizer, "is_fast", False):
            raise DetectorError(f"QA checkpoint {checkpoint!r} needs a fast tokenizer (offsets)")
        model = load_pretrained(
            "QA model", checkpoint, AutoModelForQuestionAnswering.from_pretrained
        )
        self.model = place(model, device)
        self.device = device
        if self.tokenizer.pad_token_id is None:
            raise DetectorError(f"QA tokenizer of {checkpoint!r} has no padding token")
        self.pad_id = int(self.tokenizer.pad_token_id)
        lim = getattr(self.tokenizer, "model_max_length", None)
        lim = lim if isinstance(lim, int) and 0 < lim < 1_000_000 else max_length
        self.max_length = min(max_length, lim)
        self.stride = max(1, stride)
        self.n_best = n_best
        self._template()
        # and at most half the window, so that every window keeps room for the context
        self.max_query_tokens = max(
            1, min(max_query_tokens, (self.max_length - len(self.specials)) // 2)
        )

    def _template(self) -> None:
        """The special tokens (and token types) the tokenizer puts around a question and a
        context, read off one encoded pair: [prefix] question [middle] context [suffix]."""
        from evaluator.detectors.base import quiet_transformers

        with quiet_transformers():
            enc = self.tokenizer("a b", "c d", return_token_type_ids=True)
        ids, seq = enc["input_ids"], enc.sequence_ids(0)
        types = enc.get("token_type_ids") or [0] * len(ids)
        q_pos = [i for i, s in enumerate(seq) if s == 0]
        c_pos = [i for i, s in enumerate(seq) if s == 1]
        if not q_pos or not c_pos or q_pos[-1] > c_pos[0]:
            raise DetectorError("QA tokenizer does not encode (question, context) pairs in order")
        self.prefix = [(ids[i], types[i]) for i in range(q_pos[0])]
        self.middle = [(ids[i], types[i]) for i in range(q_pos[-1] + 1, c_pos[0])]
        self.suffix = [(ids[i], types[i]) for i in range(c_pos[-1] + 1, len(ids))]
        self.specials = self.prefix + self.middle + self.suffix
        self.q_type, self.c_type = types[q_pos[0]], types[c_pos[0]]
        self.with_types = "token_type_ids" in enc

    def answer(
        self,
        questions: Sequence[str],
        contexts: Sequence[str],
        batch_size: int,
        max_answer_tokens: int,
        progress: Any = None,
    ) -> tuple[list[str], int]:
        """One answer per (question, context) ('' = no answer), and how many windows were run."""
        import torch

        from evaluator.detectors.base import quiet_transformers
        from evaluator.detectors.batching import length_sorted_batches, pad_batch

        if not questions:
            return [], 0
        with quiet_transformers():
            q_ids = self.tokenizer(list(questions), add_special_tokens=False)["input_ids"]
            distinct = list(dict.fromkeys(contexts))
            c_enc = self.tokenizer(distinct, add_special_tokens=False, return_offsets_mapping=True)
        ctx = {
            c: (c_enc["input_ids"][i], c_enc["offset_mapping"][i]) for i, c in enumerate(distinct)
        }
        rows: list[dict[str, list[int]]] = []
        owner: list[int] = []  # window -> question
        first_ctx: list[int] = []  # window -> position of its first context token
        window: list[tuple[int, int]] = []  # window -> (start, length) in the context tokens
        win_no: list[int] = []  # window -> its number among its question's windows
        home: list[list[int]] = []  # question -> max-context window of each context token
        for qi, (q, c) in enumerate(zip(q_ids, contexts, strict=True)):
            q = q[: self.max_query_tokens]
            c_ids = ctx[c][0]
            room = self.max_length - len(q) - len(self.specials)
            spans = doc_windows(len(c_ids), room, self.stride)
            home.append(max_context(spans, len(c_ids)))
            for k, (start, length) in enumerate(spans):
                parts = (
                    self.prefix
                    + [(t, self.q_type) for t in q]
                    + self.middle
                    + [(t, self.c_type) for t in c_ids[start : start + length]]
                    + self.suffix
                )
                row = {"input_ids": [t for t, _ in parts]}
                if self.with_types:
                    row["token_type_ids"] = [k for _, k in parts]
                rows.append(row)
                owner.append(qi)
                first_ctx.append(len(self.prefix) + len(q) + len(self.middle))
                window.append((start, length))
                win_no.append(k)
        n_win = len(rows)
        # per question: (score, window, start, end) of its best span; on a tie the earlier
        # window keeps it (the authors' stable sort), whatever order the batches ran in
        best: list[tuple[float, int, int, int]] = [(float("-inf"), -1, -1, -1)] * len(questions)
        null = [float("inf")] * len(questions)
        lengths = [len(r["input_ids"]) for r in rows]
        with torch.inference_mode():
            for idx in length_sorted_batches(lengths, batch_size):
                batch = pad_batch([rows[w] for w in idx], self.pad_id, self.device)
                out = self.model(**batch)
                starts = out.start_logits.float().cpu().numpy()
                ends = out.end_logits.float().cpu().numpy()
                for j, w in enumerate(idx):
                    s, e = starts[j, : lengths[w]], ends[j, : lengths[w]]
                    qi = owner[w]
                    null[qi] = min(null[qi], float(s[0] + e[0]))
                    lo, (start, length) = first_ctx[w], window[w]
                    ends_ok = [b for b in top_indexes(e, self.n_best) if lo <= b < lo + length]
                    for a in top_indexes(s, self.n_best):
                        if not lo <= a < lo + length or home[qi][start + a - lo] != win_no[w]:
                            continue
                        for b in ends_ok:
                            if b < a or b - a + 1 > max_answer_tokens:
                                continue
                            sc = float(s[a] + e[b])
                            top, top_w = best[qi][0], best[qi][1]
                            if sc > top or (sc == top and w < top_w):
                                best[qi] = (sc, w, start + a - lo, start + b - lo)
                if progress is not None:
                    progress.update(len(idx))
        answers = []
        for qi, (sc, _, a, b) in enumerate(best):
            if a < 0 or null[qi] > sc:  # the authors: "" iff null - best non-null > 0
                answers.append("")
                continue
            offsets = ctx[contexts[qi]][1]
            answers.append(contexts[qi][offsets[a][0] : offsets[b][1]].strip())
        return answers, n_win


# --------------------------------------------------------------------------------------------
# the detector


@register_detector("qags")
class QAGS(ModelDetector):
    name = "qags"
    display_name = "QAGS"
    default_checkpoint: ClassVar[str | None] = "mrm8488/t5-base-finetuned-question-generation-ap"
    paper = "https://aclanthology.org/2020.acl-main.450/"
    description = (
        "Question answering and generation: questions generated from the summary's entities and "
        "noun phrases are answered from summary and source; mean answer token-F1 (Wang et al. "
        "2020)."
    )
    default_batch_size = 16
    gpu_precision: ClassVar[str] = "float32"  # the authors' fairseq QG and BERT QA: no casts
    KNOWN_DIFFERENCES: ClassVar[tuple[str, ...]] = (
        "Questions come from a T5 generator fine-tuned on SQuAD (the checkpoint) with its own "
        "input format, not the authors' BART fine-tuned on NewsQA (never released on the hub).",
        "The QA model is a public SQuAD2.0 checkpoint, not the authors' own BERT-large run.",
        "Answer candidates come from spaCy en_core_web_sm when installed (the released code loads "
        "en_core_web_lg), else from a regex fallback (the run says which).",
        "Extractive QA ranks the 20 best start and end positions over a window's real tokens "
        "(the authors' script pads every window to 384 and ranks the padding too), maps the "
        "span to text by character offsets (theirs: get_final_text), and answers '' where "
        "theirs, in a rare edge case with no valid span, answers 'empty'.",
        "Generation stops at max_question_tokens (the authors' limit is the input's length + 1).",
        "Sampling is seeded per summary (the authors' random module was not seeded, and their "
        "candidate order came from a Python set).",
    )
    OPTIONS: ClassVar[dict[str, Opt]] = {
        "qa_model": Opt(
            str,
            "deepset/bert-large-uncased-whole-word-masking-squad2",
            "extractive SQuAD2.0 QA model (hub id or path)",
        ),
        "qg_template": Opt(
            str, "answer: {answer}  context: {context}", "QG input ({answer}, {context})"
        ),
        "spacy_model": Opt(str, "en_core_web_sm", "spaCy pipeline for candidates; 'none': regex"),
        "candidates": Opt(
            str,
            "random",
            "which n_answers candidates: a seeded random sample, padded by random repeats when "
            "too few, as the authors (random), or the first ones in the summary (first)",
            choices=("random", "first"),
            faithful="random",
        ),
        "question_filter": Opt(
            str,
            "consistent",
            "keep questions whose answer on the summary is the candidate they were generated from "
            "and that end in '?', as the authors (consistent), or any answerable one (answerable)",
            choices=("consistent", "answerable"),
            faithful="consistent",
        ),
        "n_answers": Opt(int, 10, "answer candidates per summary", minimum=1, faithful=10),
        "num_beams": Opt(int, 5, "beam width of question generation", minimum=1, faithful=5),
        "questions_per_answer": Opt(int, 5, "beams returned per answer", minimum=1, faithful=5),
        "min_question_length": Opt(
            int, 5, "generated tokens before the end of a question", minimum=0, faithful=5
        ),
        "n_questions": Opt(int, 20, "questions kept per summary", minimum=1, faithful=20),
        "max_question_tokens": Opt(int, 64, "generated question length", minimum=4),
        "min_question_tokens": Opt(int, 3, "shorter questions are dropped", minimum=1, faithful=3),
        "max_answer_tokens": Opt(int, 30, "longest extracted answer", minimum=1, faithful=30),
        "qa_max_length": Opt(int, 384, "QA window tokens", minimum=32, faithful=384),
        "qa_stride": Opt(
            int,
            128,
            "tokens between QA window starts (the authors' doc_stride)",
            minimum=1,
            faithful=128,
        ),
        "qg_max_length": Opt(int, 512, "QG input tokens", minimum=16),
        "seed": Opt(int, 0, "seed of the candidate sample and the question fill-up"),
        "precision": Opt(str, "auto", "model dtype", choices=("auto", "float32", "float16")),
    }

    def _check_options(self) -> None:
        t = self.options["qg_template"]
        if "{answer}" not in t or "{context}" not in t:
            raise DetectorError(f"qags: qg_template {t!r} needs both {{answer}} and {{context}}")
        if self.options["questions_per_answer"] > self.options["num_beams"]:
            raise DetectorError(
                f"qags: questions_per_answer={self.options['questions_per_answer']} cannot "
                f"exceed num_beams={self.options['num_beams']} (beam search returns at most "
                "one question per beam)"
            )

    def _load(self) -> None:
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        from evaluator.detectors.base import load_pretrained
        from evaluator.detectors.device import place

        ckpt = str(self.checkpoint)
        self.qg_tokenizer = load_pretrained("QG tokenizer", ckpt, AutoTokenizer.from_pretrained)
        self.qg = place(
            load_pretrained("QG model", ckpt, AutoModelForSeq2SeqLM.from_pretrained), self.device
        )
        self.qa = ExtractiveQA(
            self.options["qa_model"],
            self.device,
            self.options["qa_max_length"],
            self.options["qa_stride"],
        )
        self.nlp = load_spacy(self.options["spacy_model"])
        how = f"spaCy {self.options['spacy_model']}" if self.nlp is not None else "regex fallback"
        self.stats.notes.append(f"answer candidates: {how}")
        self.stats.max_input_tokens["qg"] = self.options["qg_max_length"]
        self.stats.max_input_tokens["qa_window"] = self.qa.max_length

    def candidates(self, summary: str) -> list[str]:
        """The summary's answer candidates (entities and noun chunks, or the regex fallback),
        distinct, in order of appearance, before any selection."""
        if self.nlp is None:
            return regex_candidates(summary)
        doc = self.nlp(summary)
        spans = [(e.start_char, e.text) for e in doc.ents]
        spans += [(c.start_char, c.text) for c in doc.noun_chunks]
        out: list[str] = []
        seen: set[str] = set()
        exact = self.options["candidates"] == "random"  # the authors: list(set(texts))
        for _, s in sorted(spans, key=lambda t: t[0]):
            s = s.strip()
            key = s if exact else s.lower()
            if s and key not in seen:
                seen.add(key)
                out.append(s)
        return out

    def select_answers(self, summary: str, found: Sequence[str]) -> list[str]:
        """The n_answers candidates questions are generated from. random (the authors,
        qg_utils.prepare_ans_conditional_data): too many -> a random sample of n; too few ->
        padded with random repeats (random.choices) up to n. first: the first n found."""
        n = self.options["n_answers"]
        if self.options["candidates"] == "first" or not found:
            return list(found[:n])
        rng = random.Random(f"{self.options['seed']}:answers:{summary}")
        anss = list(found)
        if len(anss) < n:
            anss += rng.choices(anss, k=n - len(anss))
        if len(anss) > n:
            anss = rng.sample(anss, n)
        return anss

    def generate(self, inputs: Sequence[str]) -> list[list[tuple[str, float]]]:
        """Beam-search questions (text, score) for each QG input, batched by length."""
        import torch

        from evaluator.detectors.base import quiet_transformers
        from evaluator.detectors.batching import (
            Progress,
            encode,
            length_sorted_batches,
            pad_batch,
        )

        n_ret = self.options["questions_per_answer"]
        rows, flags = encode(self.qg_tokenizer, inputs, None, self.options["qg_max_length"])
        self.stats.model_inputs += len(rows)
        self._qg_truncated = flags
        out: list[list[tuple[str, float]]] = [[] for _ in inputs]
        lengths = [len(r["input_ids"]) for r in rows]
        bar = Progress(len(rows), "qags question generation", self.progress, unit="input")
        pad_id = self.qg_tokenizer.pad_token_id
        if pad_id is None:
            raise DetectorError(f"QG tokenizer of {self.checkpoint!r} has no padding token")
        with torch.inference_mode(), quiet_transformers():
            for idx in length_sorted_batches(lengths, self.batch_size):
                batch = pad_batch([rows[i] for i in idx], int(pad_id), self.device)
                batch.pop("token_type_ids", None)
                gen = self.qg.generate(
                    **batch,
                    num_beams=self.options["num_beams"],
                    num_return_sequences=n_ret,
                    max_new_tokens=self.options["max_question_tokens"],
                    min_new_tokens=self.options["min_question_length"],
                    length_penalty=1.0,
                    do_sample=False,
                    early_stopping=True,
                    output_scores=True,
                    return_dict_in_generate=True,
                )
                texts = self.qg_tokenizer.batch_decode(gen.sequences, skip_special_tokens=True)
                scores = gen.sequences_scores.float().cpu().numpy()
                for j, i in enumerate(idx):
                    for r in range(n_ret):
                        q = clean_question(texts[j * n_ret + r])
                        out[i].append((q, float(scores[j * n_ret + r])))
                bar.update(len(idx))
        bar.close()
        return out

    def answers(self, questions: Sequence[str], contexts: Sequence[str], what: str) -> list[str]:
        """QA answers for (question, context) pairs, each distinct pair asked once per call of
        `_score` (the answers of earlier steps are reused)."""
        from evaluator.detectors.batching import Progress

        keys = list(zip(questions, contexts, strict=True))
        todo = list(dict.fromkeys(k for k in keys if k not in self._answers))
        if todo:
            bar = Progress(len(todo), f"qags QA on {what}", self.progress, unit="question")
            got, n_win = self.qa.answer(
                [k[0] for k in todo],
                [k[1] for k in todo],
                self.batch_size,
                self.options["max_answer_tokens"],
                bar,
            )
            bar.close()
            self.stats.model_inputs += n_win
            self._answers.update(zip(todo, got, strict=True))
        return [self._answers[k] for k in keys]

    def filter_consistent(
        self, summary: str, raw: Sequence[tuple[str, float, str]]
    ) -> list[tuple[str, str | None]]:
        """The authors' filter (qa_utils.filter_qsts with expected and predicted answers), over
        (question, QG score, candidate it was generated from):
        1. the QA model answers each question on the summary; a question is kept only when it
           has an answer and that answer is its candidate (the answer-consistency filter);
        2. most probable first; each is cut after its first '?', and dropped when it has none,
           when the cut question was kept already, or when it is shorter than 3 tokens;
        3. too few: random questions from all the generated ones (as generated, uncut) fill up
           to n_questions; the first n_questions are used.
        Returns (question, candidate or None for a fill-up)."""
        n_q, min_tok = self.options["n_questions"], self.options["min_question_tokens"]
        on_summary = self.answers([q for q, _, _ in raw], [summary] * len(raw), "summaries")
        kept = [
            (q, sc, cand)
            for (q, sc, cand), a in zip(raw, on_summary, strict=True)
            if a and a == cand
        ]
        clean: list[tuple[str, str | None]] = []
        seen: set[str] = set()
        for q, _, cand in sorted(kept, key=lambda t: -t[1]):
            cut = q.find("?")
            if cut < 0:
                continue
            cq = q[: cut + 1]
            if cq in seen or len(cq.split()) < min_tok:
                continue
            seen.add(cq)
            clean.append((cq, cand))
        if len(clean) < n_q and raw:
            rng = random.Random(f"{self.options['seed']}:questions:{summary}")
            pool = [q for q, _, _ in raw]
            clean += [(q, None) for q in rng.sample(pool, min(n_q - len(clean), len(pool)))]
        return clean[:n_q]

    def filter_answerable(
        self, summary: str, raw: Sequence[tuple[str, float, str]]
    ) -> list[tuple[str, str | None]]:
        """FactBoard's earlier filter: duplicates (normalised) and short questions dropped, the
        n_questions most probable that the QA model answers on the summary, filled up at random
        from the unanswered ones."""
        n_q, min_tok = self.options["n_questions"], self.options["min_question_tokens"]
        seen: set[str] = set()
        kept: list[tuple[str, str]] = []
        for q, _, cand in sorted(raw, key=lambda t: -t[1]):
            key = normalize_answer(q)
            if key in seen or not key:
                continue
            seen.add(key)
            if len(q.split()) >= min_tok:
                kept.append((q, cand))
        on_summary = self.answers([q for q, _ in kept], [summary] * len(kept), "summaries")
        answered = [(q, c) for (q, c), a in zip(kept, on_summary, strict=True) if a]
        rest = [(q, c) for (q, c), a in zip(kept, on_summary, strict=True) if not a]
        pick: list[tuple[str, str | None]] = list(answered[:n_q])
        if len(pick) < n_q and rest:
            rng = random.Random(f"{self.options['seed']}:{summary}")
            pick += rng.sample(rest, min(n_q - len(pick), len(rest)))
        return pick

    def _score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        from evaluator.detectors.batching import unique

        self._answers: dict[tuple[str, str], str] = {}
        template = self.options["qg_template"]
        # the authors' texts are one line each, and their QA contexts are " ".join(text.split())
        documents = [" ".join(d.split()) for d in documents]
        summaries = [" ".join(s.split()) for s in summaries]
        # 1-2: candidates and questions, per distinct summary
        sums, where = unique(list(summaries))
        cands = [self.select_answers(s, self.candidates(s)) for s in sums]
        qg_inputs: list[str] = []
        qg_owner: list[tuple[int, str]] = []
        for si, (s, cs) in enumerate(zip(sums, cands, strict=True)):
            for a in cs:
                qg_inputs.append(template.format(answer=a, context=s))
                qg_owner.append((si, a))
        generated = self.generate(qg_inputs)
        raw: list[list[tuple[str, float, str]]] = [[] for _ in sums]
        for (si, a), qs in zip(qg_owner, generated, strict=True):
            raw[si].extend((q, sc, a) for q, sc in qs)
        # 3: filter
        pick = (
            self.filter_consistent
            if self.options["question_filter"] == "consistent"
            else self.filter_answerable
        )
        chosen = [pick(s, r) for s, r in zip(sums, raw, strict=True)]
        # 4: answer the kept questions from the summary and from the source; token F1
        flat_q = [q for kept in chosen for q, _ in kept]
        flat_s = [sums[si] for si, kept in enumerate(chosen) for _ in kept]
        on_sum = self.answers(flat_q, flat_s, "summaries")
        sum_ans: list[list[str]] = []
        pos = 0
        for kept in chosen:
            sum_ans.append(on_sum[pos : pos + len(kept)])
            pos += len(kept)
        jobs_q = [q for w in where for q, _ in chosen[w]]
        jobs_c = [d for d, w in zip(documents, where, strict=True) for _ in chosen[w]]
        src_ans = self.answers(jobs_q, jobs_c, "sources")
        truncated_summary = [False] * len(sums)
        for (si, _), f in zip(qg_owner, self._qg_truncated, strict=True):
            truncated_summary[si] = truncated_summary[si] or f
        self.stats.inputs_truncated += sum(self._qg_truncated)
        self.stats.samples_truncated += sum(truncated_summary[w] for w in where)
        out: list[float] = []
        ev: list[Evidence | None] = []
        pos = 0
        for w in where:
            n = len(chosen[w])
            src = src_ans[pos : pos + n]
            pos += n
            out.append(qags_aggregate(sum_ans[w], src))
            items = [
                evidence_item(
                    q,
                    token_f1(a_sum, a_src),
                    summary_answer=a_sum,
                    source_answer=a_src,
                    generated_from=cand,
                )
                for (q, cand), a_sum, a_src in zip(chosen[w], sum_ans[w], src, strict=True)
            ]
            note = None if cands[w] else "no answer candidate in the summary: no question"
            ev.append(evidence("question", items, "mean token F1 over the questions", note))
        self._answers = {}
        self.set_evidence(ev)
        return out


def clean_question(text: str) -> str:
    """Strip a 'question:' prefix some QG models emit, and surrounding space."""
    t = text.strip()
    if t.lower().startswith("question:"):
        t = t[len("question:") :].strip()
    return t


def load_spacy(name: str) -> Any:
    """The spaCy pipeline `name` when spaCy and the pipeline are installed, else None (the
    regex fallback is then used, and the run says so)."""
    if name.strip().lower() == "none":
        return None
    try:
        import spacy
    except ImportError:
        return None
    try:
        return spacy.load(name, disable=["lemmatizer"])
    except OSError:
        return None
