"""House rules that a linter cannot see: importing the engine or the read side loads no heavy
package (they are imported inside the functions that need them), and CLI help stays light."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HEAVY = (
    "torch",
    "transformers",
    "sentence_transformers",
    "openai",
    "anthropic",
    "rouge_score",
    "bert_score",
    "longdocfactscore",
    "ray",
)


def _modules(package: str) -> list[str]:
    root = REPO / package
    return sorted(
        ".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for p in root.rglob("*.py")
        if "__pycache__" not in p.parts
    )


def test_importing_every_engine_and_explorer_module_loads_no_heavy_package() -> None:
    mods = [m for m in _modules("evaluator") + _modules("explorer") if m != "explorer.ui"]
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}: importlib.import_module(m)\n"
        f"print(','.join(h for h in {HEAVY!r} if h in sys.modules))\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "", f"heavy packages imported at module level: {p.stdout}"
    assert len(mods) > 40


def test_cli_help_lists_every_command_without_heavy_imports() -> None:
    code = (
        "import sys, contextlib, io\n"
        "from evaluator.cli.main import main\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        "    try: main(['--help'])\n"
        "    except SystemExit: pass\n"
        "print(buf.getvalue())\n"
        f"print('HEAVY:' + ','.join(h for h in {HEAVY!r} if h in sys.modules))\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stderr
    for cmd in (
        "ingest",
        "score",
        "runs",
        "export",
        "run",
        "judge",
        "submit",
        "worker",
        "queue",
        "moderate",
    ):
        assert cmd in p.stdout
    assert p.stdout.strip().endswith("HEAVY:")


def test_the_public_api_resolves_and_import_evaluator_stays_light() -> None:
    code = (
        "import sys, evaluator\n"
        f"light = [m for m in ('pandas', 'pyarrow', 'duckdb', *{HEAVY!r}) if m in sys.modules]\n"
        "names = [n for n in evaluator.__all__ if n != '__version__']\n"
        "missing = [n for n in names if not callable(getattr(evaluator, n))]\n"
        "print(light, sorted(names), missing)\n"
        f"print('HEAVY:' + ','.join(h for h in {HEAVY!r} if h in sys.modules))\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stderr
    first, heavy = p.stdout.strip().split("\n")
    assert first == (
        "[] ['Evaluation', 'SubmissionMeta', 'evaluate', 'ingest_benchmark', 'list_runs', "
        "'load_samples', 'run_detector', 'run_llm', 'score_file_to_run', 'submit'] []"
    )
    assert heavy == "HEAVY:"  # resolving every name imports no heavy package either


def test_an_unknown_public_name_is_an_attribute_error() -> None:
    import evaluator

    try:
        evaluator.no_such_name
    except AttributeError as e:
        assert "no attribute 'no_such_name'" in str(e)
    else:
        raise AssertionError("evaluator.no_such_name resolved")
