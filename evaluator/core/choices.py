"""The closed sets of names a run's settings take, written once: threshold policies and judge
protocols. Plain constants (no numpy, no pydantic), so the CLI's parser reads its choices here
without loading the engine."""

from __future__ import annotations

from typing import Literal, get_args

# the LLM judge protocols that grade explanations (SummExecEdit §5.1); a grade may also come
# from people ("human", the explanation studies' own grades)
JudgeProtocol = Literal["EvalV1", "EvalV2", "EvalV3", "EvalV4"]
JUDGE_PROTOCOLS: tuple[JudgeProtocol, ...] = get_args(JudgeProtocol)
DEFAULT_JUDGE_PROTOCOL: JudgeProtocol = "EvalV4"

# how scores become labels: "auto" picks one for the run (the file's labels, else the benchmark's
# fixed threshold, else one tuned on dev); "none" is a correlation benchmark's (scores used as
# they are). A run records the policy that was applied (never "auto").
ThresholdPolicy = Literal["auto", "labels", "dev", "fixed", "per-domain-dev", "none"]
THRESHOLD_POLICIES: tuple[ThresholdPolicy, ...] = get_args(ThresholdPolicy)
# the ones a person chooses (the CLI's --threshold-policy, the Submit page)
CHOSEN_POLICIES: tuple[ThresholdPolicy, ...] = ("auto", "labels", "dev", "fixed", "per-domain-dev")
# the policy a run records: the one applied ("auto" resolved to one of these)
AppliedPolicy = Literal["labels", "dev", "fixed", "per-domain-dev", "none"]
