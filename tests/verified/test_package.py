"""`pip install .`: a wheel built offline from the checkout carries the engine with its data
files, the extras from the requirements files, and a `factboard` command equal to
`python -m evaluator`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = ["pyproject.toml", "README.md", "evaluator", "explorer", "views"]


def _requirements(name: str) -> list[str]:
    lines = (REPO / name).read_text(encoding="utf-8").splitlines()
    return [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from a copy of the checkout (setuptools writes its build folders beside
    the sources)."""
    src = tmp_path_factory.mktemp("src")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCES:
        p = REPO / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=ignore)
        else:
            shutil.copy2(p, src / name)
    for req in REPO.glob("requirements*.txt"):
        shutil.copy2(req, src / req.name)
    out = tmp_path_factory.mktemp("dist")
    cmd = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
    done = subprocess.run(
        [*cmd, "--no-index", str(src), "-w", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert done.returncode == 0, done.stderr
    (whl,) = out.glob("factboard-*.whl")
    return whl


def _metadata(whl: Path) -> tuple[list[str], str]:
    with zipfile.ZipFile(whl) as z:
        names = z.namelist()
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        return names, z.read(meta).decode()


def test_the_wheel_carries_the_engine_and_its_data_files(wheel: Path) -> None:
    names, _ = _metadata(wheel)
    for path in (
        "evaluator/__init__.py",
        "evaluator/cli/main.py",
        "evaluator/interop/schemas/eval.schema.json",
        "evaluator/interop/schemas/instance_level_eval.schema.json",
        "evaluator/interop/schemas/LICENSE",
        "explorer/queries/__init__.py",
        "views/leaderboard.py",
    ):
        assert path in names, path
    assert not any(n.startswith("tests/") for n in names)
    # every vendored file in the engine's source folders is in the wheel
    for f in (REPO / "evaluator").rglob("*"):
        if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
            assert f.relative_to(REPO).as_posix() in names, f


def test_dependencies_and_extras_mirror_the_requirements_files(wheel: Path) -> None:
    from packaging.requirements import Requirement

    _, meta = _metadata(wheel)
    lines = [line for line in meta.splitlines() if line.startswith("Requires-Dist: ")]
    got: dict[str | None, set[str]] = {}
    for line in lines:
        req = Requirement(line.removeprefix("Requires-Dist: "))
        extra = None
        if req.marker is not None:
            extra = str(req.marker).split("==")[1].strip().strip("\"'")
        req.marker = None
        got.setdefault(extra, set()).add(str(req))

    def want(name: str) -> set[str]:
        return {str(Requirement(r)) for r in _requirements(name)}

    assert got[None] == want("requirements.txt")
    assert got["detectors"] == want("requirements-detectors.txt")
    assert "torch==2.13.0" in got["detectors"]  # pinned exactly, as the file pins it
    assert got["llm"] == want("requirements-llm.txt")
    assert got["ray"] == want("requirements-ray.txt")
    for extra in ("detectors", "llm", "ray"):
        assert f"Provides-Extra: {extra}" in meta


def test_the_factboard_command_is_python_m_evaluator(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index"]
        + ["--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert done.returncode == 0, done.stderr
    script = target / "bin" / "factboard"
    assert script.is_file()
    env = {**os.environ, "PYTHONPATH": str(target)}
    outside = tmp_path / "elsewhere"  # not the checkout: the installed package answers
    outside.mkdir()

    def run(*cmd: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(cmd), capture_output=True, text=True, cwd=outside, env=env, timeout=60
        )

    via_script = run(sys.executable, str(script), "benchmarks", "--help")
    via_module = run(sys.executable, "-m", "evaluator", "benchmarks", "--help")
    assert via_script.returncode == via_module.returncode == 0, via_script.stderr
    assert via_script.stdout.split("\n", 1)[1] == via_module.stdout.split("\n", 1)[1]
    where = run(sys.executable, "-c", "import evaluator; print(evaluator.__file__)")
    assert Path(where.stdout.strip()).is_relative_to(target)
    # the schemas load from the installed package
    schema = run(
        sys.executable,
        "-c",
        "from evaluator.interop.eee import SCHEMA_DIR; print(SCHEMA_DIR)",
    )
    assert schema.returncode == 0, schema.stderr
    assert (Path(schema.stdout.strip()) / "eval.schema.json").is_file()

    # an installed package keeps its files in the user's data folder, never in site-packages
    home = tmp_path / "home"
    env.update(HOME=str(home), XDG_DATA_HOME="")
    for key in ("FACTBOARD_DATA", "FACTBOARD_SUBMISSIONS"):
        env.pop(key, None)
    roots = run(
        sys.executable,
        "-c",
        "from evaluator.store import layout; print(layout.data_root()); "
        "print(layout.submissions_root())",
    )
    data, subs = (Path(p) for p in roots.stdout.split())
    assert data == home / ".local" / "share" / "factboard" / "data"
    assert subs == home / ".local" / "share" / "factboard" / "submissions"
    empty = run(sys.executable, str(script), "runs")
    assert empty.returncode == 0, empty.stderr
    assert f"no runs in the data root {data} (FactBoard is installed as a package" in empty.stderr
    assert "set FACTBOARD_DATA to use another folder" in empty.stderr
    assert not (target / "leaderboard_data").exists()
