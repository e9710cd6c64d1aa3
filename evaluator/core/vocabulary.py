"""FactBoard's vocabulary, written once: metrics, slice kinds, model kinds, origins, model aliases.

Everything that shows, sorts, ranks, compares or exports a metric reads it here: its display label,
its direction, which benchmark tasks it applies to, whether it needs scores or only labels, and the
weighted engine function that computes it (evaluator.core.metrics). The papers that define each
metric are listed in docs/ARCHITECTURE.md ("Metrics").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from evaluator.core import metrics as M
from evaluator.core.registry import Registry

Task = Literal["detection", "detection+explanation", "correlation", "explanation-grading"]
TASKS: tuple[Task, ...] = (
    "detection",
    "detection+explanation",
    "correlation",
    "explanation-grading",
)
Input = Literal["labels", "scores", "grades", "time"]
# what a slice must hold for a metric to be reported on it: any row; an inconsistent sample; both
# classes (on a one-class slice BAcc, accuracy, FPR and FNR would only restate the recall); only
# inconsistent samples (TofuEval's error types: recall is the metric there); three pairs (a
# correlation); three pairs from at least two control groups (a partial correlation)
Needs = Literal["rows", "inconsistent", "both_classes", "inconsistent_only", "pairs", "groups"]
# how the overall value is formed on a benchmark whose overall is the mean over its domains
# (SummEdits): the unweighted mean of the per-domain values, or the samples pooled
Aggregation = Literal["mean_over_domains", "pooled"]

WeightedFn = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
PartialFn = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Metric:
    """One metric as FactBoard names, shows and ranks it.

    `weighted` is the engine function of (W, y_true, y_pred) for label metrics or (W, x, human)
    for score and correlation metrics, one value per row of bootstrap weights W; `partialled`
    is (W, x, human, control codes) for a partial correlation; both None where the scorer has its
    own path (AUROC over sorted scores, explanation grades) or none (run time, published-only
    metrics). The scorer reports a metric that has a function on every slice that holds what
    `needs` says. `confusion` names the confusion-matrix formula of a label metric (inconsistent =
    positive), so a board can compute it for many runs at once from stacked counts.
    `domain_aggregation` is how the overall value is formed where a benchmark averages over its
    domains; `eee_kind` is its Every Eval Ever `metric_kind` (empty: the metric's name).
    """

    name: str
    label: str
    title: str
    tasks: tuple[Task, ...]
    uses: Input
    lower_is_better: bool = False
    weighted: WeightedFn | None = None
    confusion: str | None = None
    needs: Needs | None = None
    domain_aggregation: Aggregation = "pooled"
    eee_kind: str = ""
    partialled: PartialFn | None = None
    per_grader: bool = False
    source: str = ""
    definition: str = ""  # one plain sentence for a reader (METRIC_DEFINITIONS when not given)

    def __post_init__(self) -> None:
        if not self.definition:
            object.__setattr__(self, "definition", METRIC_DEFINITIONS.get(self.name, ""))

    @property
    def higher_is_better(self) -> bool:
        return not self.lower_is_better


# What each metric and each slice kind means, in one plain sentence: the hover text of every
# metric and slice column a page shows.
METRIC_DEFINITIONS: dict[str, str] = {
    "balanced_accuracy": "The mean of the share of consistent summaries judged consistent and "
    "the share of inconsistent ones judged inconsistent: 0.5 is chance, 1 is perfect.",
    "accuracy": "The share of summaries judged correctly (consistent or not).",
    "detection_accuracy": "The share of summaries whose consistency is judged correctly.",
    "detection_score": "The share of inconsistent summaries that are flagged as inconsistent.",
    "fpr": "The share of consistent summaries wrongly flagged as inconsistent (lower is better).",
    "fnr": "The share of inconsistent summaries missed, judged consistent (lower is better).",
    "recall": "The share of inconsistent summaries or sentences that are flagged.",
    "roc_auc": "The chance that a consistent summary scores higher than an inconsistent one: "
    "0.5 is chance, 1 is perfect.",
    "explanation_score": "How well the explanations of found errors match the real error, as "
    "a judge grades them (1 right, 0.5 partly, 0 wrong).",
    "joint_score": "Finding and explaining together: the detection score times the "
    "explanation score.",
    "explanation_share": "The share of explanations that receive this grade.",
    "pearson": "How closely the scores follow people's factuality ratings in a straight "
    "line, from −1 to 1.",
    "spearman": "How closely the scores order summaries as people's ratings do, from −1 to 1.",
    "kendall_tau": "How often two summaries are put in the same order by the scores and by "
    "people, from −1 to 1.",
    "partial_pearson": "Pearson correlation with people's ratings once what the summarizing "
    "system alone explains is taken out.",
    "partial_spearman": "Spearman correlation with people's ratings once what the summarizing "
    "system alone explains is taken out.",
    "cohen_kappa": "Agreement with the gold labels beyond what chance gives: 0 is chance, 1 "
    "is perfect.",
    "correlation": "Correlation with people's ratings, as the paper reports it.",
    "runtime_seconds": "How long the run took, in seconds (lower is better).",
}
SLICE_DEFINITIONS: dict[str, str] = {
    "overall": "Every sample of the split (where a benchmark averages over its domains, "
    "that average).",
    "domain": "The samples whose documents come from one source (news, podcasts, ...).",
    "dataset": "The samples of one source dataset.",
    "edit_type": "The consistent samples and the inconsistent ones made by one kind of edit.",
    "error_type": "The samples annotated with one kind of factual error.",
    "n_edit_types": "The samples grouped by how many kinds of edit were applied.",
    "topic_type": "Sentences about the main topic of the document or about a side topic.",
    "dataset+topic_type": "One source dataset, main or side topics.",
    "summarizer": "The summaries written by one summarizing model.",
    "system": "The summaries written by one summarizing system.",
    "edit_model": "The summaries edited by one model.",
    "explanation_type": "The samples grouped by the kind of explanation given.",
    "label": "The consistent or the inconsistent samples alone.",
}


def metric_definition(name: str) -> str:
    """A metric's hover help: its full title, then one plain sentence on what it measures (a
    name the vocabulary lacks comes back as it is)."""
    m = METRICS.find(name)
    if m is None:
        return name
    return f"{m.title}. {m.definition}" if m.definition else m.title


def slice_definition(kind: str) -> str:
    """One plain sentence on what a slice kind groups ('' when unknown)."""
    return SLICE_DEFINITIONS.get(kind, "")


_DETECTION: tuple[Task, ...] = ("detection", "detection+explanation")
# explanation grades exist on any benchmark whose runs were judged, and are the subject of the
# explanation-grading studies
_GRADED: tuple[Task, ...] = ("detection", "detection+explanation", "explanation-grading")
METRICS: Registry[Metric] = Registry("metric")


def register_metric(metric: Metric) -> Metric:
    return METRICS.add(metric.name, metric)


for _m in (
    Metric(
        "balanced_accuracy",
        "BAcc",
        "Balanced accuracy",
        _DETECTION,
        "labels",
        weighted=M.balanced_accuracy_w,
        confusion="balanced_accuracy",
        needs="both_classes",
        domain_aggregation="mean_over_domains",
        eee_kind="accuracy",
        source="SummaC §5.1; SummEdits §4; TofuEval §4",
    ),
    Metric(
        "accuracy",
        "Accuracy",
        "Accuracy",
        _DETECTION,
        "labels",
        weighted=M.accuracy_w,
        confusion="accuracy",
        needs="both_classes",
        domain_aggregation="mean_over_domains",
        eee_kind="accuracy",
    ),
    Metric(
        "detection_accuracy",
        "DA",
        "Detection accuracy",
        ("detection+explanation",),
        "labels",
        weighted=M.accuracy_w,
        confusion="accuracy",
        source="SummExecEdit §4 (DA)",
        needs="rows",
        domain_aggregation="mean_over_domains",
        eee_kind="accuracy",
    ),
    Metric(
        "detection_score",
        "DS",
        "Detection score (recall on inconsistent)",
        ("detection+explanation",),
        "labels",
        weighted=M.recall_inconsistent_w,
        confusion="recall",
        source="SummExecEdit §4 (DS)",
        needs="inconsistent",
        domain_aggregation="mean_over_domains",
        eee_kind="recall",
    ),
    Metric(
        "fpr",
        "FPR",
        "False positive rate",
        _DETECTION,
        "labels",
        lower_is_better=True,
        weighted=M.false_positive_rate_w,
        confusion="fpr",
        source="TofuEval Table 3",
        needs="both_classes",
        domain_aggregation="mean_over_domains",
        eee_kind="error_rate",
    ),
    Metric(
        "fnr",
        "FNR",
        "False negative rate",
        _DETECTION,
        "labels",
        lower_is_better=True,
        weighted=M.false_negative_rate_w,
        confusion="fnr",
        source="TofuEval Table 3",
        needs="both_classes",
        domain_aggregation="mean_over_domains",
        eee_kind="error_rate",
    ),
    Metric(
        "recall",
        "Recall",
        "Recall on inconsistent",
        ("detection",),
        "labels",
        weighted=M.recall_inconsistent_w,
        confusion="recall",
        source="TofuEval Table 6 (error-type recall)",
        needs="inconsistent_only",
        eee_kind="recall",
    ),
    Metric(
        "roc_auc",
        "AUROC",
        "Area under the ROC curve",
        _DETECTION,
        "scores",
        weighted=M.roc_auc_w,
        needs="both_classes",
        domain_aggregation="mean_over_domains",
        eee_kind="auroc",
    ),
    Metric(
        "explanation_score",
        "ES",
        "Explanation score",
        _GRADED,
        "grades",
        per_grader=True,
        source="SummExecEdit §4 (ES)",
        eee_kind="judge_score",
    ),
    Metric(
        "joint_score",
        "JS",
        "Joint score",
        _GRADED,
        "grades",
        per_grader=True,
        source="SummExecEdit §4 (JS)",
        eee_kind="judge_score",
    ),
    Metric(
        "explanation_share",
        "Share",
        "Share of explanations",
        _GRADED,
        "grades",
        per_grader=True,
        eee_kind="proportion",
    ),
    Metric(
        "pearson",
        "Pearson r",
        "Pearson correlation with human scores",
        ("correlation",),
        "scores",
        weighted=M.pearson_w,
        needs="pairs",
        source="QAGS Table 1; FRANK Table 4",
    ),
    Metric(
        "spearman",
        "Spearman ρ",
        "Spearman correlation with human scores",
        ("correlation",),
        "scores",
        weighted=M.spearman_w,
        needs="pairs",
        source="FRANK Table 4",
    ),
    Metric(
        "kendall_tau",
        "Kendall τ",
        "Kendall's tau with human scores",
        ("correlation",),
        "scores",
        weighted=M.kendall_tau_w,
        needs="pairs",
        source="LongDocFACTScore Tables 3-4",
    ),
    Metric(
        "partial_pearson",
        "Partial r",
        "Partial Pearson correlation (system partialled out)",
        ("correlation",),
        "scores",
        partialled=M.partial_pearson_w,
        needs="groups",
        source="FRANK §5 and Table 4",
    ),
    Metric(
        "partial_spearman",
        "Partial ρ",
        "Partial Spearman correlation (system partialled out)",
        ("correlation",),
        "scores",
        partialled=M.partial_spearman_w,
        needs="groups",
        source="FRANK Table 4",
    ),
    Metric("cohen_kappa", "Cohen κ", "Cohen's kappa", _DETECTION, "labels", eee_kind="agreement"),
    Metric(
        "correlation",
        "Correlation",
        "Correlation",
        ("correlation",),
        "scores",
        eee_kind="correlation",
    ),
    Metric(
        "runtime_seconds",
        "Run time (s)",
        "Run time in seconds",
        TASKS,
        "time",
        lower_is_better=True,
        eee_kind="latency",
    ),
):
    register_metric(_m)


def metric(name: str) -> Metric:
    return METRICS.get(name)


def metric_names(task: str | None = None, uses: str | None = None) -> list[str]:
    return [
        m.name
        for m in METRICS.values()
        if (task is None or task in m.tasks) and (uses is None or m.uses == uses)
    ]


def metric_label(name: str, grader: str | None = None) -> str:
    """The display label; an unknown name is shown as it is (published tables may carry one)."""
    m = METRICS.find(name)
    base = m.label if m else name
    return f"{base} ({grader})" if grader else base


def lower_is_better(name: str) -> bool:
    m = METRICS.find(name)
    return bool(m and m.lower_is_better)


def label_metrics() -> dict[str, Metric]:
    """Metrics that are functions of final labels alone (the confusion matrix)."""
    return {n: m for n, m in METRICS.items() if m.confusion is not None}


def scored_metrics(task: str, uses: Input) -> list[Metric]:
    """The metrics the scorer computes with their own function on a benchmark of `task` from
    `uses` (labels, or scores against human scores), in the vocabulary's order."""
    return [
        m
        for m in METRICS.values()
        if task in m.tasks and m.uses == uses and (m.weighted or m.partialled) and m.needs
    ]


