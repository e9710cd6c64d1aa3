"""What LLM runs and judges record, as typed JSON shapes: a run's `config.extra` (prompt,
client, usage, how its replies parsed, the self-agreement of repeats) and a judged run's
`judges` entries and `judge_agreement` (evaluator.llm.runner, evaluator.llm.judges). The
shapes of the parts they share live beside what builds them: the client's identity
(evaluator.llm.clients), a batch's usage (evaluator.llm.execute), a prompt's record
(evaluator.llm.prompts)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NotRequired, TypedDict

from evaluator.llm.clients import ClientIdentity
from evaluator.llm.prompts import PromptRecord


class Usage(TypedDict):
    """The requests, tokens and cost of a run's (or a judge's) replies."""

    requests: int
    replies_received: int
    replies_from_cache: int
    failed: int
    input_tokens: int
    output_tokens: int
    replies_without_usage: int
    cached_input_tokens: int
    cached_output_tokens: int
    cost_usd: float | None
    price_usd_per_mtok: list[float] | None


class ParseReport(TypedDict):
    """How a repeat's replies parsed, with the first few problems."""

    replies: int
    unparsable: int
    unparsable_examples: list[dict[str, str]]  # {sample_id, problem}
    failed: int
    failed_examples: list[dict[str, str]]  # {sample_id, error}


class KappaPair(TypedDict):
    a: int  # repeat numbers, from 1
    b: int
    kappa: float | None


class SelfAgreement(TypedDict):
    """How often repeated runs agree (Cohen's kappa over the samples every run labelled)."""

    runs: int
    n: int
    measure: str
    mean_pairwise_cohen_kappa: float | None
    pairs: NotRequired[list[KappaPair]]
    run_ids: NotRequired[list[str]]


class RunExtra(TypedDict):
    """What one repeat's run records beside its model and prompt (config.extra)."""

    prompt: PromptRecord
    client: ClientIdentity
    unit: str
    max_tokens: int
    concurrency: int
    engine: Mapping[str, object]  # evaluator.runner.Engine.record
    repeat: int
    repeats: int
    limit: int | None
    usage: Usage
    parse: ParseReport
    samples_prompted: int
    left_out_missing_fields: dict[str, int]
    served_models: list[str]
    labels_given: NotRequired[str]
    self_agreement: NotRequired[SelfAgreement]


# --------------------------------------------------------------------------------------------
# judges


class GradeRow(TypedDict):
    """One row of a run's grades table (GRADE_COLUMNS, with the run it grades)."""

    run_id: str
    sample_id: str
    judge: str
    protocol: str
    grade: float | None
    rationale: str | None
    raw_output: str | None


class JudgeReport(TypedDict):
    """How the grading of one run under one protocol went, with the replies' usage."""

    targets: int
    graded: int
    unparsable: int
    failed: int
    no_explanation: int
    unparsable_examples: list[dict[str, str]]  # {sample_id, problem}
    failed_examples: list[dict[str, str]]  # {sample_id, error}
    usage: Usage | None


class JudgeEntry(JudgeReport):
    """One entry of a judged run's config.extra["judges"]."""

    judge: str
    protocol: str
    prompt: PromptRecord
    client: ClientIdentity
    graded_at: str
    temperature: float
    limit: int | None
    engine: NotRequired[Mapping[str, object]]  # evaluator.runner.Engine.record


class Estimate(TypedDict):
    """A statistic with its bootstrap CI (None where undefined)."""

    value: float | None
    ci_low: float | None
    ci_high: float | None


class Agreement(TypedDict):
    """A judge's grades against human grades over the same explanations; pooled over a
    study's runs, with what was graded (scope ... no_explanation_excluded)."""

    n: int
    pearson: Estimate | None
    balanced_accuracy: Estimate | None
    balanced_accuracy_binary: NotRequired[float | None]
    cohen_kappa: NotRequired[float | None]
    exact_agreement: NotRequired[float]
    human_grade_counts: NotRequired[dict[str, int]]
    judge_grade_counts: NotRequired[dict[str, int]]
    scope: NotRequired[str]
    explanations: NotRequired[int]
    unparsable: NotRequired[int]
    failed: NotRequired[int]
    no_explanation_excluded: NotRequired[int]


class AgreementRow(TypedDict):
    """One row of the grader table: a judge's pooled agreement under one protocol."""

    judge: str
    protocol: str
    n: int
    pearson: float | None
    balanced_accuracy: float | None
    balanced_accuracy_binary: float | None
    cohen_kappa: float | None
    unparsable: int | None
    failed: int | None
