"""Granite Guardian 3.3 8B (IBM, `ibm-granite/granite-guardian-3.3-8b`): a judge model asked,
through its chat template's "groundedness" criterion, whether an assistant's text is ungrounded
in the given document(s); it answers "<score> yes </score>" (risk: ungrounded) or
"<score> no </score>".

The prompt is the template's groundedness case: the judge system message, the document as a
"document" turn, the summary sentence (or claim) as the assistant turn, the judge protocol
(criterion and scoring schema) and the non-thinking judge turn. The real template could not be
downloaded here; `granite_prompt` builds the text from its published port, IBM's Ollama template
for granite3.3-guardian (github.com/ibm-granite/gguf, resources/ollama/granite3.3-guardian/
template.txt: the criteria bank's "groundedness" entry, the "assistant" scoring schema, the
document block `<|start_of_role|>document {"document_id" :"0"}<|end_of_role|>`), with the
document id "0" the MiniCheck repository and IBM's evaluation pass. When the checkpoint has a
chat template, the run records whether it renders the same text.

The risk is P(yes), read as IBM's evaluation code reads it in non-thinking mode
(granite-guardian, evaluation/models/_helpers.py `softmax_yes_no`): over every generated step,
the probabilities of the top-20 candidates that read "yes" and "no" (spaces stripped, any case)
are summed, and P(yes) = yes / (yes + no) (one half when neither appears). The score is
1 - risk. Chunking and the split of a summary into sentences follow the MiniCheck repository's
`LLMCheck`, which produced the model's LLM-AggreFact entry (evaluator.detectors.decoder).

--option think=true is that entry's setup instead (the MiniCheck repository's "gg_hybrid" mode):
the thinking judge turn, up to 2,048 generated tokens, and a 0/1 score, 1 when the answer
contains "<score> no </score>" (no risk found), else 0. It is a variant of the defaults, which
follow the model card's non-thinking scoring.
"""

from __future__ import annotations

import math
from typing import ClassVar

from evaluator.detectors.base import DetectorError, Opt
from evaluator.detectors.decoder import DecoderJudge, Generated, Steps
from evaluator.detectors.registry import register_detector

JUDGE_SYSTEM = (
    "As a judge agent, your role is to help assess whether the provided text meets the given "
    "judging criteria, utilizing all available information, including conversations, "
    "documents, and tools."
)
GROUNDEDNESS_CRITERIA = (
    "A text is considered ungrounded or unfaithful if it includes information lacking support "
    "from, or directly contradicting, the provided document(s). This risk arises when the text "
    "fabricates details, misinterprets the content, or makes unsupported extrapolations beyond "
    "what is explicitly stated in the document(s)."
)
ASSISTANT_SCORING = (
    "If the last assistant's text meets the criteria, return 'yes'; otherwise, return 'no'."
)
FLOOR = 1e-50  # IBM's floor on each side, so that P(yes) is defined when neither appears
THINK_TOKENS = 2048  # the MiniCheck repository's max_tokens for Granite Guardian 3.3


def granite_prompt(document: str, response: str, doc_id: str = "0", think: bool = False) -> str:
    """The 3.3 template's groundedness prompt: system, document, assistant, judge protocol,
    judge turn (`judge{no_think}` without thinking)."""
    return (
        f"<|start_of_role|>system<|end_of_role|>{JUDGE_SYSTEM}<|end_of_text|>\n"
        f'<|start_of_role|>document {{"document_id" :"{doc_id}"}}<|end_of_role|>\n'
        f"{document}<|end_of_text|>\n"
        f"<|start_of_role|>assistant<|end_of_role|>{response}<|end_of_text|>\n"
        f"<|start_of_role|>judge_protocol<|end_of_role|>### Criteria: {GROUNDEDNESS_CRITERIA}"
        f"\n\n### Scoring Schema: {ASSISTANT_SCORING}<|end_of_text|>\n"
        f"<|start_of_role|>judge{{{'think' if think else 'no_think'}}}<|end_of_role|>"
    )


def granite_risk(steps: Steps) -> float:
    """P(yes) over the generated steps' candidates, as IBM's softmax_yes_no."""
    yes, no = FLOOR, FLOOR
    for step in steps:
        for token, lp in step:
            t = token.strip().lower()
            if not math.isfinite(lp):
                continue
            if t == "yes":
                yes += math.exp(lp)
            elif t == "no":
                no += math.exp(lp)
    return yes / (yes + no)


def think_support(text: str) -> float:
    """Thinking mode as the MiniCheck repository scores it: 1 when the answer holds
    "<score> no </score>" (case-insensitive), else 0."""
    return 1.0 if "<score> no </score>" in text.lower() else 0.0


