"""BARTScore as its authors run it (neulab/BARTScore): inputs detokenized by Moses' English
detokenizer (SUM/score.py -> SUM/utils.py `detokenize`, `MosesDetokenizer('en')` of the
`mosestokenizer` package), then `BARTScorer.score`. FactBoard's Python rewrite of the
detokenizer is compared with the Perl script itself (through mosestokenizer), on hand-written
tokenized text and on the real QAGS and FRANK texts; the detector is compared with the authors'
scorer (its copy in the `longdocfactscore` package) on the same tiny BART. The per-sentence
evidence is re-computed from one plain forward pass."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evaluator.detectors.bartscore import moses_detokenize
from evaluator.detectors.runner import build_detector
from tests.support.detectors import DOCS, SUMMARIES, build_tiny_models

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# word-tokenized text, as the authors' data files hold it (SUM/README.md: "all texts tokenized")
TOKENIZED = [
    "the u.s. , he said . `` we do n't know '' , said the man 's wife .",
    "prices rose 12 % to $ 4.5 million ( about £ 3m ) [ sic ] ; ok : yes ?",
    "he said \" hello \" and ' bye ' . the jones ' house is big . it 's the players ' fault",
    "a @-@ b &amp; c &lt; d &gt; e &quot; f &apos; g &#91; h &#93;",
    "“ curly ” quotes „ here “ and ¿ que ? ¡ si !",
    "东京 大学 is in 日本 .",
    "'tis the season , rock 'n' roll , the 90s ' music",
    "Plain text as written: $4.5 million (12%). \"Quoted\" words; O'Neil's dog.",
    "  double  spaces   here ",
    "<p>a tag line</p>",
    "€ 5 , ¥ 3 , ₹ 9 ; a \\ b",
    "`` nested ` quotes ' ''",
    "",
]


def _need(*modules: str) -> None:
    for m in modules:
        try:
            __import__(m)
        except ImportError:
            msg = f"{m} is not installed (pip install -r requirements-detectors.txt)"
            if os.environ.get("CI"):
                pytest.fail(msg)
            pytest.skip(msg)


@pytest.fixture(scope="module")
def perl_detokenize():
    _need("mosestokenizer")
    from mosestokenizer import MosesDetokenizer

    detok = MosesDetokenizer("en")
    # SUM/utils.py: detokenize(text) = detokenizer(text.split(" "))
    yield lambda text: detok(text.split(" "))
    detok.close()


def _real_texts() -> list[str]:
    from tests.conftest import SHARED_BENCHMARKS

    out: list[str] = []
    qags = SHARED_BENCHMARKS / "qags"
    for name in ("mturk_cnndm.jsonl", "mturk_xsum.jsonl"):
        if (qags / name).is_file():
            for line in (qags / name).read_text().splitlines()[:60]:
                r = json.loads(line)
                out.append(r["article"])
                out.append(" ".join(s["sentence"] for s in r["summary_sentences"]))
    frank = SHARED_BENCHMARKS / "frank" / "frank_articles_summaries_reconstructed.jsonl"
    if frank.is_file():
        for line in frank.read_text().splitlines()[:60]:
            r = json.loads(line)
            out += [r["article"], r["reference"]]
    return out


def test_moses_detokenize_equals_the_perl_script(perl_detokenize) -> None:
    changed = 0
    for text in TOKENIZED:
        assert moses_detokenize(text) == perl_detokenize(text), text
        changed += moses_detokenize(text) != text
    assert changed >= 9  # the cases exercise the rules, not only the identity
    lines = [ln for t in _real_texts() for ln in t.split("\n")]
    for line in lines:
        assert moses_detokenize(line) == perl_detokenize(line), line[:200]
    if lines:
        assert sum(moses_detokenize(ln) != ln for ln in lines) > len(lines) // 10


def test_moses_detokenize_rules() -> None:
    """What the script does to word-tokenized English (read from detokenizer.perl)."""
    assert moses_detokenize("the u.s. , he said .") == "the u.s., he said."
    assert moses_detokenize("it 's John 's") == "it's John's"
    assert moses_detokenize("$ 5 ( x )") == "$5 (x)"
    assert moses_detokenize('" a " b " c "') == '"a" b "c"'
    assert moses_detokenize("the Jones ' house") == "the Jones' house"
    assert moses_detokenize("a @-@ b &amp; c") == "a-b & c"
    assert moses_detokenize("line one .\nline two .") == "line one.\nline two."
    plain = "Mayor Maria Okafor said construction starts in June."
    assert moses_detokenize(plain) == plain


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    _need("torch", "transformers", "tokenizers")
    return build_tiny_models(tmp_path_factory.mktemp("tiny-bartscore"))


def test_bartscore_scores_as_the_authors_pipeline(tiny, perl_detokenize) -> None:
    _need("longdocfactscore")
    import longdocfactscore.ldfacts as ldf  # its BARTScore is neulab's BARTScorer, copied

    ref = ldf.BARTScore(device="cpu", checkpoint=tiny["bart"])
    docs = [TOKENIZED[0], TOKENIZED[1], *DOCS]
    sums = [TOKENIZED[2], "the man 's wife said `` yes '' .", *SUMMARIES]

    def detok(text: str) -> str:  # the script takes one line (a known difference: line by line)
        return "\n".join(perl_detokenize(line) for line in text.split("\n"))

    expected = ref.bart_score([detok(d) for d in docs], [detok(s) for s in sums], batch_size=4)
    det = build_detector("bartscore", checkpoint=tiny["bart"], device="cpu", batch_size=3)
    assert det.deviations() == []
    np.testing.assert_allclose(det.score(docs, sums), expected, atol=1e-5, rtol=0)
    plain = build_detector(
        "bartscore", checkpoint=tiny["bart"], device="cpu", options={"detokenize": "none"}
    )
    assert plain.deviations() == ["detokenize=none"]
    got_plain = plain.score(docs, sums)
    np.testing.assert_allclose(got_plain, ref.bart_score(docs, sums, batch_size=4), atol=1e-5)
    assert not np.allclose(got_plain[:2], expected[:2], atol=1e-4)  # detokenizing matters
    assert got_plain[2:] == pytest.approx(expected[2:], abs=1e-5)  # plain text: unchanged


def test_bartscore_sentence_evidence_splits_the_token_log_likelihoods(tiny) -> None:
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from evaluator.detectors.text import split_sentences

    det = build_detector("bartscore", checkpoint=tiny["bart"], device="cpu", batch_size=2)
    scores, ev = det.score_with_evidence(DOCS, SUMMARIES)
    tok = AutoTokenizer.from_pretrained(tiny["bart"])
    model = AutoModelForSeq2SeqLM.from_pretrained(tiny["bart"]).eval()
    for doc, summ, score, e in zip(DOCS, SUMMARIES, scores, ev, strict=True):
        src = tok(doc, return_tensors="pt")
        tgt = tok(summ, return_offsets_mapping=True)
        labels = torch.tensor([tgt["input_ids"]])
        with torch.no_grad():
            logits = model(**src, labels=labels).logits[0]
        logp = torch.log_softmax(logits, -1).gather(-1, labels[0].unsqueeze(-1))[:, 0].numpy()
        assert score == pytest.approx(float(logp.mean()), abs=1e-5)
        assert e is not None and e["unit"] == "sentence"
        sents = split_sentences(summ)
        assert [it["text"] for it in e["items"]] == list(sents)
        ends = []
        pos = 0
        for s in sents:
            pos = summ.index(s, pos) + len(s)
            ends.append(pos)
        # each token but <s> and </s> goes to the first sentence ending after it starts
        owner = [
            min([j for j, b in enumerate(ends) if x < b] or [len(ends) - 1])
            for x, _ in tgt["offset_mapping"][1:-1]
        ]
        covered = 0
        for j, it in enumerate(e["items"]):
            mine = [t + 1 for t, o in enumerate(owner) if o == j]
            assert it["extra"]["tokens"] == len(mine) > 0
            assert it["score"] == pytest.approx(float(logp[mine].mean()), abs=1e-5)
            covered += len(mine)
        assert covered == len(logp) - 2  # every token but <s> and </s> is in a sentence


@pytest.mark.parametrize("name", ["bartscore", "longdocfactscore", "qags"])
def test_float32_on_a_gpu_float16_a_labelled_variant(name: str, tmp_path: Path) -> None:
    from evaluator.detectors.runner import default_model_name
    from tests.support.tiny_summac import punkt_installed, write_punkt_tab

    with punkt_installed(write_punkt_tab(tmp_path)):  # LongDocFACTScore splits with punkt
        _float32_on_a_gpu(name, default_model_name)


def _float32_on_a_gpu(name: str, default_model_name: Any) -> None:
    det = build_detector(name, checkpoint="unused", device="cpu")
    assert det.gpu_precision == "float32" and det.deviations() == []
    assert det.KNOWN_DIFFERENCES  # what still differs is said
    half = build_detector(name, checkpoint="unused", device="cpu", options={"precision": "float16"})
    assert half.deviations() == ["precision=float16"]
    assert default_model_name(half).endswith("[variant: precision=float16]")


def test_baselines_record_what_differs_from_the_papers_rows() -> None:
    from evaluator.detectors.runner import default_model_name

    rouge = build_detector("rouge-1")
    assert rouge.score(["The cat sat on the mat."], ["The cat sat."]) == [1.0]
    fid = rouge.describe()["fidelity"]
    assert fid["faithful"] and "reference-free" in fid["known_differences"][0]
    assert default_model_name(rouge) == "ROUGE-1"
    bert = build_detector("bertscore", checkpoint="unused", device="cpu", options={"num_layers": 2})
    assert bert.deviations() == [] and bert.describe()["fidelity"]["known_differences"]
