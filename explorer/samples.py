"""The samples explorer's tables and text: a page of samples, one sample's facts, predictions and
sentences, the runs to filter by (labels from evaluator.core.vocabulary), paging through the
list one sample at a time, and for correlation benchmarks where a metric's ranking of the samples
departs most from the human one (`disagreement`). See docs/ARCHITECTURE.md."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

import numpy as np
import pandas as pd

from evaluator.core.formatting import number, plural
from evaluator.core.vocabulary import ORIGIN_BADGES, kind_label
from evaluator.store.export import neutralise_formulas
from explorer import queries as Q
from explorer import textdiff
from explorer.board_rows import as_list
from explorer.compare import percentile_rank

PAGE_SIZE = 20
LABEL_TEXT = {1: "✓ consistent", 0: "✗ inconsistent"}
LABEL_FILTER = {"any": None, "consistent": 1, "inconsistent": 0}
SORT_LABELS = {"id": "sample id", "most_wrong": "hardest first", "domain": "domain"}


class SampleRow(TypedDict):
    """One sample as the samples table holds it (the canonical sample's columns, SAMPLE_SCHEMA):
    what the Samples page shows of the open sample (sample_row reads it)."""

    benchmark: str
    sample_id: str
    split: str
    unit: str
    summary_id: str | None
    domain: str
    doc_id: str | None
    document: str | None  # None where the release does not redistribute it
    summary: str
    seed_summary: str | None
    label: object  # 1 / 0, or missing (None, NaN or NA, as the table gives it)
    human_score: float | None  # may be NaN
    error_types: list[str]
    reference_explanation: str | None
    attributes: str | None  # JSON text of the benchmark's own keys


def _str_or_none(v: object) -> str | None:
    return v if isinstance(v, str) else None


def sample_row(raw: Mapping[str, object]) -> SampleRow:
    """The open sample's row (explorer.queries.sample) as a SampleRow: text columns that are
    not text (missing) read as None, or as "" where the page needs text."""
    score = raw.get("human_score")
    types = raw.get("error_types")
    return {
        "benchmark": str(raw.get("benchmark") or ""),
        "sample_id": str(raw.get("sample_id") or ""),
        "split": str(raw.get("split") or ""),
        "unit": str(raw.get("unit") or ""),
        "summary_id": _str_or_none(raw.get("summary_id")),
        "domain": _str_or_none(raw.get("domain")) or "",
        "doc_id": _str_or_none(raw.get("doc_id")),
        "document": _str_or_none(raw.get("document")),
        "summary": _str_or_none(raw.get("summary")) or "",
        "seed_summary": _str_or_none(raw.get("seed_summary")),
        "label": raw.get("label"),
        "human_score": float(score) if isinstance(score, int | float) else None,
        "error_types": [str(x) for x in types] if isinstance(types, list) else [],
        "reference_explanation": _str_or_none(raw.get("reference_explanation")),
        "attributes": _str_or_none(raw.get("attributes")),
    }


class SpanAnnotation(TypedDict):
    """One annotator's span of a summary (FaithBench's attributes.annotations): where it starts
    and ends in the summary, and as given: the span's text, its labels, the annotator's
    pseudonym and note (shown as text)."""

    start: int
    end: int
    span: NotRequired[object]
    label: NotRequired[object]
    annotator: NotRequired[object]
    note: NotRequired[object]


def unit_plural(unit: str) -> str:
    """'summary' -> 'summaries', 'sentence' -> 'sentences'."""
    return "summaries" if unit == "summary" else f"{unit}s"


def default_splits(splits: list[str]) -> list[str]:
    """The split the list starts on: test, the one runs predict, when there is a dev split
    too (dev samples have no predictions and would come first in id order)."""
    return ["test"] if "test" in splits and len(splits) > 1 else []


def sort_options(most_wrong: bool) -> list[str]:
    """The orders on offer: with 'samples most runs get wrong' on, the list is hardest first
    (or by domain); sample-id order is not offered then, so the control says what it is."""
    return ["most_wrong", "domain"] if most_wrong else list(Q.SORTS)


SHORT_ID = 34  # characters of a sample id the list shows; the rest is elided in the middle


def short_id(sample_id: object, most: int = SHORT_ID, known: tuple[str, ...] = ()) -> str:
    """A sample id short enough for the list: leading parts the row shows in its own columns
    (`known`: its domain and split, as TofuEval's 'mediasum:test:...' repeat them) are dropped,
    and what is still long keeps its start and end, elided in the middle
    ('CNN-104129:Buyouts for…Model-Extra:1'), so the columns after it stay in view."""
    text = str(sample_id)
    if len(text) > most:
        for part in known:
            if part and text.startswith(f"{part}:") and len(text) > len(part) + 1:
                text = text[len(part) + 1 :]
    if len(text) <= most:
        return text
    tail = most * 2 // 5
    return f"{text[: most - tail - 1]}…{text[-tail:]}"


def id_width(ids: pd.Series, least: int = 120, most: int = 300) -> int:
    """Pixels for a column of (shortened) sample ids to show the longest in full."""
    longest = int(ids.astype(str).str.len().max()) if len(ids) else 0
    return max(least, min(most, 8 * longest + 24))


def page_request(raw: str | None, pages: int) -> tuple[int | None, str | None]:
    """The page a link asks for, checked: (None, None) when it is absent or a page of the list;
    else (the page to show instead, why), for a page past the end, below 1 or not a plain
    number ('²', a 4,301-digit number, 'abc')."""
    if raw is None or raw == "":
        return None, None
    pages = max(1, pages)
    text = raw.strip()
    if text.isascii() and text.isdigit() and len(text) <= 9:
        n = int(text)
        if 1 <= n <= pages:
            return None, None
        if n < 1:
            return 1, "The link asks for page 0; showing page 1."
        return pages, (
            f"The link asks for page {n:,}, but the list has {plural(pages, 'page')}; "
            f"showing page {pages:,}."
        )
    if text.isascii() and text.isdigit():
        return pages, (
            f"The link asks for a page past the end (a {len(text):,}-digit number); the list "
            f"has {plural(pages, 'page')}, showing page {pages:,}."
        )
    shown = text[:20] + ("…" if len(text) > 20 else "")
    return 1, f"The link's page “{shown}” is not a page number; showing page 1."


def step(ids: list[str], current: str | None, delta: int) -> tuple[str | None, int]:
    """Next (delta=1) or previous (-1) sample in the listed ids: (the id, 0), or (None, +1 / -1)
    when the step leaves this page of the list (the caller turns the page)."""
    if not ids:
        return None, 0
    i = ids.index(current) if current in ids else (-1 if delta > 0 else len(ids))
    j = i + delta
    if 0 <= j < len(ids):
        return ids[j], 0
    return None, (1 if j >= len(ids) else -1)


def sample_facts(smp: SampleRow) -> str:
    """One line of the open sample's facts: split, domain, level, gold label, error types,
    human score and the benchmark's own attributes (empty ones left out)."""
    facts = [
        ("split", smp["split"]),
        ("domain", smp["domain"]),
        ("level", smp["unit"]),
        ("gold", label_text(smp["label"])),
    ]
    if smp.get("error_types"):
        facts.append(("error types", ", ".join(smp["error_types"])))
    score = smp.get("human_score")
    if score is not None and score == score:  # NaN != NaN
        facts.append(("human score", number(score)))
    facts += attributes_text(smp)
    return "   ·   ".join(f"{k}: {v}" for k, v in facts if v not in (None, ""))


def label_text(v: Any) -> str:
    if v is None or v is pd.NA:
        return "—"
    try:
        if isinstance(v, float) and math.isnan(v):
            return "—"
        return LABEL_TEXT.get(int(v), str(v))
    except (TypeError, ValueError):
        return str(v)


def page_table(page: pd.DataFrame, unit: str = "summary") -> pd.DataFrame:
    """The explorer's result rows, ready to show (text only); the text column is named after
    the level ('summary' or 'sentence')."""
    out = pd.DataFrame(
        {
            "sample": page["sample_id"],
            "sample id": [
                short_id(i, known=(str(d), str(s)))
                for i, d, s in zip(page["sample_id"], page["domain"], page["split"], strict=True)
            ],
            "split": page["split"],
            "domain": page["domain"],
            "gold": page["label"].map(label_text),
            "error types": [", ".join(as_list(v) or []) for v in page["error_types"]],
            unit: page["summary"],
            "wrong": [
                f"{int(w)}/{int(n)}" if pd.notna(n) and n else ""
                for w, n in zip(page["n_wrong"], page["n_runs"], strict=True)
            ],
        }
    )
    if page["topic_type"].notna().any():
        out.insert(3, "topic", page["topic_type"])
    if not page["n_runs"].fillna(0).astype(bool).any():
        out = out.drop(columns="wrong")  # no run has labels on these samples
    if page["label"].isna().all():
        out = out.drop(columns="gold")  # correlation benchmarks: a human score, no label
    if not (out["error types"] != "").any():
        out = out.drop(columns="error types")
    return out


def wrong_breakdown(rows: pd.DataFrame, unit: str = "summary", top: int = 4) -> str:
    """What the listed samples that most runs get wrong are, in one sentence: how many are
    inconsistent (errors the runs miss, with their commonest error types) and how many are
    consistent (false alarms). rows: Q.samples_page rows (label, error_types)."""
    if rows.empty:
        return ""
    bad = rows[rows["label"] == 0]
    good = int((rows["label"] == 1).sum())
    types = pd.Series([t for v in bad["error_types"] for t in (as_list(v) or [])])
    counts = types.value_counts().head(top)
    kinds = ", ".join(f"{k} {v:,}" for k, v in counts.items())
    noun = unit_plural(unit)

    def are(n: int) -> str:
        return f"{n:,} {'is' if n == 1 else 'are'}"

    return (
        f"Of these {plural(len(rows), unit, noun)}, {are(len(bad))} inconsistent: errors most "
        "runs miss"
        + (f" (commonest error types: {kinds})" if kinds else "")
        + f"; {are(good)} consistent: most runs raise a false alarm on them."
    )


def predictions_table(preds: pd.DataFrame, grades: pd.DataFrame) -> pd.DataFrame:
    """One row per run: prediction, score, right or wrong, explanation and any grades."""
    if preds.empty:
        return pd.DataFrame(
            columns=[
                "model",
                "kind",
                "origin",
                "prediction",
                "score",
                "correct",
                "explanation",
                "grades",
                "run",
            ]
        )
    g_text: dict[str, str] = {}
    for run_id, g in grades.groupby("run_id") if not grades.empty else []:
        parts = []
        for r in g.itertuples():
            value = float(r.grade) if r.grade is not None else float("nan")  # type: ignore[arg-type]
            grade = "unparsable" if np.isnan(value) else f"{value:g}"
            why = f" ({r.rationale})" if isinstance(r.rationale, str) and r.rationale else ""
            who = "human" if r.protocol == "human" else f"{r.judge}/{r.protocol}"
            parts.append(f"{who}: {grade}{why}")
        g_text[str(run_id)] = "; ".join(parts)
    correct = []
    for p, gold in zip(preds["pred"], preds["gold"], strict=True):
        if pd.isna(p) or pd.isna(gold):
            correct.append("")
        else:
            correct.append("✓" if int(p) == int(gold) else "✗ wrong")
    pred_text = []
    for p, rolled in zip(preds["pred"], preds["rolled"], strict=True):
        t = label_text(p) if not pd.isna(p) else "— (no label)"
        pred_text.append(t + (" (from its sentences)" if bool(rolled) else ""))
    out = pd.DataFrame(
        {
            "model": preds["model_name"],
            "kind": preds["model_kind"].map(kind_label),
            "origin": preds["origin"].map(lambda o: ORIGIN_BADGES.get(o, o)),
            "prediction": pred_text,
            "score": preds["score"].astype(float),
            "correct": correct,
            "explanation": preds["explanation"].fillna(""),
            "grades": [g_text.get(r, "") for r in preds["run_id"]],
            "run": preds["run_id"],
        }
    )
    # text a spreadsheet would run (=HYPERLINK(...)) is shown, copied and downloaded inert
    out = neutralise_formulas(out)
    # columns no run fills (no explanations, no grades, no scores) are left out
    for c in ("explanation", "grades"):
        if (out[c] == "").all():
            out = out.drop(columns=c)
    if out["score"].isna().all():
        out = out.drop(columns="score")
    # what a reader compares first (verdict, right or wrong, why) before who made it
    first = ["model", "prediction", "correct", "explanation", "grades", "score"]
    return out[[c for c in first if c in out] + [c for c in out if c not in first]]


def sentences_table(sent: pd.DataFrame, current: str | None = None) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "#": sent["sent_idx"].astype("Int64"),
            "": ["▶" if s == current else "" for s in sent["sample_id"]],
            "sentence": sent["sentence"],
            "gold": sent["label"].map(label_text),
            "error types": [", ".join(as_list(v) or []) for v in sent["error_types"]],
            "explanation": sent["reference_explanation"].fillna(""),
        }
    )