# the metrics whose overall value is the mean of the per-domain values on a benchmark that
# averages over its domains (SummEdits Overall)
MEAN_OVER_DOMAINS: frozenset[str] = frozenset(
    n for n, m in METRICS.items() if m.domain_aggregation == "mean_over_domains"
)
# Every Eval Ever's metric_kind, where it is not the metric's own name
EEE_KINDS: dict[str, str] = {n: m.eee_kind for n, m in METRICS.items() if m.eee_kind}
# the correlations with human scores the scorer computes (coefficients in [-1, 1])
CORRELATIONS: frozenset[str] = frozenset(m.name for m in scored_metrics("correlation", "scores"))


# The values a stored number may take (run.json's results, read or written): rates, shares,
# accuracies and grades lie in [0, 1], correlations and Cohen's kappa in [-1, 1], run time is
# non-negative. A metric FactBoard does not know is held to a wide finite range, so that no
# stored number can overflow a page's arithmetic (a CI of +-1e308 made a bar of infinite width).
OPEN_BOUND = 1e9
DOMAIN_SLACK = 1e-9  # floating-point noise at a bound (a correlation of 1.0000000000000002)


_DOMAINS: dict[str, tuple[int, tuple[float, float]]] = {}  # name -> (METRICS.version, domain)


def metric_domain(name: str) -> tuple[float, float]:
    """The closed interval a value of metric `name` (and its CI) lies in (asked of every
    stored number as it is read: kept per name until a metric is registered or removed)."""
    hit = _DOMAINS.get(name)
    if hit is not None and hit[0] == METRICS.version:
        return hit[1]
    METRICS.load()  # registers the metrics (and moves the version) before it is noted
    version, domain = METRICS.version, _metric_domain(name)
    if len(_DOMAINS) > 4096:
        _DOMAINS.clear()
    _DOMAINS[name] = (version, domain)
    return domain


