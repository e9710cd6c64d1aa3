"""What the decoder-only (chat LLM) checkers share: Bespoke-MiniCheck-7B and Granite Guardian 3.3.

Both follow the MiniCheck repository's `LLMCheck` (minicheck/inference.py, the code behind the
LLM-AggreFact numbers of both models):

- the document is split into sentences, a line break being a sentence of its own ("\\n"), and
  the sentences are packed greedily into chunks of at most `chunk_size` tokens counted with the
  checker's own tokenizer (32,768 - 300 by default: the model's window less room for the claim);
  chunks are joined with spaces, " \\n " back to a line break, and empty chunks dropped;
- the summary is split into sentences ("SentenceFusion"); every (chunk, sentence) pair is one
  prompt; a sentence's support is the max over chunks, the summary's the min over sentences
  (option aggregate=whole checks the summary as one claim);
- a prompt is scored from the most likely next tokens at temperature 0: each detector reads its
  support probability from the top-k (token, log-probability) lists of the generated steps
  and the generated text (`support`).

Two ways to get those lists, one class: transformers (greedy generation on this machine, the
raw next-token log-probabilities over the whole vocabulary), or an OpenAI-compatible server such
as `vllm serve` (option base_url): the prompt text rendered here is sent as is to POST
/completions with `logprobs=k`, so both paths score the same text the same way. The tokenizer
is loaded in both (chunking counts its tokens; Bespoke renders its chat template with it).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, NamedTuple

import numpy as np

from evaluator.detectors.base import (
    Description,
    DetectorError,
    Evidence,
    ModelDetector,
    Opt,
    TruncationLog,
    evidence,
    evidence_item,
    splitter_opt,
)

Steps = list[list[tuple[str, float]]]  # per generated step, its top-k (decoded token, logprob)


class Generated(NamedTuple):
    text: str  # the generated text (special tokens skipped)
    steps: Steps


CLAIM_ROOM = 300  # tokens the authors keep free for the claim: chunk_size = max_length - 300
DEFAULT_MAX_LENGTH = 32768  # the authors' max_model_len
ANSWER_CHARS = 4000  # the model's answer kept in the evidence (a thinking trace can be long)


def llmcheck_sentences(text: str, style: str = "nltk-newlines") -> list[str]:
    """The document as the authors split it (`sent_tokenize_with_newlines`): sentences of each
    line, with "\\n" between lines; "nltk-newlines" splits each line with nltk's punkt (pysbd
    where its data is missing), "pysbd" with FactBoard's splitter."""
    from evaluator.detectors.text import split_sentences

    if style == "nltk-newlines":
        return list(split_sentences(text, style))
    out: list[str] = []
    for i, line in enumerate(text.split("\n")):
        if i:
            out.append("\n")
        out.extend(split_sentences(line, style) if line.strip() else ())
    return out


def llmcheck_chunks(items: Sequence[str], sizes: Sequence[int], limit: int) -> list[str]:
    """Pack `items` (sentences and "\\n") greedily into chunks of at most `limit` tokens (an
    item that would overflow starts a new chunk; an over-long item is a chunk of its own); join
    with spaces, turn " \\n " back into a line break, strip, drop empty chunks. A document with
    no text is one empty chunk."""
    raw: list[str] = []
    cur: list[str] = []
    count = 0
    for s, n in zip(items, sizes, strict=True):
        if count + n > limit:
            raw.append(" ".join(cur))
            cur, count = [s], n
        else:
            cur.append(s)
            count += n
    if cur:
        raw.append(" ".join(cur))
    chunks = [c.replace(" \n ", "\n").strip() for c in raw]
    return [c for c in chunks if c] or [""]


def fusion_aggregate(matrix: np.ndarray, how: str = "min") -> float:
    """[chunks, sentences] support probabilities -> max over chunks, then min over sentences."""
    per_sentence = matrix.max(axis=0)
    return float(per_sentence.min()) if how == "min" else float(per_sentence.mean())