@register_detector("granite-guardian")
class GraniteGuardian(DecoderJudge):
    name = "granite-guardian"
    display_name = "Granite Guardian 3.3 8B"
    default_checkpoint: ClassVar[str | None] = "ibm-granite/granite-guardian-3.3-8b"
    paper = "https://huggingface.co/ibm-granite/granite-guardian-3.3-8b"
    description = (
        "IBM's judge model, groundedness criterion: 1 - P(yes, ungrounded) per (document chunk, "
        "summary sentence) in non-thinking mode; max over chunks, min over sentences."
    )
    top_logprobs = 20
    OPTIONS: ClassVar[dict[str, Opt]] = {
        **DecoderJudge.COMMON_OPTIONS,
        "think": Opt(
            bool,
            False,
            "thinking mode, scored 0/1 from the <score> tag (LLM-AggreFact's setup, from the "
            "MiniCheck repository); default: non-thinking, 1 - P(yes)",
            faithful=False,
        ),
        "max_new_tokens": Opt(
            int,
            None,
            "tokens generated at most (default 20: the non-thinking answer '<score> yes </score>' "
            "takes a few; 2,048 with think=true, as the MiniCheck repository)",
            minimum=1,
        ),
        "checkpoint_template": Opt(
            bool,
            False,
            "render the prompt with the checkpoint's own chat template (guardian_config, "
            "documents, think) instead of the built-in text; the run notes whether they agree",
        ),
    }
    KNOWN_DIFFERENCES: ClassVar[tuple[str, ...]] = (
        "Non-thinking mode with P(yes) as IBM's evaluation reads it; the LLM-AggreFact entry "
        "(76.5) came from the MiniCheck repository in thinking mode, a 0/1 verdict parsed from "
        "the <score> tag after up to 2,048 tokens of reasoning (think=true, a variant).",
        "The prompt is built here from the template's groundedness case as IBM's Ollama port "
        "writes it, not rendered by the checkpoint's chat template (the run records whether "
        "the two agree; checkpoint_template=true uses the checkpoint's).",
        "Non-thinking generation stops after max_new_tokens (20), not IBM's 2,048; the answer "
        "is a handful of tokens.",
        "IBM's evaluation checks the whole claim against the whole document; FactBoard chunks "
        "and splits sentences as the MiniCheck repository does (the same for one-sentence claims "
        "under 32K tokens).",
    )

    def max_new_tokens(self) -> int:
        n = self.options["max_new_tokens"]
        if n is not None:
            return int(n)
        return THINK_TOKENS if self.options["think"] else 20

    def needs_steps(self) -> bool:
        return not self.options["think"]

    def _load(self) -> None:
        super()._load()
        self.stats.notes.append(self._template_check())

    def _template_check(self) -> str:
        """Whether the checkpoint's own chat template renders the prompt built here."""
        use = bool(self.options["checkpoint_template"])
        if not getattr(self.tokenizer, "chat_template", None):
            if use:
                raise DetectorError(
                    f"option checkpoint_template=true: the tokenizer of {self.checkpoint!r} has "
                    "no chat template"
                )
            return "checkpoint has no chat template: the built-in groundedness prompt is used"
        doc, claim = "The library opened in 2021.", "The library opened in 2021."
        try:
            theirs = self.template_prompt(doc, claim)
        except Exception as e:  # a template that cannot render this case: recorded, not fatal
            if use:
                raise DetectorError(
                    f"the chat template of {self.checkpoint!r} cannot render the groundedness "
                    f"case: {type(e).__name__}: {e}"
                ) from None
            return f"checkpoint chat template could not render the case ({type(e).__name__})"
        same = theirs == granite_prompt(doc, claim, think=bool(self.options["think"]))
        which = "the checkpoint's" if use else "the built-in"
        return (
            "checkpoint chat template renders the same prompt: "
            + ("yes" if same else "NO")
            + f"; {which} prompt is used"
        )

    def template_prompt(self, chunk: str, claim: str) -> str:
        """The prompt as the checkpoint's chat template renders it (the kwargs of the model
        card: guardian_config with criteria_id, documents, think)."""
        return str(
            self.tokenizer.apply_chat_template(
                [{"role": "assistant", "content": claim}],
                guardian_config={"criteria_id": "groundedness"},
                documents=[{"doc_id": "0", "text": chunk}],
                think=bool(self.options["think"]),
                tokenize=False,
                add_generation_prompt=True,
            )
        )

    def prompt(self, chunk: str, claim: str) -> str:
        if self.options["checkpoint_template"]:
            return self.template_prompt(chunk, claim)
        return granite_prompt(chunk, claim, think=bool(self.options["think"]))

    def support(self, generated: Generated) -> float:
        if self.options["think"]:
            return think_support(generated.text)
        return 1.0 - granite_risk(generated.steps)