# a release's attribute keys in plain words; keys that only tie a row to the release's files
# (annotation ids, column names, anonymised model slots) are not shown
ATTRIBUTE_WORDS = {
    "summarizer": "summarizer",
    "system": "summarizer",
    "topic": "topic",
    "topic_type": "topic type",
    "n_sentences": "sentences in the summary",
    "is_seed": "unedited seed summary",
    "n_edit_types": "number of edit types",
    "gpt4_edit_types": "edit types GPT-4 named",
    "pooled_class": "pooled annotation class",
    "labelling": "gold label from",
    "raw_sample_id": "upstream sample id",
}
HIDDEN_ATTRIBUTES = {
    "annotation_id",
    "sent_idx",  # shown as 'sentence N of its summary'
    "system_column",
    "model",
    "original_text",
    "replace_text",
    "responses",
    "sentences",
    "sentence_majority",
    "sentence_votes",
    "annotator_scores",
    "sentence_labels",
    "error_category_scores",
    "annotations",  # shown as the annotated spans (span_rows)
}


def _attribute_value(key: str, v: object) -> str:
    if key == "is_seed":
        return "yes" if str(v).lower() in ("1", "true", "yes") else "no"
    if key == "topic_type":
        return {"main": "main topic", "marginal": "marginal topic"}.get(str(v), str(v))
    return str(v)


