"""The samples explorer's tables and text: a page of samples, one sample's facts, predictions and
sentences, and the runs to filter by (labels from evaluator.core.vocabulary)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from evaluator.core.vocabulary import ORIGIN_BADGES, kind_label
from explorer import queries as Q
from explorer.leaderboard import as_list

PAGE_SIZE = 20
LABEL_TEXT = {1: "✓ consistent", 0: "✗ inconsistent"}
LABEL_FILTER = {"any": None, "consistent": 1, "inconsistent": 0}
SORT_LABELS = {"id": "sample id", "most_wrong": "hardest first", "domain": "domain"}


def unit_plural(unit: str) -> str:
    """'summary' -> 'summaries', 'sentence' -> 'sentences'."""
    return "summaries" if unit == "summary" else f"{unit}s"


def sample_facts(smp: dict[str, Any]) -> str:
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
        facts.append(("human score", f"{score:.3f}"))
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


def page_table(page: pd.DataFrame) -> pd.DataFrame:
    """The explorer's result rows, ready to show (text only)."""
    out = pd.DataFrame(
        {
            "sample": page["sample_id"],
            "split": page["split"],
            "domain": page["domain"],
            "gold": page["label"].map(label_text),
            "error types": [", ".join(as_list(v) or []) for v in page["error_types"]],
            "summary": page["summary"],
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
    return out


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
    # columns no run fills (no explanations, no grades, no scores) are left out
    for c in ("explanation", "grades"):
        if (out[c] == "").all():
            out = out.drop(columns=c)
    if out["score"].isna().all():
        out = out.drop(columns="score")
    return out


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


def attributes_text(sample: dict[str, Any]) -> list[tuple[str, str]]:
    """The sample's benchmark-specific attributes worth showing, as (name, value)."""
    import json

    try:
        attrs = json.loads(sample.get("attributes") or "{}")
    except ValueError:
        return []
    skip = {
        "original_text",
        "replace_text",
        "responses",
        "sentences",
        "sentence_majority",
        "sentence_votes",
        "annotator_scores",
        "sentence_labels",
        "error_category_scores",
    }
    return [(k, str(v)) for k, v in sorted(attributes_items(attrs)) if k not in skip]


def attributes_items(attrs: dict[str, Any]) -> list[tuple[str, Any]]:
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