def _metric_domain(name: str) -> tuple[float, float]:
    m = METRICS.find(name)
    if m is None:
        return (-OPEN_BOUND, OPEN_BOUND)
    if m.uses == "time":
        return (0.0, OPEN_BOUND)
    if m.tasks == ("correlation",) or m.name == "cohen_kappa":
        return (-1.0, 1.0)
    return (0.0, 1.0)


# ------------------------------------------------------------------------------------------
# slice kinds

SLICE_LABELS: dict[str, str] = {
    "overall": "Overall",
    "domain": "By domain",
    "dataset": "By dataset",
    "edit_type": "By edit type",
    "error_type": "By error type",
    "n_edit_types": "By number of edit types",
    "topic_type": "By topic type",
    "dataset+topic_type": "By dataset × topic type",
    "summarizer": "By summarizer",
    "system": "By system",
    "edit_model": "By edit model",
    "explanation_type": "By explanation type",
    "label": "By gold label",
}


def slice_label(kind: str) -> str:
    return SLICE_LABELS.get(kind, kind.replace("_", " "))


# ------------------------------------------------------------------------------------------
# model kinds and origins

ModelKind = Literal["non-llm", "open-llm", "proprietary-llm", "human", "baseline"]
MODEL_KIND_LABELS: dict[str, str] = {
    "non-llm": "non-LLM",
    "open-llm": "open LLM",
    "proprietary-llm": "proprietary LLM",
    "human": "human",
    "baseline": "baseline",
}
MODEL_KINDS: tuple[str, ...] = tuple(MODEL_KIND_LABELS)