def attributes_text(sample: SampleRow) -> list[tuple[str, str]]:
    """The sample's benchmark-specific attributes worth showing, as (plain name, value):
    'summarizer: Model-Extra', 'sentence: 2 of its summary'; internal keys left out."""
    import json

    try:
        attrs = json.loads(sample.get("attributes") or "{}")
    except ValueError:
        return []
    if not isinstance(attrs, dict):
        return []
    out = []
    idx = attrs.get("sent_idx")
    if idx not in (None, "") and str(idx).isdigit():
        out.append(("sentence", f"{int(idx)} of its summary"))
    for k, v in sorted(attributes_items(attrs)):
        if k in HIDDEN_ATTRIBUTES:
            continue
        out.append((ATTRIBUTE_WORDS.get(k, k.replace("_", " ")), _attribute_value(k, v)))
    return out


def attributes_items(attrs: Mapping[str, object]) -> list[tuple[str, object]]:
    return [(k, v) for k, v in attrs.items() if v not in (None, "")]


def wrong_share(preds: pd.DataFrame) -> tuple[int, int]:
    ok = preds["pred"].notna() & preds["gold"].notna()
    wrong = (preds.loc[ok, "pred"].astype(int) != preds.loc[ok, "gold"].astype(int)).sum()
    return int(wrong), int(ok.sum())


