"""Bespoke-MiniCheck-7B (Bespoke Labs and Tang et al.; the MiniCheck repository's `LLMCheck`,
minicheck/inference.py and minicheck/utils.py): a 7B chat model fine-tuned to answer "Yes" or
"No" to whether a claim is supported by a document.

As the authors run it:
- the prompt is a system message (SYSTEM_PROMPT below) and a user message
  "Document: <chunk>\\nClaim: <sentence>", rendered with the checkpoint's chat template and the
  generation prompt;
- one token is generated at temperature 0 with the 5 likeliest tokens and their
  log-probabilities; the support probability is the summed probability of those of the five
  that read "yes" in any case ("Yes", "yes", ...): the full-vocabulary probability, not
  renormalised over Yes/No;
- documents are chunked at 32,468 tokens, summaries split into sentences, max over chunks then
  min over sentences (evaluator.detectors.decoder).

The checkpoint (`bespokelabs/Bespoke-MiniCheck-7B`) is fine-tuned from internlm2_5-7b-chat: an
InternLM2 model whose modelling and tokenizer code ship with the checkpoint, so transformers
loads it with --option trust_remote_code=true (the authors pass the same to vLLM); `vllm serve
bespokelabs/Bespoke-MiniCheck-7B --trust-remote-code` and --option base_url=URL score on the
server instead. Any causal LM with a chat template loads the same way (the tests use Qwen2).
"""

from __future__ import annotations

from typing import ClassVar

from evaluator.detectors.base import DetectorError, Opt
from evaluator.detectors.decoder import DecoderJudge, Generated, Steps, logprob_mass
from evaluator.detectors.registry import register_detector

SYSTEM_PROMPT = (
    "Determine whether the provided claim is consistent with the corresponding document. "
    "Consistency in this context implies that all information presented in the claim is "
    "substantiated by the document. If not, it should be considered inconsistent. Please "
    'assess the claim\'s consistency with the document by responding with either "Yes" or "No".'
)
USER_PROMPT = "Document: [DOCUMENT]\nClaim: [CLAIM]"


def bespoke_support(steps: Steps) -> float:
    """P(supported): the summed probability of the first step's candidates that read "yes"
    (case-insensitive, spaces not stripped), as the authors' get_support_prob."""
    if not steps:
        return 0.0
    return logprob_mass(steps[0], "yes", strip=False)


@register_detector("bespoke-minicheck")
class BespokeMiniCheck(DecoderJudge):
    name = "bespoke-minicheck"
    display_name = "Bespoke-MiniCheck-7B"
    default_checkpoint: ClassVar[str | None] = "bespokelabs/Bespoke-MiniCheck-7B"
    paper = "https://huggingface.co/bespokelabs/Bespoke-MiniCheck-7B"
    description = (
        "A 7B chat checker answering Yes/No per (document chunk, summary sentence); P(Yes) of "
        "the first token, max over chunks, min over sentences (Bespoke Labs / Tang et al.)."
    )
    top_logprobs = 5
    OPTIONS: ClassVar[dict[str, Opt]] = dict(DecoderJudge.COMMON_OPTIONS)
    KNOWN_DIFFERENCES: ClassVar[tuple[str, ...]] = (
        "The 5 candidates are decoded one token at a time (tokenizer.decode), as current vLLM "
        "does; the vLLM of the authors' time decoded them in context.",
        "The transformers path runs the model in PyTorch, not vLLM: the same probabilities up "
        "to kernel-level rounding in bfloat16.",
    )

    def _load(self) -> None:
        super()._load()
        if not getattr(self.tokenizer, "chat_template", None):
            raise DetectorError(
                f"the tokenizer of {self.checkpoint!r} has no chat template: Bespoke-MiniCheck's "
                "prompt is a system and a user message rendered with the checkpoint's template"
            )

    def prompt(self, chunk: str, claim: str) -> str:
        # in this order, as the authors' str.replace calls
        user = USER_PROMPT.replace("[DOCUMENT]", chunk).replace("[CLAIM]", claim)
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user},
        ]
        return str(
            self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        )

    def support(self, generated: Generated) -> float:
        return bespoke_support(generated.steps)