# where a run came from; "reported" is a published number, not a run
Origin = Literal["submitted", "evaluated", "reproduced", "released", "imported"]
ORIGIN_BADGES: dict[str, str] = {
    "reported": "📄 reported",
    "submitted": "📤 submitted",
    "evaluated": "🧪 evaluated",
    "reproduced": "🔁 reproduced",
    "released": "📦 released",
    "imported": "📥 imported",
}
ORIGIN_MEANINGS: dict[str, str] = {
    "reported": "published in a paper or leaderboard, transcribed, not recomputed",
    "submitted": "predictions uploaded by a user, scored here",
    "evaluated": "run by FactBoard",
    "reproduced": "a published model re-run here",
    "released": "per-sample outputs released with the benchmark, scored here",
    "imported": "per-sample outputs from an Every Eval Ever record, scored here",
}
ORIGINS: tuple[str, ...] = ("submitted", "evaluated", "reproduced", "released", "imported")
ORIGIN_HELP = " · ".join(f"{ORIGIN_BADGES[o]}: {ORIGIN_MEANINGS[o]}" for o in ORIGIN_BADGES)


def kind_label(kind: str | None) -> str:
    return MODEL_KIND_LABELS.get(kind or "", kind or "")


# ------------------------------------------------------------------------------------------
# model aliases: the papers spell one model several ways