def run_choices(con: Q.Con, benchmark: str, unit: str) -> pd.DataFrame:
    """Runs with final labels for this benchmark unit (for 'samples model X gets wrong')."""
    lab = Q.labelled_runs(con, benchmark)
    lab = lab[(lab["unit"] == unit) & (lab["n_labelled"] > 0)]
    runs = Q.runs_frame(con, benchmark)
    out = runs[runs["run_id"].isin(lab["run_id"])].copy()
    out["label"] = run_labels(out)
    return out[["run_id", "label", "model_name", "benchmark_version"]]


def run_labels(runs: pd.DataFrame) -> list[str]:
    """'model · origin badge · last 6 characters of the run id', one per run (Q.runs_frame)."""
    return [
        f"{m} · {ORIGIN_BADGES.get(o, o)} · {str(r)[-6:]}"
        for m, o, r in zip(runs["model_name"], runs["origin"], runs["run_id"], strict=True)
    ]


def num_pages(total: int, size: int = PAGE_SIZE) -> int:
    return max(1, int(np.ceil(total / size)))


# --------------------------------------------------------------------------------------------
# correlation benchmarks: where a metric departs from people


def score_runs(con: Q.Con, benchmark: str) -> pd.DataFrame:
    """Visible runs of the benchmark with scores in their final labels (a correlation
    benchmark's metric runs; counted by explorer.store.Store.ensure_sample_stats):
    run_id and a label ('model · origin · run id tail'), in board order of creation."""
    runs = Q.runs_frame(con, benchmark)
    if runs.empty:
        return pd.DataFrame(columns=["run_id", "label"])
    lab = Q.labelled_runs(con, benchmark)  # explorer.store.Store.ensure_sample_stats
    scored = set(lab.loc[lab["n_scored"] > 0, "run_id"])
    out = runs[runs["run_id"].isin(scored)].copy()
    out["label"] = run_labels(out)
    return out[["run_id", "label"]].reset_index(drop=True)


