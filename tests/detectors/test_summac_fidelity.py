"""SummaC as its authors run it (tingofurro/summac, summac/model_summac.py): the segmentation and
its filters, the defaults that are the authors' setup (and the named variants that are not), the
released SummaC-Conv weights, empty summaries, and the per-sentence evidence."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evaluator.detectors.base import DetectorError
from evaluator.detectors.runner import build_detector, default_model_name
from evaluator.detectors.summac import segments, split_text, zs_sentence_scores
from evaluator.detectors.summac_conv import (
    PERCENTILE_BINS,
    RELEASED_CONV_FILE,
    conv_histogram,
    conv_probability,
    conv_rows,
)
from tests.support.detectors import DOCS, SUMMARIES, build_tiny_models
from tests.support.tiny_summac import punkt_installed, write_punkt_tab

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _released() -> Path:
    from tests.conftest import SHARED_BENCHMARKS

    path = SHARED_BENCHMARKS.parent / "checkpoints" / "summac" / RELEASED_CONV_FILE
    if not path.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"SummaC-Conv's released weights not found at {path}: CI has ../shared")
        pytest.skip(f"SummaC-Conv's released weights not found at {path}")
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    pytest.importorskip("torch")
    return build_tiny_models(tmp_path_factory.mktemp("tiny-summac"))


@pytest.fixture
def punkt(tmp_path: Path):
    with punkt_installed(write_punkt_tab(tmp_path / "nltk_data")):
        yield


@pytest.fixture
def no_conv_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No released weights anywhere but where a test puts them."""
    monkeypatch.delenv("FACTBOARD_SUMMAC_CONV_WEIGHTS", raising=False)
    monkeypatch.setenv("FACTBOARD_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "summac"


# --------------------------------------------------------------------------------------------
# segmentation: SummaCImager.split_text and build_chunk_dataset


def test_sentences_of_ten_characters_or_fewer_are_dropped(punkt: None) -> None:
    # split_sentences: `[sent for sent in sentences if len(sent) > 10]`
    text = "Ten chars. Eleven chr. It rained on the zq. river all day."
    assert split_text(text, "sentence") == ["Eleven chr.", "It rained on the zq. river all day."]
    assert split_text(text, "sentence", min_chars=0)[0] == "Ten chars."
    # split_2sents: every sentence with the next one, the last one alone
    assert split_text("First sentence here. Second one here. Third one here.", "2sents") == [
        "First sentence here. Second one here.",
        "Second one here. Third one here.",
        "Third one here.",
    ]
    # split_paragraphs: blank lines if any, else line breaks; stripped, longer than 10
    assert split_text("Para one is long.\n\nshort\n\n Para two is long. ", "paragraph") == [
        "Para one is long.",
        "Para two is long.",
    ]
    assert split_text("Line one is long.\nLine two is long.", "paragraph") == [
        "Line one is long.",
        "Line two is long.",
    ]
    # document: the text as it is
    assert split_text(" whole \n text ", "document") == [" whole \n text "]
    with pytest.raises(DetectorError, match="unknown SummaC granularity 'words'"):
        split_text("x", "words")


def test_documents_are_cut_at_100_blocks_and_granularity_applies_to_both(punkt: None) -> None:
    doc = " ".join(f"Sentence number {i} is here." for i in range(130))
    summ = "A summary sentence here. Another summary sentence.\n\nA second paragraph here."
    blocks, sents = segments(doc, summ)
    assert len(blocks) == 100 and blocks[-1] == "Sentence number 99 is here."
    assert sents == (
        "A summary sentence here.",
        "Another summary sentence.",
        "A second paragraph here.",
    )
    assert len(segments(doc, summ, max_doc_blocks=0)[0]) == 130
    # one granularity for both texts (the authors' `grans`), or "document-summary"
    assert segments(doc, summ, "paragraph")[1] == (
        "A summary sentence here. Another summary sentence.",
        "A second paragraph here.",
    )
    assert segments(doc, summ, "document-sentence") == ((doc,), sents)
    # an empty summary, or one with only short sentences, has no sentence at all
    assert segments(doc, "")[1] == () and segments(doc, "Yes. No way.")[1] == ()


# --------------------------------------------------------------------------------------------
# the defaults are the authors' setup; FactBoard's own setup is a named variant


def test_defaults_are_faithful_and_the_old_setup_is_a_named_variant(
    tiny: dict[str, str], punkt: None, no_conv_cache: Path
) -> None:
    zs = build_detector("summac-zs", checkpoint=tiny["nli"], device="cpu")
    assert zs.options["splitter"] == "nltk" and zs.options["min_chars"] == 10
    assert zs.options["max_doc_blocks"] == 100 and zs.options["max_length"] == 500
    assert zs.options["truncation"] == "longest_first" and zs.options["granularity"] == "sentence"
    assert type(zs).gpu_precision == "float16"  # model.half() on CUDA
    assert zs.deviations() == []
    fid = zs.fidelity()
    assert fid["faithful"] and fid["splitter"] == "nltk-punkt" and fid["known_differences"]
    assert default_model_name(zs) == "SummaC-ZS (nli)"
    old = {
        "splitter": "pysbd",
        "min_chars": 0,
        "max_doc_blocks": 0,
        "max_length": 512,
        "truncation": "only_first",
    }
    legacy = build_detector("summac-zs", checkpoint=tiny["nli"], device="cpu", options=old)
    assert legacy.deviations() == [f"{k}={v}" for k, v in old.items()]
    assert default_model_name(legacy).startswith("SummaC-ZS (nli) [variant: splitter=pysbd, ")
    conv = build_detector("summac-conv", options={"conv_weights": "dev"})
    assert conv.needs_fit and conv.deviations() == ["conv_weights=dev"]


def test_a_faithful_run_without_punkt_data_is_labelled(tiny: dict[str, str]) -> None:
    with punkt_installed(None):
        zs = build_detector("summac-zs", checkpoint=tiny["nli"], device="cpu")
        assert zs.deviations() == ["splitter=pysbd"]
        assert zs.fidelity()["splitter"] == "pysbd (punkt data not found)"
        assert default_model_name(zs) == "SummaC-ZS (nli) [variant: splitter=pysbd]"
        zs.score(DOCS[:1], SUMMARIES[:1])
        assert "sentence splitter: pysbd (punkt data not found)" in zs.stats.notes


# --------------------------------------------------------------------------------------------
# the released SummaC-Conv weights


def test_released_weights_load_from_the_authors_file(no_conv_cache: Path, punkt: None) -> None:
    import torch

    path = _released()
    det = build_detector("summac-conv", options={"conv_weights": str(path)})
    sd = torch.load(path, map_location="cpu", weights_only=True)
    st = det.state
    assert st is not None and not det.needs_fit
    np.testing.assert_array_equal(st["conv_weight"], sd["mlp.weight"].reshape(-1).numpy())
    assert st["conv_bias"] == float(sd["mlp.bias"][0])
    np.testing.assert_array_equal(st["final_weight"], sd["layer_final.weight"].numpy())
    np.testing.assert_array_equal(st["final_bias"], sd["layer_final.bias"].numpy())
    assert st["bins"] == list(PERCENTILE_BINS) and st["nli_labels"] == "e"
    assert st["source"]["released"] is True
    assert det.deviations() == []  # the released file, given by path, is the authors' setup

    # found without an option: the environment variable, or the cache folder
    os.environ["FACTBOARD_SUMMAC_CONV_WEIGHTS"] = str(path)
    try:
        assert build_detector("summac-conv").state == st
    finally:
        del os.environ["FACTBOARD_SUMMAC_CONV_WEIGHTS"]
    no_conv_cache.mkdir(parents=True)
    shutil.copy(path, no_conv_cache / RELEASED_CONV_FILE)
    det = build_detector("summac-conv")
    assert det.state == st and det.deviations() == []

    # weights that do not fit the options, and files that are not weights
    with pytest.raises(DetectorError, match=r"mlp.weight \(1, 23\) \(expected \(1, 10\)\)"):
        build_detector("summac-conv", options={"conv_weights": str(path), "bins": "even10"})
    with pytest.raises(DetectorError, match="no such file"):
        build_detector("summac-conv", options={"conv_weights": str(path) + ".missing"})


def test_other_weight_files_are_refused_or_named(tmp_path: Path, no_conv_cache: Path) -> None:
    import torch

    bad = tmp_path / "other.bin"
    torch.save({"weight": torch.zeros(3)}, bad)
    with pytest.raises(DetectorError, match="is not SummaC-Conv's state dict: keys mlp.weight"):
        build_detector("summac-conv", options={"conv_weights": str(bad)})
    bad.write_bytes(b"not a pickle")
    with pytest.raises(DetectorError, match="is not a PyTorch state dict"):
        build_detector("summac-conv", options={"conv_weights": str(bad)})
    # weights of the same shape but not the released file: a variant named by its file
    own = tmp_path / "mine.bin"
    torch.manual_seed(1)
    torch.save(
        {
            "mlp.weight": torch.randn(1, 23),
            "mlp.bias": torch.randn(1),
            "layer_final.weight": torch.randn(2, 3),
            "layer_final.bias": torch.randn(2),
        },
        own,
    )
    det = build_detector("summac-conv", options={"conv_weights": str(own)})
    assert det.state is not None and det.state["source"]["released"] is False
    assert "conv_weights=mine.bin" in det.deviations()


def test_without_the_released_file_the_error_says_what_to_pass(
    tiny: dict[str, str], no_conv_cache: Path
) -> None:
    det = build_detector("summac-conv", checkpoint=tiny["nli"], device="cpu")  # loads nothing
    assert det.state is None and not det.needs_fit
    with pytest.raises(DetectorError) as err:
        det.score(DOCS[:1], SUMMARIES[:1])
    msg = str(err.value)
    assert f"--option conv_weights=/path/to/{RELEASED_CONV_FILE}" in msg
    assert "github.com/tingofurro/summac" in msg and "FACTBOARD_SUMMAC_CONV_WEIGHTS" in msg
    assert "conv_weights=dev" in msg and str(no_conv_cache) in msg
    assert not det._loaded  # it failed before loading the NLI model
    # trained by hand instead, the detector is no longer the authors' setup and says so
    det.fit(DOCS * 2, SUMMARIES + [d.split(". ")[0] + "." for d in DOCS], [0, 0, 0, 1, 1, 1])
    assert "conv_weights=dev" in det.deviations()
    assert all(0.0 <= v <= 1.0 for v in det.score(DOCS, SUMMARIES))


# --------------------------------------------------------------------------------------------
# empty summaries and evidence, end to end on the tiny NLI model


def test_empty_summaries_score_as_the_authors_zero_image(
    tiny: dict[str, str], punkt: None, no_conv_cache: Path
) -> None:
    docs = [DOCS[0]] * 3 + [""]
    sums = ["", "Yes. No way.", SUMMARIES[0], SUMMARIES[0]]
    zs = build_detector("summac-zs", checkpoint=tiny["nli"], device="cpu")
    scores, ev = zs.score_with_evidence(docs, sums)
    # build_image returns np.zeros((3, 1, 1)): max e - max c = 0, never NaN
    assert scores[0] == scores[1] == scores[3] == 0.0 and scores[2] != 0.0
    assert zs.stats.undefined == 0
    assert ev[0] is not None and ev[0]["items"] == [] and "zero image" in ev[0]["note"]

    conv = build_detector(
        "summac-conv",
        checkpoint=tiny["nli"],
        device="cpu",
        options={"conv_weights": str(_released())},
    )
    got = conv.score(docs, sums)
    # the zero image's one column: a histogram with its single value in the first bin
    h = np.zeros((1, 10, 23))
    h[0, 0, 0] = 1.0
    expected = float(conv_probability(h, conv.state)[0])  # type: ignore[arg-type]
    assert got[0] == pytest.approx(expected, abs=1e-12) and got[1] == got[3] == got[0]


def test_evidence_is_per_summary_sentence_with_the_best_block(
    tiny: dict[str, str], punkt: None, no_conv_cache: Path
) -> None:
    zs = build_detector("summac-zs", checkpoint=tiny["nli"], device="cpu")
    scores, ev = zs.score_with_evidence(DOCS, SUMMARIES)
    pairs = zs.pair_images(DOCS, SUMMARIES)
    for score, e, (img, blocks, sents) in zip(scores, ev, pairs, strict=True):
        assert e is not None and e["unit"] == "sentence" and e["aggregate"] == "mean"
        assert [it["text"] for it in e["items"]] == list(sents)
        per = zs_sentence_scores(img)
        assert [it["score"] for it in e["items"]] == pytest.approx(per.tolist(), abs=1e-12)
        assert np.mean([it["score"] for it in e["items"]]) == pytest.approx(score, abs=1e-12)
        for j, it in enumerate(e["items"]):
            col = img[0, :, j] - img[1, :, j]
            assert it["support"] == blocks[int(np.argmax(col))]
            assert it["extra"]["support_score"] == pytest.approx(col.max(), abs=1e-12)

    conv = build_detector(
        "summac-conv",
        checkpoint=tiny["nli"],
        device="cpu",
        options={"conv_weights": str(_released())},
    )
    long_summary = " ".join(f"The library has {i} new shelves." for i in range(12))
    docs, sums = [*DOCS, DOCS[0]], [*SUMMARIES, long_summary]
    scores, ev = conv.score_with_evidence(docs, sums)
    pairs = conv.pair_images(docs, sums)
    for score, e, (img, blocks, sents) in zip(scores, ev, pairs, strict=True):
        assert e is not None and len(e["items"]) == len(sents)
        h = conv_histogram(img, PERCENTILE_BINS)[None]
        rows = conv_rows(h, conv.state)[0]  # type: ignore[arg-type]
        for j, it in enumerate(e["items"]):
            assert it["support"] == blocks[int(np.argmax(img[0, :, j]))]
            if j < 10:
                assert it["score"] == pytest.approx(rows[j], abs=1e-12)
            else:  # the convolution looks at the first 10 sentences only
                assert it["score"] is None and it["extra"]["in_model"] is False
        assert score == pytest.approx(float(conv_probability(h, conv.state)[0]), abs=1e-12)  # type: ignore[arg-type]
    assert len(ev[-1]["items"]) == 12  # type: ignore[index]


def test_the_released_weights_are_downloaded_once_and_checked(
    no_conv_cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Online and without a copy, the file comes from the authors' repository (here a local
    server standing in for it) into the cache folder; a file whose sha256 differs is refused."""
    import http.server
    import threading

    from evaluator.detectors import summac_conv as summac

    served = tmp_path / "served"
    served.mkdir()
    shutil.copy(_released(), served / RELEASED_CONV_FILE)
    (served / "tampered.bin").write_bytes((served / RELEASED_CONV_FILE).read_bytes() + b"x")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, directory=str(served), **kw)

        def log_message(self, *a: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        monkeypatch.setenv("HF_HUB_OFFLINE", "0")
        monkeypatch.setattr(summac, "RELEASED_CONV_URL", f"{base}/tampered.bin")
        with pytest.raises(DetectorError, match="do not match their sha256"):
            summac.fetch_released_conv()
        assert not (no_conv_cache / RELEASED_CONV_FILE).exists()
        monkeypatch.setattr(summac, "RELEASED_CONV_URL", f"{base}/{RELEASED_CONV_FILE}")
        got = summac.fetch_released_conv()
        assert got == no_conv_cache / RELEASED_CONV_FILE
        assert got.read_bytes() == _released().read_bytes()
        monkeypatch.setattr(summac, "RELEASED_CONV_URL", f"{base}/gone.bin")
        assert summac.fetch_released_conv() == got  # the cached copy: no second download
    finally:
        httpd.shutdown()
        httpd.server_close()