MODEL_ALIASES: dict[str, str] = {
    # alias (as printed somewhere) -> canonical name
    "GPT4": "GPT-4",
    "gpt4": "GPT-4",
    "GPT3.5-turbo": "GPT-3.5-Turbo",
    "gpt3.5-turbo": "GPT-3.5-Turbo",
    "CGPT": "ChatGPT",
    "gpt4-turbo": "GPT-4-Turbo",
    "gpt-4-turbo-preview": "GPT-4-Turbo",
    "gpt4o": "GPT-4o",
    "gpt-4o": "GPT-4o",
    "Claude V1.3": "Claude-v1.3",
    "Claude v1.3": "Claude-v1.3",
    "Claudev13": "Claude-v1.3",
    "Claudev2": "Claude-v2",
    "Claudev21": "Claude-2.1",
    "Cohere-CMD-XL": "Cohere-cmd-XL",
    "Cohere-cmd-xl": "Cohere-cmd-XL",
    "PaLM2-bison": "PaLM2-Bison",
    "PaLM-bison": "PaLM2-Bison",
    "palm-bison": "PaLM2-Bison",
    "Vicuna-13b": "Vicuna-13B",
    "Gemini-pro": "Gemini-Pro",
    "gemini-pro": "Gemini-Pro",
    "SummaCConv": "SummaC-Conv",
    "SummaC-CV": "SummaC-Conv",
    "Rouge-1": "ROUGE-1",
    "Rouge-2": "ROUGE-2",
    "Rouge-L": "ROUGE-L",
    "HHEM-2.1": "HHEM-2.1-Open",
    "Bespoke-Minicheck-7B": "Bespoke-MiniCheck-7B",
    # LLM-AggreFact leaderboard names (2024-10 and 2025-09 snapshots) <-> checkpoints, the
    # board names of FactBoard's detector runs and the other papers' spellings
    "HHEM-2.1-open": "HHEM-2.1-Open",
    "vectara/hallucination_evaluation_model": "HHEM-2.1-Open",
    "bespokelabs/Bespoke-MiniCheck-7B": "Bespoke-MiniCheck-7B",
    "Granite Guardian 3.3": "Granite Guardian 3.3 8B",
    "granite-guardian-3.3-8b": "Granite Guardian 3.3 8B",
    "ibm-granite/granite-guardian-3.3-8b": "Granite Guardian 3.3 8B",
    "FactCG": "FactCG-DeBERTa-L",
    "FactCG-DeBERTa-v3-Large": "FactCG-DeBERTa-L",
    "yaxili96/FactCG-DeBERTa-v3-Large": "FactCG-DeBERTa-L",
    "MiniCheck-Flan-T5-Large": "MiniCheck-Flan-T5-L",
    "lytang/MiniCheck-Flan-T5-Large": "MiniCheck-Flan-T5-L",
    "MiniCheck-RoBERTa-Large": "MiniCheck-RoBERTa-L",
    "MiniCheck (lytang/MiniCheck-RoBERTa-Large)": "MiniCheck-RoBERTa-L",
    "MiniCheck-DeBERTa-v3-Large": "MiniCheck-DeBERTa-L",
    "MiniCheck (lytang/MiniCheck-DeBERTa-v3-Large)": "MiniCheck-DeBERTa-L",
    "claude3-opus": "Claude-3 Opus",
    "claude-3-opus-20240229": "Claude-3 Opus",
    "claude-3-5-sonnet-20240620": "Claude-3.5 Sonnet",
    "Claude 3.5 Sonnet": "Claude-3.5 Sonnet",
    "Mistral-8x7B": "Mixtral-8x7B",  # LLM-AggreFact's spelling; its link is Mixtral 8x7B
    "mixtral-8x7b": "Mixtral-8x7B",
}
_FOLD = re.compile(r"[\s_.-]+")


