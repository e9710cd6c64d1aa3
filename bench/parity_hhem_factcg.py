"""Parity of the `hhem` and `factcg` detectors with their authors' own inference code, on the same
tiny random-weight checkpoints (tests/support/tiny_checkers.py). Neither authors' code is a
package on the index, so this is not a CI test: point it at local copies of their code.

Run: python bench/parity_hhem_factcg.py [--hhem-code DIR] [--factcg-repo DIR]
- DIR for HHEM: a folder holding the hub repository's `configuration_hhem_v2.py` and
  `modeling_hhem_v2.py` (vectara/hallucination_evaluation_model, e.g. its snapshot in the Hugging
  Face cache). Their HHEMv2ForSequenceClassification is built on the tiny foundation, given the
  checkpoint's `t5.*` tensors with load_state_dict, and its own `predict` scores the pairs.
- DIR for FactCG: a checkout of github.com/derenlei/FactCG. Their `Inferencer` scores the pairs
  (its hub loading redirected to the tiny checkpoint; NLTK's punkt is replaced by FactBoard's
  sentence splitter when its data is not installed, so chunk boundaries then come from the same
  sentences; word counts stay NLTK's).
Prints the largest score difference (target 1e-5), whether the chunks and best chunks agree, and
exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import sys
import tempfile
import types
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
TARGET = 1e-5


def _pairs() -> tuple[list[str], list[str]]:
    import random

    from tests.support.detectors import DOCS, SUMMARIES

    rng = random.Random(0)
    words = [
        "council",
        "library",
        "revenue",
        "patients",
        "drug",
        "mayor",
        "million",
        "percent",
        "study",
        "budget",
    ]
    long_doc = " ".join(
        f"Sentence {i} says the {rng.choice(words)} rose by {i} percent in {1990 + i}."
        for i in range(160)
    )
    one_sentence = " ".join(rng.choice(words) for _ in range(700)) + ". Short end."
    docs = [*DOCS, long_doc, one_sentence, long_doc, DOCS[0]]
    claims = [
        *SUMMARIES,
        "The revenue rose by 12 percent.",
        "The budget rose.",
        "x " * 1500,  # past FactCG's 2,048 tokens: cut from the right
        "A {braced} summary.",
    ]
    return docs, claims


def hhem_parity(code: Path, root: Path) -> bool:
    import torch
    from safetensors.torch import load_file

    from evaluator.detectors.runner import build_detector
    from tests.support.tiny_checkers import build_hhem

    paths = build_hhem(root / "hhem")
    pkg = root / "hhem_remote"
    pkg.mkdir()
    for name in ("configuration_hhem_v2.py", "modeling_hhem_v2.py"):
        shutil.copy(code / name, pkg / name)
    (pkg / "__init__.py").write_text("")
    sys.path.insert(0, str(root))
    modeling = importlib.import_module("hhem_remote.modeling_hhem_v2")
    config_mod = importlib.import_module("hhem_remote.configuration_hhem_v2")
    cls = modeling.HHEMv2ForSequenceClassification
    if not hasattr(cls, "all_tied_weights_keys"):
        cls.all_tied_weights_keys = {}  # transformers 5 reads it; HHEM ties nothing of its own
    cfg = config_mod.HHEMv2Config()
    cfg.foundation = paths["hhem-foundation"]
    theirs_model = cls(cfg)
    res = theirs_model.load_state_dict(
        load_file(paths["hhem"] + "/model.safetensors"), strict=False
    )
    left = [k for k in res.missing_keys if k != "t5.transformer.encoder.embed_tokens.weight"]
    if left or res.unexpected_keys:
        print(f"hhem: the authors' model did not take the weights: {left} {res.unexpected_keys}")
        return False
    theirs_model.t5.tie_weights()
    theirs_model.eval()
    docs, claims = _pairs()
    with torch.no_grad():
        theirs = [float(v) for v in theirs_model.predict(list(zip(docs, claims, strict=True)))]
    det = build_detector("hhem", checkpoint=paths["hhem"], device="cpu", batch_size=3)
    ours = det.score(docs, claims)
    diff = max(abs(a - b) for a, b in zip(ours, theirs, strict=True))
    print(f"hhem: {len(ours)} pairs, largest |ours - authors'| = {diff:.2e} (target {TARGET:g})")
    return diff <= TARGET


def factcg_parity(repo: Path, root: Path) -> bool:
    from evaluator.detectors.runner import build_detector
    from evaluator.detectors.text import split_sentences
    from tests.support.tiny_checkers import build_factcg

    path = build_factcg(root / "factcg")["factcg"]
    sys.path.insert(0, str(repo))
    stub = types.ModuleType("factcg.grounding_model")  # training-only (pytorch_lightning)
    stub.GroundingModel = None  # type: ignore[attr-defined]
    sys.modules["factcg.grounding_model"] = stub
    inference = importlib.import_module("factcg.inference")
    import nltk

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
    except LookupError:
        from nltk.tokenize import NLTKWordTokenizer

        print("factcg: NLTK punkt is not installed: sentences from FactBoard's splitter")
        inference.sent_tokenize = lambda t: list(split_sentences(t))
        inference.nltk.word_tokenize = lambda t: NLTKWordTokenizer().tokenize(t)
    import transformers

    real = (
        transformers.AutoConfig.from_pretrained,
        transformers.AutoTokenizer.from_pretrained,
        transformers.AutoModelForSequenceClassification.from_pretrained,
    )

    def tokenizer(_id: str, **kw: object) -> object:
        tok = real[1](path)
        tok.eos_token = "[SEP]"  # DeBERTa-v3's; the authors pad with it
        return tok

    try:
        transformers.AutoConfig.from_pretrained = lambda _id, **kw: real[0](path, num_labels=2)
        transformers.AutoTokenizer.from_pretrained = tokenizer
        transformers.AutoModelForSequenceClassification.from_pretrained = lambda _id, **kw: real[2](
            path, config=kw.get("config")
        )
        theirs_inf = inference.Inferencer(batch_size=4, verbose=False)
    finally:
        (
            transformers.AutoConfig.from_pretrained,
            transformers.AutoTokenizer.from_pretrained,
            transformers.AutoModelForSequenceClassification.from_pretrained,
        ) = real
    docs, claims = _pairs()
    theirs, best = theirs_inf.eval(docs, claims)
    det = build_detector("factcg", checkpoint=path, device="cpu", batch_size=4)
    ours, ev = det.score_with_evidence(docs, claims)
    same_chunks = all(tuple(theirs_inf.chunking_src(d)) == det.chunks(d) for d in docs)
    same_best = [e["items"][0]["extra"]["chunk"] for e in ev if e] == [int(b) for b in best]
    diff = max(abs(a - float(b)) for a, b in zip(ours, theirs.tolist(), strict=True))
    print(
        f"factcg: {len(ours)} pairs ({sum(len(det.chunks(d)) for d in docs)} chunks, "
        f"{det.stats.inputs_truncated} inputs cut at 2,048 tokens), largest |ours - authors'| = "
        f"{diff:.2e} (target {TARGET:g}); same chunks: {same_chunks}; same best chunks: "
        f"{same_best}"
    )
    return diff <= TARGET and same_chunks and same_best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hhem-code", type=Path, help="folder with the hub's modeling_hhem_v2.py")
    ap.add_argument("--factcg-repo", type=Path, help="a checkout of derenlei/FactCG")
    args = ap.parse_args()
    if not args.hhem_code and not args.factcg_repo:
        ap.error("give --hhem-code DIR and/or --factcg-repo DIR")
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        if args.hhem_code:
            ok &= hhem_parity(args.hhem_code, Path(tmp))
        if args.factcg_repo:
            ok &= factcg_parity(args.factcg_repo, Path(tmp))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
