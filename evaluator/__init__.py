"""FactBoard's engine: benchmarks, runs, metrics, scoring, submissions and the evaluator CLI.

Never imports streamlit or explorer (docs/ARCHITECTURE.md). The public API below is what the app,
the CLI and a notebook call; each name is imported on first use (PEP 562), so `import evaluator`
stays light (no pandas-heavy store, no torch, no LLM SDK). (`evaluator.ingest` is the package,
so the ingest function is exposed as `ingest_benchmark`.)

    ingest_benchmark(name, source, options=None, ...) evaluator.ingest.pipeline.ingest
    load_samples(benchmark, root=None)             evaluator.store.ingested.load_samples
    list_runs(root=None, ...)                      evaluator.store.runs.list_runs
    score_file_to_run(name, predictions, model, ...) evaluator.scorer.score_file_to_run
    run_detector(name, benchmark, ...)             evaluator.detectors.runner.run_detector
    run_llm(provider_model, benchmark, ...)        evaluator.llm.runner.run_llm
    submit(source, filename, meta, ...)            evaluator.submissions.service.submit
    evaluate(detector, benchmark, split="test", ...) evaluator.api.evaluate (your own detector)
    Evaluation                                     evaluator.api.Evaluation
    SubmissionMeta                                 evaluator.submissions.service.SubmissionMeta
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> (module, attribute)
_API: dict[str, tuple[str, str]] = {
    "ingest_benchmark": ("evaluator.ingest.pipeline", "ingest"),
    "load_samples": ("evaluator.store.ingested", "load_samples"),
    "list_runs": ("evaluator.store.runs", "list_runs"),
    "score_file_to_run": ("evaluator.scorer", "score_file_to_run"),
    "run_detector": ("evaluator.detectors.runner", "run_detector"),
    "run_llm": ("evaluator.llm.runner", "run_llm"),
    "submit": ("evaluator.submissions.service", "submit"),
    "SubmissionMeta": ("evaluator.submissions.service", "SubmissionMeta"),
    "evaluate": ("evaluator.api", "evaluate"),
    "Evaluation": ("evaluator.api", "Evaluation"),
}

__all__ = [
    "Evaluation",
    "SubmissionMeta",
    "__version__",
    "evaluate",
    "ingest_benchmark",
    "list_runs",
    "load_samples",
    "run_detector",
    "run_llm",
    "score_file_to_run",
    "submit",
]

if TYPE_CHECKING:
    from evaluator.api import Evaluation, evaluate
    from evaluator.detectors.runner import run_detector
    from evaluator.ingest.pipeline import ingest as ingest_benchmark
    from evaluator.llm.runner import run_llm
    from evaluator.scorer import score_file_to_run
    from evaluator.store.ingested import load_samples
    from evaluator.store.runs import list_runs
    from evaluator.submissions.service import SubmissionMeta, submit


def __getattr__(name: str) -> Any:
    try:
        module, attr = _API[name]
    except KeyError:
        raise AttributeError(f"module 'evaluator' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