class DecoderJudge(ModelDetector):
    """A chat LLM that answers yes/no about (chunk, claim). Subclasses set `top_logprobs`,
    `max_new_tokens` and implement `prompt` and `support`.

    Its kind is an open LLM: a fine-tuned open-weight LLM answering about the claim, as the
    published rows of the same checkers are (leaderboard_data/reported)."""

    kind = "open-llm"
    gpu_precision = "bfloat16"
    default_batch_size = 4
    # documents: sent_tokenize_with_newlines (punkt per line); summary sentences: sent_tokenize
    sentence_style: ClassVar[str | None] = "nltk-newlines"
    top_logprobs: ClassVar[int] = 5
    COMMON_OPTIONS: ClassVar[dict[str, Opt]] = {
        "max_length": Opt(
            int,
            DEFAULT_MAX_LENGTH,
            "prompt tokens at most (the authors' max_model_len)",
            minimum=64,
            faithful=DEFAULT_MAX_LENGTH,
        ),
        "chunk_size": Opt(
            int,
            DEFAULT_MAX_LENGTH - CLAIM_ROOM,
            "document chunk size in tokens (the authors: max_model_len - 300)",
            minimum=1,
            faithful=DEFAULT_MAX_LENGTH - CLAIM_ROOM,
        ),
        "aggregate": Opt(
            str,
            "min",
            "min: split the summary into sentences, max over chunks then min over sentences; "
            "whole: the summary as one claim",
            choices=("min", "whole"),
            faithful="min",
        ),
        "splitter": splitter_opt("nltk-newlines"),
        "base_url": Opt(
            str,
            None,
            "an OpenAI-compatible server (e.g. `vllm serve`, http://localhost:8000/v1) to score "
            "on instead of loading the model here",
        ),
        "served_model": Opt(str, None, "the model name at the server (default: the checkpoint)"),
        "concurrency": Opt(int, 16, "server: requests in flight at once", minimum=1),
        "timeout": Opt(float, 600.0, "server: seconds to wait for one reply", minimum=1),
        "trust_remote_code": Opt(
            bool,
            False,
            "run model/tokenizer code from the checkpoint (needed by checkpoints whose "
            "architecture transformers does not ship, e.g. InternLM2)",
        ),
        "precision": Opt(
            str, "auto", "model dtype", choices=("auto", "float32", "float16", "bfloat16")
        ),
    }

    # hooks ---------------------------------------------------------------------------------

    @abc.abstractmethod
    def prompt(self, chunk: str, claim: str) -> str:
        """The full prompt text (chat template applied, generation prompt included)."""

    @abc.abstractmethod
    def support(self, generated: Generated) -> float:
        """P(the claim is supported by the chunk), from the generated steps' top-k lists (or
        the generated text)."""

    def max_new_tokens(self) -> int:
        return 1

    def needs_steps(self) -> bool:
        """Whether `support` reads the steps' log-probabilities (not only the text)."""
        return True

    def _check_options(self) -> None:
        if self.options["chunk_size"] >= self.options["max_length"]:
            raise DetectorError(
                f"option chunk_size={self.options['chunk_size']} of detector {self.name} must "
                f"be less than max_length={self.options['max_length']} (room for the claim)"
            )
        url = self.options["base_url"]
        if url is not None:
            from urllib.parse import urlsplit

            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise DetectorError(
                    f"option base_url of detector {self.name} is not an http(s) URL"
                )

    @property
    def server(self) -> bool:
        return self.options["base_url"] is not None

    # loading -------------------------------------------------------------------------------

    def _load(self) -> None:
        from transformers import AutoTokenizer

        from evaluator.detectors.base import load_pretrained

        ckpt = str(self.checkpoint)
        remote = bool(self.options["trust_remote_code"])
        if not remote and needs_remote_code(ckpt):
            raise DetectorError(
                f"{ckpt!r} is an architecture whose code ships with the checkpoint (auto_map; "
                "Bespoke-MiniCheck-7B is InternLM2): --option trust_remote_code=true runs that "
                "code, as the authors do; the tokenizer needs it on the server path too"
            )
        self.tokenizer = load_pretrained(
            f"{self.display_name} tokenizer",
            ckpt,
            AutoTokenizer.from_pretrained,
            trust_remote_code=remote,
        )
        self.max_length = int(self.options["max_length"])
        self.chunk_size = int(self.options["chunk_size"])
        self.stats.max_input_tokens["checker"] = self.max_length
        self.stats.notes.append(
            f"chunks of {self.chunk_size} tokens; aggregate {self.options['aggregate']}; "
            f"top-{self.top_logprobs} next-token log-probabilities"
        )
        self._chunk_cache: dict[str, list[str]] = {}
        if self.server:
            from evaluator.llm.clients import make_client, public_url

            model = self.options["served_model"] or ckpt
            self.client: Any = make_client(
                f"compatible:{model}",
                {"base_url": self.options["base_url"], "timeout": str(self.options["timeout"])},
            )
            self.stats.notes.append(f"scored on the server {public_url(self.options['base_url'])}")
            return
        from transformers import AutoModelForCausalLM

        from evaluator.detectors.device import place

        model = load_pretrained(
            f"{self.display_name} model",
            ckpt,
            AutoModelForCausalLM.from_pretrained,
            trust_remote_code=remote,
            dtype=self.device.dtype,
        )
        self.model = place(model, self.device)
        if self.tokenizer.pad_token_id is None and self.tokenizer.eos_token_id is None:
            raise DetectorError(f"the tokenizer of {ckpt!r} has neither a padding nor an EOS token")

    # chunking ------------------------------------------------------------------------------

    def n_tokens(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        from evaluator.detectors.base import quiet_transformers

        with quiet_transformers():
            enc = self.tokenizer(list(texts), add_special_tokens=False)
        return [len(ids) for ids in enc["input_ids"]]

    def chunks(self, document: str) -> list[str]:
        if document not in self._chunk_cache:
            items = llmcheck_sentences(document, self.splitter_style() or "nltk-newlines")
            self._chunk_cache[document] = llmcheck_chunks(
                items, self.n_tokens(items), self.chunk_size
            )
        return self._chunk_cache[document]

    def claims(self, summary: str) -> list[str]:
        if self.options["aggregate"] == "whole":
            return [summary.strip()] if summary.strip() else []
        return list(self.sentences(summary, "nltk"))  # the authors: nltk.sent_tokenize(claim)

    # prompts -------------------------------------------------------------------------------

    def fitted_prompt(self, chunk: str, claim: str) -> tuple[str, bool]:
        """The prompt, cut to max_length tokens when it is longer: the chunk's tail first, then
        the claim's; and whether it was cut. (The authors' vLLM refuses such a prompt; their
        chunk size leaves 300 tokens for the claim, so only a very long claim gets here.)"""
        text = self.prompt(chunk, claim)
        over = len(self._encode(text)) - self.max_length
        if over <= 0:
            return text, False
        parts = {"chunk": chunk, "claim": claim}
        for which in ("chunk", "claim"):
            ids = self.tokenizer(parts[which], add_special_tokens=False)["input_ids"]
            keep = len(ids) - over
            while True:
                parts[which] = self.tokenizer.decode(ids[: max(keep, 0)])
                text = self.prompt(parts["chunk"], parts["claim"])
                over = len(self._encode(text)) - self.max_length
                if over <= 0:
                    return text, True
                if keep <= 0:
                    break
                keep -= max(over, 1)
        return text, True  # the template alone is longer than max_length

    def _encode(self, text: str) -> list[int]:
        # as vLLM tokenizes a text prompt: the tokenizer's own special tokens added
        return list(self.tokenizer(text)["input_ids"])

    # scoring -------------------------------------------------------------------------------

    def generate(self, prompts: Sequence[str]) -> list[Generated]:
        """Per prompt, the generated text and the top-k lists of its steps."""
        if self.server:
            return self._generate_server(prompts)
        return self._generate_local(prompts)

    def _generate_local(self, prompts: Sequence[str]) -> list[Generated]:
        import torch
        from transformers import GenerationConfig

        from evaluator.detectors.batching import Progress, length_sorted_batches

        tok = self.tokenizer
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        eos = tok.eos_token_id
        rows = [self._encode(p) for p in prompts]
        out: list[Generated | None] = [None] * len(rows)
        k = self.top_logprobs
        n_new = self.max_new_tokens()
        config = GenerationConfig(
            do_sample=False,
            max_new_tokens=n_new,
            eos_token_id=eos,
            pad_token_id=pad,
            output_logits=self.needs_steps(),
            return_dict_in_generate=True,
        )
        bar = Progress(len(rows), f"{self.name} prompts", self.progress, unit="prompt")
        dev = self.device.torch_device
        with torch.inference_mode():
            for idx in length_sorted_batches([len(r) for r in rows], self.batch_size):
                width = max(len(rows[i]) for i in idx)
                ids = torch.full((len(idx), width), int(pad), dtype=torch.long)
                mask = torch.zeros((len(idx), width), dtype=torch.long)
                for j, i in enumerate(idx):  # left padding: generation continues every row
                    r = rows[i]
                    ids[j, width - len(r) :] = torch.tensor(r, dtype=torch.long)
                    mask[j, width - len(r) :] = 1
                gen = self.model.generate(
                    input_ids=ids.to(dev), attention_mask=mask.to(dev), generation_config=config
                )
                new = gen.sequences[:, width:].tolist()
                for j, i in enumerate(idx):
                    n = len(new[j])  # generated steps up to and with this row's EOS
                    if eos is not None and int(eos) in new[j]:
                        n = new[j].index(int(eos)) + 1
                    steps: Steps = []
                    for t in range(n if self.needs_steps() else 0):
                        lp = gen.logits[t][j].float().log_softmax(dim=-1)
                        vals, tids = lp.topk(k)
                        steps.append(
                            [
                                (tok.decode([int(a)]), float(v))
                                for v, a in zip(vals.tolist(), tids.tolist(), strict=True)
                            ]
                        )
                    text = tok.decode(new[j][:n], skip_special_tokens=True)
                    out[i] = Generated(text, steps)
                bar.update(len(idx))
        bar.close()
        return [g if g is not None else Generated("", []) for g in out]

    def _generate_server(self, prompts: Sequence[str]) -> list[Generated]:
        from evaluator.detectors.batching import Progress
        from evaluator.llm.clients import LLMConfigError, LLMError, TransientLLMError, public_url
        from evaluator.llm.execute import RetryPolicy

        retry = RetryPolicy()
        bar = Progress(len(prompts), f"{self.name} prompts", self.progress, unit="prompt")

        def one(text: str) -> Generated:
            attempt = 0
            while True:
                attempt += 1
                try:
                    reply = self.client.complete_logprobs(
                        text, max_tokens=self.max_new_tokens(), top_logprobs=self.top_logprobs
                    )
                except LLMConfigError as e:
                    raise DetectorError(f"{self.name}: the server refused: {e}") from None
                except TransientLLMError as e:
                    if attempt >= retry.max_attempts:
                        raise DetectorError(
                            f"{self.name}: the server failed {attempt} times: {e}"
                        ) from None
                    retry.sleep(retry.delay(attempt, e.retry_after))
                    continue
                except LLMError as e:
                    raise DetectorError(f"{self.name}: the server failed: {e}") from None
                if not reply.steps and self.needs_steps():
                    raise DetectorError(
                        f"{self.name}: the server at {public_url(self.options['base_url'])} "
                        "returned no "
                        "log-probabilities (an OpenAI-compatible /completions with logprobs "
                        "is needed, e.g. vLLM)"
                    )
                bar.update(1)
                return Generated(reply.text, [list(s) for s in reply.steps])

        try:
            workers = min(int(self.options["concurrency"]), max(len(prompts), 1))
            with ThreadPoolExecutor(max_workers=workers) as pool:
                return list(pool.map(one, prompts))
        finally:
            bar.close()

    def matrices(
        self, documents: Sequence[str], summaries: Sequence[str]
    ) -> tuple[list[np.ndarray], list[tuple[list[str], list[str]]], list[list[list[str]]]]:
        """Per pair: the [chunks, sentences] support matrix, its chunks and sentences, and the
        model's answer (generated text) for each (chunk, sentence)."""
        from evaluator.detectors.batching import pair_grid, per_sample_matrices

        grid = pair_grid(documents, summaries, self.chunks, self.claims)
        segs, uniq, where, owners = grid.segs, grid.uniq, grid.where, grid.owners
        self.stats.model_inputs += len(uniq)
        fitted = [self.fitted_prompt(c, t) for c, t in uniq]
        generated = self.generate([p for p, _ in fitted])
        probs = np.asarray([self.support(g) for g in generated], dtype=np.float64)
        log = TruncationLog(len(segs))
        log.mark(owners, [fitted[w][1] for w in where])
        log.add_to(self.stats)
        answers: list[list[list[str]]] = []
        pos = 0
        for chunks, claims in segs:  # pairs were made chunk-major
            n = len(claims)
            answers.append(
                [
                    [generated[w].text for w in where[pos + r * n : pos + (r + 1) * n]]
                    for r in range(len(chunks))
                ]
            )
            pos += len(chunks) * n
        return per_sample_matrices(segs, where, probs), segs, answers

    def _score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        mats, segs, answers = self.matrices(documents, summaries)
        scores: list[float] = []
        evid: list[Evidence | None] = []
        whole = self.options["aggregate"] == "whole"
        for m, (chunks, claims), said in zip(mats, segs, answers, strict=True):
            if not m.size:
                scores.append(float("nan"))
                evid.append(None)
                continue
            scores.append(fusion_aggregate(m, "min"))
            items = []
            for j, claim in enumerate(claims):
                best = int(m[:, j].argmax())
                items.append(
                    evidence_item(
                        claim,
                        float(m[best, j]),
                        support=chunks[best] if len(chunks) > 1 else None,
                        chunk_scores=[float(v) for v in m[:, j]],
                        best_chunk=best,
                        answer=said[best][j][:ANSWER_CHARS],
                    )
                )
            note = (
                "the document is one chunk"
                if len(chunks) == 1
                else f"the document in {len(chunks)} chunks of at most {self.chunk_size} tokens"
            )
            unit = "claim" if whole or len(claims) == 1 else "sentence"
            evid.append(evidence(unit, items, "min over sentences of max over chunks", note))
        self.set_evidence(evid)
        return scores

    def describe(self) -> Description:
        out = super().describe()
        if self.server:
            from evaluator.llm.clients import public_url

            out["options"]["base_url"] = public_url(self.options["base_url"])
            out["device"] = "server"
            out["dtype"] = None
        return out


def needs_remote_code(checkpoint: str) -> bool:
    """Whether the checkpoint's config or tokenizer config maps its classes to code shipped with
    it (`auto_map`): a local folder, or a hub id already in the Hugging Face cache."""
    import json
    from pathlib import Path

    for name in ("config.json", "tokenizer_config.json"):
        path: Any = Path(checkpoint) / name
        if not Path(checkpoint).is_dir():
            try:
                from huggingface_hub import try_to_load_from_cache

                path = try_to_load_from_cache(checkpoint, name)
            except Exception:  # not a hub id the cache knows
                path = None
        if not isinstance(path, (str, Path)) or not Path(path).is_file():
            continue
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("auto_map"):
            return True
    return False


def logprob_mass(step: Sequence[tuple[str, float]], word: str, *, strip: bool) -> float:
    """Sum of the probabilities of the candidates that read `word` (lower-cased; `strip`:
    surrounding spaces ignored)."""
    total = 0.0
    for token, lp in step:
        t = token.strip() if strip else token
        if t.lower() == word and math.isfinite(lp):
            total += math.exp(lp)
    return total