DISAGREEMENT_HELP = (
    "Each sample's rank among the listed samples, by the human score and by the metric's "
    "score, as a percentile (100 = most consistent). 'gap' is the metric's rank minus the "
    "human rank: large positive gaps are samples the metric rates far better than people do "
    "(missed errors), large negative gaps samples it rates far worse. Sorted by the size of "
    "the gap."
)


def disagreement(samples: pd.DataFrame, preds: pd.DataFrame) -> pd.DataFrame:
    """Per sample, how far a metric's ranking departs from the human one.

    samples: sample_id, human_score (and any columns to carry, e.g. split, domain, summary);
    preds: sample_id, score. Samples without a human score or a metric score are left out.
    Ranks are percentiles among the remaining samples (average rank for ties, 0-100, higher =
    more consistent); gap = metric rank - human rank; rows sorted by |gap|, largest first."""
    m = samples.merge(preds[["sample_id", "score"]], on="sample_id", how="inner")
    m = m[m["human_score"].notna() & m["score"].notna()].copy()
    if m.empty:
        return m.assign(human_rank=[], metric_rank=[], gap=[])
    m["human_rank"] = percentile_rank(m["human_score"].astype(float))
    m["metric_rank"] = percentile_rank(m["score"].astype(float))
    m["gap"] = m["metric_rank"] - m["human_rank"]
    order = np.lexsort((m["sample_id"].to_numpy(), -m["gap"].abs().round(6).to_numpy()))
    return m.iloc[order].reset_index(drop=True)


WIDE_GAP = 50  # percentile points: a correlation run 'gets a sample wrong' from here on
WRONG_ON_SCORES = (
    "{title} runs give scores, not labels, so no sample is simply right or wrong. Listed "
    "instead: the {units} this metric ranks at least {gap} percentile points away from the "
    "human score's rank (it puts them in the other half), widest gap first."
)


def wrong_as_gap(params: dict[str, str]) -> dict[str, str] | None:
    """On a correlation benchmark, a link to 'the samples this run gets wrong' (URL parameter
    'wrong', as the leaderboard and Submit write it) becomes the list ordered by where that
    run's ranking departs from people ('run'), narrowed to the wide gaps ('far'); None when
    the link has no 'wrong'."""
    run = params.get("wrong")
    if not run:
        return None
    out = {k: v for k, v in params.items() if k != "wrong"}
    out["run"] = run
    out["far"] = "1"
    return out


def wide_gaps(d: pd.DataFrame, gap: float = WIDE_GAP) -> pd.DataFrame:
    """disagreement() rows where the metric's rank is at least `gap` points from people's."""
    return d[d["gap"].abs() >= gap - 1e-9].reset_index(drop=True)


