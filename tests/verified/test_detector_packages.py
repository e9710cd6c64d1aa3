"""A detector published as a Python package joins FactBoard through the entry-point group
`factboard.detectors`: installed (here: a package and its dist-info on the path, built in the
test), `python -m evaluator run --detector NAME` finds it, and the run records the package."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import evaluator
from evaluator.detectors import registry
from evaluator.detectors.build import build_detector
from evaluator.store import runs

REPO = Path(__file__).resolve().parents[2]

MODULE = '''
"""A detector package: a function and a class."""
import re

WORD = re.compile(r"\\w+")


def score(documents, summaries):
    out = []
    for d, s in zip(documents, summaries):
        vocab = set(WORD.findall(d.lower()))
        words = WORD.findall(s.lower())
        out.append(sum(w in vocab for w in words) / len(words) if words else 1.0)
    return out


class LengthRatio:
    def __init__(self, cap=1.0):
        self.cap = cap

    def score(self, documents, summaries):
        return [min(self.cap, len(s) / max(1, len(d))) for d, s in zip(documents, summaries)]
'''


def make_package(where: Path) -> Path:
    """`overlap-detector` 1.2.3: module overlap_detector with two entry points. Returns the
    folder to put on the path."""
    (where / "overlap_detector").mkdir(parents=True)
    (where / "overlap_detector" / "__init__.py").write_text(MODULE)
    info = where / "overlap_detector-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: overlap-detector\nVersion: 1.2.3\n"
    )
    (info / "entry_points.txt").write_text(
        textwrap.dedent(
            """\
            [factboard.detectors]
            word-overlap = overlap_detector:score
            length-ratio = overlap_detector:LengthRatio
            """
        )
    )
    return where


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The package on sys.path for this test; the registry as it was afterwards."""
    site = make_package(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    before = registry.DETECTORS.snapshot()
    packages = dict(registry.DETECTORS.packages)
    yield site
    registry.DETECTORS.restore(before)
    registry.DETECTORS.packages = packages
    sys.modules.pop("overlap_detector", None)


def test_the_cli_finds_an_installed_detector_by_its_entry_point(
    installed: Path, demo_root: Path
) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(installed), str(REPO)]),
        "FACTBOARD_DATA": str(demo_root),
        "HF_HUB_OFFLINE": "1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "evaluator", "run", "--detector", "word-overlap"]
        + ["--benchmark", "demo"],
        capture_output=True,
        text=True,
        cwd=demo_root.parent,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (rec,) = [r for r in runs.list_runs(demo_root).runs if r.config.detector == "word-overlap"]
    assert rec.origin == "evaluated"
    assert rec.config.extra["package"] == {
        "name": "overlap-detector",
        "version": "1.2.3",
        "entry_point": "word-overlap = overlap_detector:score",
    }
    assert rec.config.extra["returns"] == "scores"
    # the same numbers as evaluate() with the package's function
    from overlap_detector import score  # type: ignore[import-not-found]

    mine = evaluator.evaluate(score, "demo", root=demo_root, progress=False)
    assert [r.model_dump() for r in rec.results] == [r.model_dump() for r in mine.results]


def test_a_class_entry_point_takes_options_and_the_names_are_listed(installed: Path) -> None:
    assert {"word-overlap", "length-ratio"} <= set(registry.detector_names())
    det = build_detector("length-ratio", options={"cap": 0.5})
    assert det.name == "length-ratio" and det.target.cap == 0.5
    assert det.score(["a long document"], ["a very long summary indeed"]) == [0.5]
    assert registry.detector_package("length-ratio") == {
        "name": "overlap-detector",
        "version": "1.2.3",
        "entry_point": "length-ratio = overlap_detector:LengthRatio",
    }
    assert registry.detector_package("summac-zs") is None  # FactBoard's own


def test_a_package_installed_after_the_registry_was_read_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry.detector_names()  # the registry is read before the package is there
    before = registry.DETECTORS.snapshot()
    try:
        monkeypatch.syspath_prepend(str(make_package(tmp_path / "later")))
        fn = registry.get_detector("word-overlap")
        assert fn().score(["the cat sat"], ["the cat"]) == [1.0]
    finally:
        registry.DETECTORS.restore(before)
        sys.modules.pop("overlap_detector", None)
