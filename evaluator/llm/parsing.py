"""Verdicts and grades out of model replies. A reply that does not follow the format its prompt
asked for is unparsable: the result carries `problem`, the label or grade is None, and the caller
stores the raw reply and counts it. Nothing is guessed from words found elsewhere in a reply.

- yes_no (SummEdits, TofuEval): the answer must *start* with Yes or No (after markdown emphasis,
  quotes or an "Answer:" label); the rest is the explanation.
- json_verdict (SummExecEdit D&E): one JSON object (optionally in a ``` fence) whose "consistent"
  is "yes" or "no" (or a JSON boolean); "explanation" is kept.
- json_explanation (SummExecEdit E|D): one JSON object with a string "explanation".
- grade (judges): only the reply's last non-empty line counts, and it must be exactly
  `GRADE <tag>: 1 | 0.5 | 0` with the tag of this request (see prompts.render_judge).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from evaluator.core.types import CONSISTENT, INCONSISTENT


@dataclass(frozen=True)
class Verdict:
    label: int | None  # 1 consistent, 0 inconsistent, None when unparsable
    explanation: str | None = None
    problem: str | None = None  # why the reply is unparsable

    @property
    def parsed(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class ParsedGrade:
    grade: float | None
    rationale: str | None = None
    problem: str | None = None


_LEAD = re.compile(r"^[\s*_`\"'#>\[\(]*(?:answer\s*:\s*[\s*_`\"']*)?", re.IGNORECASE)
_YES_NO = re.compile(r"(yes|no)\b", re.IGNORECASE)
_EXPLANATION_LEAD = re.compile(r"^[\s*_`\"'\]\).,:;!\-]+")


def _clean_explanation(text: str) -> str | None:
    text = _EXPLANATION_LEAD.sub("", text).strip()
    return text or None


def parse_yes_no(text: str) -> Verdict:
    if not text or not text.strip():
        return Verdict(None, problem="empty reply")
    rest = _LEAD.sub("", text, count=1)
    m = _YES_NO.match(rest)
    if not m:
        head = text.strip().splitlines()[0][:60]
        return Verdict(None, problem=f"the reply does not start with Yes or No: {head!r}")
    label = CONSISTENT if m.group(1).lower() == "yes" else INCONSISTENT
    return Verdict(label, _clean_explanation(rest[m.end() :]))


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def _json_object(text: str) -> tuple[dict[str, object] | None, str | None]:
    """The one JSON object of a reply (its values are whatever the model wrote)."""
    s = (text or "").strip()
    if not s:
        return None, "empty reply"
    candidates = [s]
    fenced = _FENCE.findall(s)
    if len(fenced) == 1:
        candidates.insert(0, fenced[0].strip())
    for c in candidates:
        for body in (c, c[c.find("{") : c.rfind("}") + 1] if "{" in c and "}" in c else None):
            if not body:
                continue
            try:
                obj = json.loads(body)
            except (json.JSONDecodeError, ValueError):
                continue
            if isinstance(obj, dict):
                return obj, None
            return None, f"the reply's JSON is a {type(obj).__name__}, not an object"
    return None, f"the reply is not one JSON object: {s[:60]!r}"


def _text_field(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text.strip() or None


def parse_json_verdict(text: str) -> Verdict:
    obj, problem = _json_object(text)
    if obj is None:
        return Verdict(None, problem=problem)
    if "consistent" not in obj:
        return Verdict(None, problem='the JSON has no "consistent" field')
    value = obj["consistent"]
    if isinstance(value, bool):
        label = CONSISTENT if value else INCONSISTENT
    elif isinstance(value, str) and value.strip().strip(".").lower() in ("yes", "no"):
        label = CONSISTENT if value.strip().strip(".").lower() == "yes" else INCONSISTENT
    else:
        return Verdict(None, problem=f'"consistent" is {value!r}, not "yes" or "no"')
    return Verdict(label, _text_field(obj.get("explanation")))


def parse_json_explanation(text: str) -> Verdict:
    """E|D: the label is given (inconsistent); the reply must carry the explanation."""
    obj, problem = _json_object(text)
    if obj is None:
        return Verdict(None, problem=problem)
    if not isinstance(obj.get("explanation"), str):
        return Verdict(None, problem='the JSON has no string "explanation" field')
    return Verdict(INCONSISTENT, _text_field(obj["explanation"]))


def parse_verdict(output: str, text: str) -> Verdict:
    if output == "yes_no":
        return parse_yes_no(text)
    if output == "json_verdict":
        return parse_json_verdict(text)
    if output == "json_explanation":
        return parse_json_explanation(text)
    raise ValueError(f"unknown verdict format {output!r}")


_GRADE_VALUES = {"1": 1.0, "1.0": 1.0, "0.5": 0.5, ".5": 0.5, "0": 0.0, "0.0": 0.0}


def parse_grade(text: str, tag: str) -> ParsedGrade:
    """The grade from the reply's last non-empty line `GRADE <tag>: <grade>`; nothing else."""
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    if not lines:
        return ParsedGrade(None, problem="empty reply")
    last = lines[-1].strip().strip("*_`").strip().rstrip(".").strip()
    m = re.fullmatch(rf"GRADE\s+{re.escape(tag)}\s*:\s*\**\s*([0-9.]+)\s*\**", last, re.IGNORECASE)
    rationale = "\n".join(lines[:-1]).strip() or None
    if not m:
        return ParsedGrade(
            None,
            rationale=None,
            problem=f"the last line is not 'GRADE {tag}: <grade>': {last[:60]!r}",
        )
    value = _GRADE_VALUES.get(m.group(1))
    if value is None:
        return ParsedGrade(None, problem=f"grade {m.group(1)!r} is not 1, 0.5 or 0")
    return ParsedGrade(value, rationale=rationale)