# Cyrillic and Greek letters that look like Latin ones (after case folding), so "Раr 12" with a
# Cyrillic Р and а is the name "Par 12" (a subset of Unicode's confusables, the letters a model
# name can be spoofed with)
_CONFUSABLES = str.maketrans(
    "авеёзіїјкмнорсухѕԁԛԝӏѵтъ"  # Cyrillic
    "αβεζηικμνορτυχϲϳ",  # Greek
    "abee3iijkmhopcyxsdqwlvtbabezhikmnoptyxcj",
)


def model_key(name: str) -> str:
    """A comparison key for model names: NFKC, case-folded, look-alike letters folded to Latin
    (_CONFUSABLES), separators dropped."""
    return _FOLD.sub("", unicodedata.normalize("NFKC", name).casefold().translate(_CONFUSABLES))


def lookalike(a: str, b: str) -> bool:
    """Two different names that only look alike: equal once Unicode look-alike letters are
    folded to Latin ("GPT-4" and "GРT-4" with a Cyrillic Р), not before. Spellings that differ
    in case or separators ("gpt4", "GPT-4") are the same name, not look-alikes."""

    def plain(name: str) -> str:
        return _FOLD.sub("", unicodedata.normalize("NFKC", name).casefold())

    return model_key(a) == model_key(b) and plain(a) != plain(b)


_ALIAS_KEYS = {model_key(a): c for a, c in MODEL_ALIASES.items()}


def canonical_model(name: str) -> str:
    """The canonical spelling of a published model's name (unknown names come back as given)."""
    return MODEL_ALIASES.get(name) or _ALIAS_KEYS.get(model_key(name), name)
