"""BARTScore (Yuan, Neubig & Liu, NeurIPS 2021): the faithfulness direction, source -> summary.

score(source, summary) = mean over the summary's tokens (its special tokens included, as the
released code counts them) of log p(token | earlier tokens, source) under a seq2seq LM. The
paper's faithfulness scores use facebook/bart-large-cnn. Sources longer than the model's limit
(1024 tokens for BART) are cut, and each cut is counted in the run.

Inputs are detokenized first, as the authors' pipeline does (neulab/BARTScore, SUM/score.py:
"Keep capitalization, detokenize everything" -> `detokenize(line)` of SUM/utils.py, i.e.
`MosesDetokenizer('en')` of the `mosestokenizer` package, which runs Moses' detokenizer.perl on
the text split at single spaces). `moses_detokenize` is a pure-Python rewrite of that script's
English rules (option detokenize=moses, the default); detokenize=none scores the text as given.

Evidence: the score is a mean over the summary's tokens, all scored in one forward pass, so it
splits exactly by sentence: each summary sentence's item is the mean log-likelihood of its own
tokens (conditioned, as in the score, on the source and the summary before it), and the pair's
score is the token-weighted mean of the items plus the special tokens <s> and </s>.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from evaluator.detectors.base import (
    DetectorError,
    Evidence,
    ModelDetector,
    Opt,
    TruncationLog,
    evidence,
    evidence_item,
)
from evaluator.detectors.registry import register_detector

# --------------------------------------------------------------------------------------------
# Moses' English detokenizer (detokenizer.perl, revision 4134, as shipped in mosestokenizer
# 1.2.1): the rules that apply to English, rewritten in Python.

_ESCAPES = (  # deescape(), in the script's order (&amp; last)
    ("&bar;", "|"),
    ("&#124;", "|"),
    ("&lt;", "<"),
    ("&gt;", ">"),
    ("&bra;", "["),
    ("&ket;", "]"),
    ("&quot;", '"'),
    ("&apos;", "'"),
    ("&#91;", "["),
    ("&#93;", "]"),
    ("&amp;", "&"),
)
_RIGHT_SHIFT = set("([{¿¡")  # with the currency symbols (category Sc): glue to the next word
_LEFT_SHIFT = set(",.?!:;\\%}])")  # glue to the previous word
_QUOTES = set("'\"„“`")
_CURLY_DOUBLE = set("„“”")
_TAG_LINE = re.compile(r"^<.+>$")


def _cjk(ch: str) -> bool:
    c = ord(ch)
    return (
        0x1100 <= c <= 0x11FF
        or 0x2E80 <= c <= 0xA4CF
        or 0xA840 <= c <= 0xA87F
        or 0xAC00 <= c <= 0xD7AF
        or 0xF900 <= c <= 0xFAFF
        or 0xFE30 <= c <= 0xFE4F
        or 0xFF65 <= c <= 0xFFDC
        or 0x20000 <= c <= 0x2FFFF
    )


def _alpha(ch: str) -> bool:
    return ch.isalpha() or unicodedata.category(ch) in ("Nl", "Mn", "Mc")


def _alnum(ch: str) -> bool:
    return _alpha(ch) or unicodedata.category(ch) == "Nd"


def _detokenize_line(line: str) -> str:
    if _TAG_LINE.match(line) or not line.strip():
        return line  # the script leaves markup lines and blank lines as they are
    text = f" {line} ".replace(" @-@ ", "-")
    for a, b in _ESCAPES:
        text = text.replace(a, b)
    words = text.split(" ")
    out: list[str] = []
    quotes: dict[str, int] = {}
    space = " "
    for i, w in enumerate(words):
        prev = words[i - 1] if i > 0 else ""
        if w and _cjk(w[0]):
            out.append(w if i > 0 and prev and _cjk(prev[-1]) else space + w)
            space = " "
        elif w and all(c in _RIGHT_SHIFT or unicodedata.category(c) == "Sc" for c in w):
            out.append(space + w)
            space = ""
        elif w and all(c in _LEFT_SHIFT for c in w):
            out.append(w)
            space = " "
        elif i > 0 and len(w) > 1 and w[0] == "'" and _alpha(w[1]) and prev and _alnum(prev[-1]):
            out.append(w)  # an English contraction: 's, 're, 'll ...
            space = " "
        elif w and all(c in _QUOTES for c in w):
            key = '"' if all(c in _CURLY_DOUBLE for c in w) else w
            n = quotes.get(key, 0)
            if n % 2 == 0:
                if w == "'" and i > 0 and prev.endswith("s"):
                    out.append(w)  # possessive: "the Jones' house"
                    space = " "
                else:
                    out.append(space + w)
                    space = ""
                    quotes[key] = n + 1
            else:
                out.append(w)
                space = " "
                quotes[key] = n + 1
        else:
            out.append(space + w)
            space = " "
    text = re.sub(r" +", " ", "".join(out))
    if text.startswith(" "):
        text = text[1:]
    if text.endswith(" "):
        text = text[:-1]
    return text


def moses_detokenize(text: str) -> str:
    """`detokenize(text)` of the BARTScore pipeline: Moses' English detokenizer over the text's
    space-separated tokens. The authors' texts are one line each; a text with line breaks is
    detokenized line by line and keeps its breaks."""
    return "\n".join(_detokenize_line(line) for line in text.split("\n"))


# --------------------------------------------------------------------------------------------
# the scoring model


class Seq2SeqLogLikelihood:
    """Mean token log-likelihood of targets given sources, batched and length-sorted."""

    def __init__(self, checkpoint: str, device: Any, max_length: int, what: str = "scoring model"):
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        from evaluator.detectors.base import load_pretrained
        from evaluator.detectors.device import place

        self.tokenizer = load_pretrained(
            f"{what} tokenizer", checkpoint, AutoTokenizer.from_pretrained
        )
        model = load_pretrained(what, checkpoint, AutoModelForSeq2SeqLM.from_pretrained)
        if not getattr(model.config, "is_encoder_decoder", False):
            raise DetectorError(f"{what} {checkpoint!r} is not an encoder-decoder model")
        self.pad_id = model.config.pad_token_id
        if self.pad_id is None:
            raise DetectorError(f"{what} {checkpoint!r} has no pad token id")
        self.device = device
        self.model = place(model, device)
        lim = getattr(self.tokenizer, "model_max_length", None)
        lim = lim if isinstance(lim, int) and 0 < lim < 1_000_000 else max_length
        self.max_length = min(max_length, lim)

    def score(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        batch_size: int,
        progress: Any = None,
        token_scores: list[np.ndarray] | None = None,
    ) -> tuple[np.ndarray, list[bool]]:
        """Scores for the pairs, and whether each pair's source or target was cut. When
        `token_scores` is a list, it receives per pair the log-likelihood of each target token
        (in target order, the special tokens included)."""
        import torch

        from evaluator.detectors.base import quiet_transformers
        from evaluator.detectors.batching import length_sorted_batches

        if not sources:
            return np.zeros(0), []
        with quiet_transformers():
            src = self.tokenizer(list(sources), truncation=False)["input_ids"]
            tgt = self.tokenizer(list(targets), truncation=False)["input_ids"]
            flags = [
                len(a) > self.max_length or len(b) > self.max_length
                for a, b in zip(src, tgt, strict=True)
            ]
            long_s = [i for i, a in enumerate(src) if len(a) > self.max_length]
            long_t = [i for i, b in enumerate(tgt) if len(b) > self.max_length]
            if long_s:
                cut = self.tokenizer(
                    [sources[i] for i in long_s], truncation=True, max_length=self.max_length
                )
                for j, i in enumerate(long_s):
                    src[i] = cut["input_ids"][j]
            if long_t:
                cut = self.tokenizer(
                    [targets[i] for i in long_t], truncation=True, max_length=self.max_length
                )
                for j, i in enumerate(long_t):
                    tgt[i] = cut["input_ids"][j]
        lengths = [len(a) + len(b) for a, b in zip(src, tgt, strict=True)]
        out = np.zeros(len(src), dtype=np.float64)
        per_token: list[Any] | None = [None] * len(src) if token_scores is not None else None
        dev = self.device.torch_device
        with torch.inference_mode():
            for idx in length_sorted_batches(lengths, batch_size):
                s_len = max(len(src[i]) for i in idx)
                t_len = max(len(tgt[i]) for i in idx)
                s_ids = torch.full((len(idx), s_len), self.pad_id, dtype=torch.long)
                s_mask = torch.zeros((len(idx), s_len), dtype=torch.long)
                t_ids = torch.full((len(idx), t_len), self.pad_id, dtype=torch.long)
                for j, i in enumerate(idx):
                    s_ids[j, : len(src[i])] = torch.tensor(src[i])
                    s_mask[j, : len(src[i])] = 1
                    t_ids[j, : len(tgt[i])] = torch.tensor(tgt[i])
                t_lens = torch.tensor([len(tgt[i]) for i in idx], dtype=torch.float64)
                s_ids, s_mask, t_dev = s_ids.to(dev), s_mask.to(dev), t_ids.to(dev)
                dec = self.model.prepare_decoder_input_ids_from_labels(labels=t_dev)
                logits = self.model(
                    input_ids=s_ids, attention_mask=s_mask, decoder_input_ids=dec
                ).logits
                logp = torch.log_softmax(logits.float(), dim=-1)
                tok = logp.gather(-1, t_dev.unsqueeze(-1)).squeeze(-1)
                tok = tok.masked_fill(t_dev == self.pad_id, 0.0)
                vals = (tok.sum(dim=1).double().cpu() / t_lens).numpy()
                out[idx] = vals
                if per_token is not None:
                    tok_np = tok.double().cpu().numpy()
                    for j, i in enumerate(idx):
                        per_token[i] = tok_np[j, : len(tgt[i])]
                if progress is not None:
                    progress.update(len(idx))
        if token_scores is not None and per_token is not None:
            token_scores.extend(per_token)
        return out, flags


def sentence_spans(text: str, sentences: Sequence[str]) -> list[tuple[int, int]]:
    """Character span of each sentence in `text` (found in order; a sentence not found verbatim,
    e.g. one a splitter rewrote, gets an empty span at the current position)."""
    spans, pos = [], 0
    for s in sentences:
        at = text.find(s, pos)
        if at < 0:
            spans.append((pos, pos))
            continue
        spans.append((at, at + len(s)))
        pos = at + len(s)
    return spans


def sentence_means(
    token_logp: np.ndarray,
    offsets: Sequence[tuple[int, int]],
    special: Sequence[int],
    spans: Sequence[tuple[int, int]],
) -> list[tuple[float | None, int]]:
    """Per sentence span, the mean log-likelihood of its tokens and how many there are (None, 0
    when it has no scored token, e.g. cut at the length limit). A token belongs to the first
    sentence that ends after the token starts (a space token between two sentences goes with
    the next one, as BPE attaches spaces to the following word); special tokens belong to none."""
    groups: list[list[int]] = [[] for _ in spans]
    n = min(len(token_logp), len(offsets))
    ends = [b for _, b in spans]
    for t in range(n):
        if special[t]:
            continue
        x = offsets[t][0]
        j = next((k for k, b in enumerate(ends) if x < b), len(spans) - 1)
        groups[j].append(t)
    return [(float(np.mean(token_logp[g])), len(g)) if g else (None, 0) for g in groups]


@register_detector("bartscore")
class BARTScore(ModelDetector):
    name = "bartscore"
    display_name = "BARTScore"
    default_checkpoint: ClassVar[str | None] = "facebook/bart-large-cnn"
    paper = "https://proceedings.neurips.cc/paper/2021/hash/e4d2b6e6fdeca3e60e0f1a62fee3d9dd-Abstract.html"
    description = (
        "Mean token log-likelihood of the summary given the (truncated) source under BART "
        "(Yuan et al. 2021, faithfulness direction s->h); inputs Moses-detokenized first."
    )
    default_batch_size = 8
    gpu_precision: ClassVar[str] = "float32"  # the authors' BARTScorer never casts the model
    KNOWN_DIFFERENCES: ClassVar[tuple[str, ...]] = (
        "Moses' detokenizer is a Python rewrite of its English rules (detokenizer.perl), not the "
        "Perl script the mosestokenizer package runs.",
        "A text with line breaks is detokenized line by line (the authors' texts are one line "
        "each).",
    )
    OPTIONS: ClassVar[dict[str, Opt]] = {
        "max_length": Opt(int, 1024, "source and summary tokens", minimum=8, faithful=1024),
        "detokenize": Opt(
            str,
            "moses",
            "detokenize inputs first, as the paper's pipeline (moses) or not (none)",
            choices=("moses", "none"),
            faithful="moses",
        ),
        "precision": Opt(
            str, "auto", "model dtype", choices=("auto", "float32", "float16", "bfloat16")
        ),
    }

    def _load(self) -> None:
        self.lm = Seq2SeqLogLikelihood(
            str(self.checkpoint), self.device, self.options["max_length"]
        )
        self.stats.max_input_tokens["source"] = self.lm.max_length

    def prepare(self, text: str) -> str:
        return moses_detokenize(text) if self.options["detokenize"] == "moses" else text

    def _score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        from evaluator.detectors.batching import Progress, unique

        keys = [
            (self.prepare(d), self.prepare(s)) for d, s in zip(documents, summaries, strict=True)
        ]
        uniq, where = unique(keys)
        self.stats.model_inputs += len(uniq)
        bar = Progress(len(uniq), "bartscore pairs", self.progress, unit="pair")
        tokens: list[np.ndarray] = []
        vals, flags = self.lm.score(
            [k[0] for k in uniq], [k[1] for k in uniq], self.batch_size, bar, tokens
        )
        bar.close()
        log = TruncationLog(len(keys))
        log.mark(list(range(len(keys))), [flags[w] for w in where])
        log.add_to(self.stats)
        per_pair = self.sentence_evidence([u[1] for u in uniq], tokens)
        self.set_evidence([per_pair[w] for w in where])
        return [float(vals[w]) for w in where]

    def sentence_evidence(
        self, summaries: Sequence[str], tokens: Sequence[np.ndarray]
    ) -> list[Evidence | None]:
        """Per (prepared) summary, its sentences with the mean log-likelihood of their tokens."""
        from evaluator.detectors.base import quiet_transformers
        from evaluator.detectors.text import split_sentences

        tok = self.lm.tokenizer
        if not getattr(tok, "is_fast", False):
            return [None] * len(summaries)  # no offsets: the tokens cannot be placed
        with quiet_transformers():
            enc = tok(
                list(summaries),
                truncation=False,
                return_offsets_mapping=True,
                return_special_tokens_mask=True,
            )
        out: list[Evidence | None] = []
        for i, summ in enumerate(summaries):
            sents = split_sentences(summ)
            if not sents:
                out.append(None)
                continue
            means = sentence_means(
                tokens[i],
                enc["offset_mapping"][i],
                enc["special_tokens_mask"][i],
                sentence_spans(summ, sents),
            )
            items = [evidence_item(s, m, tokens=n) for s, (m, n) in zip(sents, means, strict=True)]
            out.append(
                evidence(
                    "sentence",
                    items,
                    "token-weighted mean (the special tokens <s> and </s> count in the score too)",
                )
            )
        return out
