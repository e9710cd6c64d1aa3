"""docs/ARCHITECTURE.md held against the tree: every path and module it names exists, every
package of the engine and every module of the read side, every page and every test folder is
described there, and what it says imports streamlit is what ruff allows. Reads files only."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
CODE = re.findall(r"`([^`\n]+)`", DOC)
TOP = ("evaluator", "explorer", "views", "tests", "bench", "scripts", "leaderboard_data", "docs")
GENERATED = ("leaderboard_data/benchmarks/", "leaderboard_data/runs/")  # built by a command


def _where_things_live() -> list[tuple[str, str]]:
    """(folder, what lives there) for each row of section 2's table."""
    section = DOC.split("## 2. Where things live", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        m = re.match(r"\| `([^`]+)` \| (.*) \|$", line)
        if m:
            rows.append((m.group(1), m.group(2)))
    return rows


def _named(text: str) -> set[str]:
    return set(re.findall(r"`([^`\n]+)`", text))


def test_every_path_the_page_names_exists() -> None:
    paths = {
        c.split(" ")[0].rstrip(",.:")
        for c in CODE
        if c.split("/")[0] in TOP and "<" not in c and "*" not in c and "{" not in c
    }
    assert len(paths) > 20
    missing = sorted(p for p in paths if not (REPO / p).exists() and not p.startswith(GENERATED))
    assert not missing, f"docs/ARCHITECTURE.md names paths that do not exist: {missing}"


def test_every_module_a_folder_row_lists_is_in_that_folder() -> None:
    rows = _where_things_live()
    assert len(rows) > 10
    missing = []
    for folder, text in rows:
        base = REPO / folder
        if not base.is_dir():
            continue
        for name in _named(text):
            if re.fullmatch(r"[a-z_]+\.py|[a-z_]+/", name) and not (base / name).exists():
                missing.append(f"{folder}{name}")
    assert not missing, f"section 2 lists modules its folders lack: {missing}"


def _module_exists(dotted: str) -> bool:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        path = REPO.joinpath(*parts[:i])
        if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
            rest = parts[i:]
            if not rest:
                return True
            if len(rest) > 2:
                return False
            source = (
                path.with_suffix(".py")
                if path.with_suffix(".py").is_file()
                else path / "__init__.py"
            ).read_text(encoding="utf-8")
            defined = rf"^\s*(def|class) {rest[0]}\b|^{rest[0]}\b.*=|^\s+\"{rest[0]}\": \("
            return bool(re.search(defined, source, re.M))
    return False


def test_every_dotted_module_and_name_the_page_names_exists() -> None:
    dotted = {
        re.sub(r"\(.*$", "", c)
        for c in CODE
        if re.fullmatch(r"(evaluator|explorer)(\.[A-Za-z_]\w*)+(\(.*\))?", c)
    }
    assert len(dotted) > 10
    missing = sorted(d for d in dotted if not _module_exists(d))
    assert not missing, f"docs/ARCHITECTURE.md names modules or names that do not exist: {missing}"


def test_every_engine_package_is_described() -> None:
    rows = {folder for folder, _ in _where_things_live()}
    packages = sorted(
        f"evaluator/{p.name}/"
        for p in (REPO / "evaluator").iterdir()
        if (p / "__init__.py").is_file()
    )
    assert packages
    missing = [p for p in packages if p not in rows]
    assert not missing, f"section 2 does not describe these engine packages: {missing}"


@pytest.mark.parametrize("folder", ["explorer", "views"])
def test_every_read_side_module_and_page_is_described(folder: str) -> None:
    text = dict(_where_things_live())[f"{folder}/"]
    named = _named(text)
    modules = sorted(p.name for p in (REPO / folder).glob("*.py") if p.name != "__init__.py")
    missing = [m for m in modules if m not in named]
    assert not missing, f"section 2's {folder}/ row leaves out {missing}"


def test_every_test_folder_is_described() -> None:
    text = dict(_where_things_live())["tests/<package>/"]
    named = _named(text)
    folders = sorted(
        f"{p.name}/" for p in (REPO / "tests").iterdir() if p.is_dir() and p.name != "__pycache__"
    )
    missing = [f for f in folders if f not in named]
    assert not missing, f"section 2's tests row leaves out {missing}"


def test_the_streamlit_modules_it_names_are_those_ruff_allows_and_those_that_import_it() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    per_file = config["tool"]["ruff"]["lint"].get("per-file-ignores", {})
    allowed = {f for f, rules in per_file.items() if "TID251" in rules}
    importing = set()
    for p in (REPO / "explorer").glob("*.py"):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n == "streamlit" or n.startswith("streamlit.") for n in names):
                importing.add(f"explorer/{p.name}")
    assert importing <= allowed, f"explorer modules import streamlit without leave: {importing}"
    rule = DOC.split("Enforced by tests:", 1)[1].split("\n\n", 1)[0]
    assert all(f"`{m}`" in rule for m in sorted(importing)), (
        f"section 1 should name every explorer module that imports streamlit: {sorted(importing)}"
    )


def _engine_imports(package: str) -> dict[str, set[str]]:
    """module path -> the evaluator packages it imports (at any depth of the module)."""
    out: dict[str, set[str]] = {}
    for p in (REPO / "evaluator" / package).rglob("*.py"):
        found = set()
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            for n in names:
                parts = n.split(".")
                if parts[0] == "evaluator" and len(parts) > 1:
                    found.add(parts[1])
        out[str(p.relative_to(REPO))] = found
    return out


# what a package must not import: the core is pure and imports no other package; the store sits
# below the detectors, the detectors below the Ray engine
CLIMBING = {
    "core": {
        "benchmarks",
        "detectors",
        "llm",
        "store",
        "submissions",
        "jobs",
        "hub",
        "distributed",
        "interop",
        "ingest",
        "cli",
        "runner",
        "scorer",
        "api",
        "reproduce",
        "verify",
    },
    "store": {"detectors", "distributed"},
    "detectors": {"distributed"},
}


@pytest.mark.parametrize("package", sorted(CLIMBING))
def test_no_import_climbs_the_layers(package: str) -> None:
    wrong = {
        module: sorted(found & CLIMBING[package])
        for module, found in _engine_imports(package).items()
        if found & CLIMBING[package]
    }
    if package == "store":  # the doctor checks every store the engine has (jobs, LLM cache)
        wrong.pop("evaluator/store/doctor.py", None)
    if package == "detectors":  # the runner hands its blocks to the Ray engine when asked to
        wrong.pop("evaluator/detectors/runner.py", None)
    assert not wrong, f"imports that climb from evaluator/{package}/: {wrong}"