def disagreement_table(d: pd.DataFrame, unit: str = "summary") -> pd.DataFrame:
    """disagreement() rows ready to show: sample, split, domain, human and metric score and
    rank, the gap, and the text."""
    return pd.DataFrame(
        {
            "sample": d["sample_id"],
            "sample id": [
                short_id(i, known=(str(dom), str(s)))
                for i, dom, s in zip(d["sample_id"], d["domain"], d["split"], strict=True)
            ],
            "split": d["split"],
            "domain": d["domain"],
            "human score": d["human_score"].astype(float),
            "metric score": d["score"].astype(float),
            "human rank": d["human_rank"].round(0),
            "metric rank": d["metric_rank"].round(0),
            "gap": d["gap"].round(0),
            unit: d["summary"],
        }
    )


# --------------------------------------------------------------------------------------------
# annotated spans (FaithBench): each annotator's span of the summary, its label and note

SPAN_LEGEND = (
    "Highlighted: the parts of the summary annotators marked (red: unwanted, amber: "
    "questionable, blue: benign, grey: no label); a part several annotators marked is "
    "underlined once more for each further one; [n] closes annotation n of the table below."
)


def span_annotations(smp: SampleRow) -> list[SpanAnnotation]:
    """The open sample's span annotations (attributes.annotations), ordered by where they
    start in the summary (then by length, longest first); empty when it has none or they
    have no start and end."""
    from evaluator.benchmarks.faithbench import annotations_of

    ok: list[SpanAnnotation] = []
    for a in annotations_of(smp.get("attributes")):
        start, end = a.get("start"), a.get("end")
        if isinstance(start, int) and isinstance(end, int) and start <= end:
            span: SpanAnnotation = {"start": start, "end": end}
            if "span" in a:
                span["span"] = a["span"]
            if "label" in a:
                span["label"] = a["label"]
            if "annotator" in a:
                span["annotator"] = a["annotator"]
            if "note" in a:
                span["note"] = a["note"]
            ok.append(span)
    return sorted(ok, key=lambda a: (a["start"], -a["end"], str(a.get("annotator", ""))))


def span_tone(labels: object) -> str:
    """unwanted / questionable / benign (the most severe label), or other."""
    names = [str(x) for x in labels] if isinstance(labels, list) else []
    for tone, prefix in (
        ("unwanted", "Unwanted"),
        ("questionable", "Questionable"),
        ("benign", "Benign"),
    ):
        if any(x == prefix or x.startswith(prefix + ".") for x in names):
            return tone
    return "other"


def span_label(labels: object) -> str:
    from evaluator.benchmarks.faithbench import label_text

    return label_text([str(x) for x in labels]) if isinstance(labels, list) else "no label"


def highlight_spans(annotations: list[SpanAnnotation]) -> list[textdiff.Span]:
    """The annotations as numbered spans to highlight (numbers as in span_rows)."""
    return [
        textdiff.Span(
            a["start"],
            a["end"],
            i,
            span_tone(a.get("label")),
            f"{span_label(a.get('label'))} · {a.get('annotator') or 'annotator'}",
        )
        for i, a in enumerate(annotations, start=1)
    ]


def span_rows(annotations: list[SpanAnnotation]) -> pd.DataFrame:
    """One row per annotation: its number, the span, label, annotator pseudonym, note and
    characters, as text (a formula-looking note is shown inert)."""
    rows = pd.DataFrame(
        {
            "#": list(range(1, len(annotations) + 1)),
            "span": [str(a.get("span", "")) for a in annotations],
            "label": [span_label(a.get("label")) for a in annotations],
            "annotator": [str(a.get("annotator") or "") for a in annotations],
            "note": [str(a.get("note") or "—") for a in annotations],
            "characters": [f"{a['start']}–{a['end']}" for a in annotations],
        }
    )
    return neutralise_formulas(rows)


def overlapping(annotations: list[SpanAnnotation]) -> int:
    """How many annotations share at least one character with another one."""
    n = 0
    for i, a in enumerate(annotations):
        if any(
            j != i and max(a["start"], b["start"]) < min(a["end"], b["end"])
            for j, b in enumerate(annotations)
        ):
            n += 1
    return n


def verdicts_table(preds: pd.DataFrame) -> pd.DataFrame:
    """Each run's verdict on the open sample, short: model, verdict, right or wrong."""
    if preds.empty:
        return pd.DataFrame(columns=["model", "verdict", "correct"])
    full = predictions_table(preds, pd.DataFrame())
    return full[["model", "prediction", "correct"]].rename(columns={"prediction": "verdict"})
