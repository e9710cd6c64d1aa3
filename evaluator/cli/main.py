"""`python -m evaluator ...`: the one command-line parser.

This module builds the parser and its engine sub-commands (benchmarks, ingest, score, runs, export,
demo, run, doctor); evaluator/cli/llm.py (judge, grade-judges, prompts),
evaluator/cli/submissions.py (submit, worker, queue, moderate), evaluator/cli/hub.py (hub, space)
and evaluator/cli/interop.py (import-eee; export --format eee) add theirs with
`register(subparsers)`. Each sub-command stores
its function as `args.run`. Choices come from the vocabulary (evaluator.core.vocabulary): model
kinds, origins, metrics.

Exit codes: 0 success, 1 bad input or state (message on stderr), 2 bad command line.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from evaluator.cli.common import (
    THRESHOLD_POLICIES,
    add_engine_arguments,
    add_option_argument,
    engine,
    options,
)
from evaluator.core.errors import FactBoardError

DESCRIPTION = (
    "FactBoard: ingest benchmarks, score prediction files, run detectors and LLMs, grade "
    "explanations, take submissions, list and export runs. Exit codes: 0 success, 1 bad input "
    "or state (message on stderr), 2 bad command line."
)


def build_parser() -> argparse.ArgumentParser:
    """The whole `python -m evaluator` parser."""
    from evaluator.cli import hub, interop, llm, submissions, verified

    p = argparse.ArgumentParser(prog="python -m evaluator", description=DESCRIPTION)
    sub = p.add_subparsers(dest="command", required=True)
    register(sub)
    llm.register(sub)
    submissions.register(sub)
    hub.register(sub)
    interop.register(sub)
    verified.register(sub)
    return p


def register(sub: Any) -> None:
    """The engine's sub-commands."""
    b = sub.add_parser("benchmarks", help="list the registered benchmarks and what is ingested")
    b.add_argument("name", nargs="?", help="show one benchmark's card")
    b.set_defaults(run=cmd_benchmarks)

    i = sub.add_parser("ingest", help="ingest a benchmark release into leaderboard_data/")
    i.add_argument("name", help="benchmark name (see `benchmarks`), or 'all'")
    i.add_argument(
        "--from",
        dest="source",
        required=True,
        help="path to the release (file or folder), or 'hub' to download it; with "
        "'all', the folder holding one sub-folder per benchmark",
    )
    add_option_argument(i, "loader option, e.g. --option mediasum=PATH (see `benchmarks NAME`)")
    i.set_defaults(run=cmd_ingest)

    _register_score(sub)

    r = sub.add_parser("runs", help="list stored runs")
    r.add_argument("--benchmark")
    r.add_argument("--all", action="store_true", help="include hidden runs")
    r.set_defaults(run=cmd_runs)

    _register_export(sub)

    d = sub.add_parser("demo", help="(re)build the built-in synthetic demo benchmark and runs")
    d.add_argument("--force", action="store_true", help="replace the demo runs")
    d.set_defaults(run=cmd_demo)

    _register_run(sub)

    dr = sub.add_parser(
        "doctor",
        help="list every corrupt file of the store (runs, benchmarks, jobs, submission "
        "records, reported CSVs, LLM cache) and every run whose numbers do not follow from its "
        "predictions; exit 1 when there is one",
    )
    dr.add_argument(
        "--quick",
        action="store_true",
        help="check the files only, without scoring each run's predictions again",
    )
    dr.set_defaults(run=cmd_doctor)


def _register_score(sub: Any) -> None:
    from evaluator.core import vocabulary as V

    s = sub.add_parser("score", help="score a prediction file (CSV or JSONL) and store the run")
    s.add_argument("file", type=Path)
    s.add_argument("--benchmark", required=True)
    s.add_argument("--model-name", required=True)
    s.add_argument("--kind", default="non-llm", choices=list(V.MODEL_KINDS))
    s.add_argument("--org")
    s.add_argument("--params", help="parameter count as stated, e.g. 7B")
    s.add_argument("--url")
    s.add_argument(
        "--split",
        action="append",
        dest="splits",
        help="split(s) to score (default: test when the benchmark has a dev split)",
    )
    s.add_argument("--threshold-policy", default="auto", choices=list(THRESHOLD_POLICIES))
    s.add_argument("--threshold", type=float, help="for --threshold-policy fixed")
    s.add_argument("--resamples", type=int, default=1000)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument(
        "--origin",
        default="evaluated",
        # released runs come from ingest, imported ones from import-eee
        choices=[o for o in V.ORIGINS if o not in ("released", "imported")],
        help="evaluated (default: scored by a maintainer), submitted or reproduced",
    )
    s.set_defaults(run=cmd_score)


def _register_export(sub: Any) -> None:
    from evaluator.core import vocabulary as V

    e = sub.add_parser("export", help="export leaderboard results")
    e.add_argument("--format", required=True, choices=["csv", "json", "latex", "eee"])
    e.add_argument("--benchmark")
    e.add_argument(
        "--run",
        dest="runs",
        action="append",
        help="eee: a run to export (repeatable; default: the runs the board shows)",
    )
    e.add_argument(
        "--reported",
        action="store_true",
        help="eee: also the published numbers (of --benchmark, or all), as documentation records",
    )
    e.add_argument("--metric", choices=V.metric_names(), help="only this metric (default: all)")
    e.add_argument(
        "--slice",
        dest="slice_kind",
        default="overall",
        help="slice kind (default overall; 'all' for every slice)",
    )
    e.add_argument(
        "--output", "-o", type=Path, help="file to write (default: stdout); eee: a folder"
    )
    e.set_defaults(run=cmd_export)


def _register_run(sub: Any) -> None:
    x = sub.add_parser("run", help="run a reference detector or a prompted LLM on a benchmark")
    what = x.add_mutually_exclusive_group(required=True)
    what.add_argument("--detector", help="a detector name (see evaluator/detectors)")
    what.add_argument("--llm", metavar="PROVIDER:MODEL", help="e.g. openai:gpt-4o")
    x.add_argument("--benchmark", required=True)
    x.add_argument(
        "--split",
        action="append",
        dest="splits",
        help="split(s) to run on (default: every split; dev tunes the threshold)",
    )
    x.add_argument("--checkpoint", help="detector checkpoint: hub id or local path")
    x.add_argument("--device", help="cuda, mps or cpu (default: the best available)")
    x.add_argument("--batch-size", type=int)
    x.add_argument("--prompt", dest="prompt_id", help="LLM prompt id")
    x.add_argument("--temperature", type=float, default=0.0)
    x.add_argument("--repeats", type=int, default=1, help="LLM: repeated runs (self-agreement)")
    x.add_argument("--concurrency", type=int, default=8)
    x.add_argument("--limit", type=int, help="only the first N samples (a smoke run)")
    x.add_argument("--model-name", help="name on the board (default: derived)")
    add_option_argument(x, "detector or provider option")
    add_engine_arguments(x)
    x.set_defaults(run=cmd_run)


def cmd_benchmarks(args: argparse.Namespace) -> int:
    from evaluator.benchmarks import registry
    from evaluator.store import ingested

    if args.name:
        spec = registry.get(args.name)
        card: dict[str, object] = dict(spec.card())
        card["loader_options"] = dict(spec.loader_options)
        if ingested.is_ingested(spec.name):
            meta = ingested.load_meta(spec.name)
            card.update(
                {k: meta[k] for k in ("version", "ingested_at", "stats", "notes") if k in meta}
            )
        print(json.dumps(card, indent=1, ensure_ascii=False))
        return 0
    have = set(ingested.names())
    for spec in registry.specs():
        mark = "ingested" if spec.name in have else "-"
        print(f"{spec.name:22} {spec.task:24} {mark:9} {spec.title}")
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    from evaluator.benchmarks import registry
    from evaluator.ingest import pipeline

    opts = options(args.option)
    if args.name == "all":
        from evaluator.core.formatting import count, plural
        from evaluator.ingest.folder import ingest_all, skipped

        folder = Path(args.source)
        for rep in ingest_all(folder, progress=sys.stderr.isatty()):
            state = "updated" if rep.changed else "unchanged"
            print(
                f"{rep.name}: {count(rep.n_samples)} samples, version {rep.version} ({state}); "
                f"{plural(len(rep.released_runs), 'released run')} written"
            )
        for skip in skipped(folder):
            print(f"{skip.name}: skipped: {skip.reason}")
        return 0
    registry.get(args.name)
    rep = pipeline.ingest(args.name, args.source, opts, progress=sys.stderr.isatty())
    state = "updated" if rep.changed else "unchanged (same version already ingested)"
    print(f"{rep.name}: {rep.n_samples} samples, version {rep.version}: {state}")
    for n in rep.notes:
        print(f"  note: {n}")
    if rep.released_runs:
        from evaluator.core.formatting import plural

        print(f"  {plural(len(rep.released_runs), 'released run')} written")
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    from evaluator import scorer
    from evaluator.core.scoring import ScoreOptions
    from evaluator.core.types import ModelInfo
    from evaluator.store import ingested
    from evaluator.submissions.validation import check_metadata, parse_predictions

    # the name and URL rules of a submission (the kinds a submission may not use are allowed)
    problems = [
        str(p)
        for p in check_metadata(args.model_name, None, args.org, args.params, args.url)
        if not str(p).startswith("model kind:")
    ]
    if problems:
        raise FactBoardError("; ".join(problems))
    if not args.file.is_file():
        raise FactBoardError(f"no such file: {args.file}")
    data = args.file.read_bytes()
    samples = ingested.load_samples(args.benchmark)
    preds = parse_predictions(data, filename=args.file.name, known_ids=set(samples["sample_id"]))
    model = ModelInfo(
        name=args.model_name, kind=args.kind, org=args.org, params=args.params, url=args.url
    )
    opts = ScoreOptions(
        policy=args.threshold_policy,
        threshold=args.threshold,
        splits=tuple(args.splits) if args.splits else None,
        resamples=args.resamples,
        seed=args.seed,
    )
    path = scorer.score_file_to_run(
        args.benchmark,
        preds,
        model,
        args.origin,
        options=opts,
        submission={"file_sha256": _sha(data), "filename": args.file.name},
    )
    _print_run(path)
    return 0


def _print_run(path: Path) -> None:
    """What a new run says on the board: threshold, counts and the overall numbers."""
    from evaluator.core import formatting as F
    from evaluator.store import runs

    rec = runs.read_record(path)
    print(f"run {rec.run_id} written to {path}")
    t = rec.threshold
    print(f"threshold: {t.policy}" + (f" = {t.threshold:.6g}" if t.threshold is not None else ""))
    c = rec.counts
    print(
        f"samples: {c.n}, predicted {c.predicted}, missing {c.missing}, "
        f"unusable {c.unparsable}, failed {c.failed}"
    )
    for r in rec.results:
        if r.slice_kind == "overall":
            g = f" ({r.grader})" if r.grader else ""
            value = F.value_ci(r.value, r.ci_low, r.ci_high)
            print(f"  {r.unit:8} {r.metric:20}{g} {value}  n={r.n}")


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def cmd_runs(args: argparse.Namespace) -> int:
    from evaluator.store import runs
    from evaluator.submissions.verification import record_status

    listing = runs.list_runs(benchmark=args.benchmark, include_hidden=args.all)
    for rec in listing.runs:
        prim = _primary(rec)
        hidden = " (hidden)" if rec.hidden else ""
        status = record_status(rec)
        print(
            f"{rec.run_id}  {rec.benchmark:14} {rec.origin:10} {status:13} "
            f"{rec.model.name}{hidden}  {prim}"
        )
    for prob in listing.problems:
        print(f"corrupt: {prob}", file=sys.stderr)
    if not listing.runs:
        from evaluator.store import layout

        print(f"no runs in the {layout.data_root_note()}", file=sys.stderr)
    return 0


def _primary(rec: object) -> str:
    from evaluator.benchmarks import registry
    from evaluator.core import formatting as F
    from evaluator.core.types import RunRecord

    assert isinstance(rec, RunRecord)
    try:
        spec = registry.get(rec.benchmark)
    except FactBoardError:
        return ""
    for r in rec.results:
        if r.metric == spec.primary_metric and r.slice_kind == "overall":
            return f"{r.metric}={F.number(r.value)}"
    return ""


def cmd_export(args: argparse.Namespace) -> int:
    from evaluator.store.export import export_results

    if args.format == "eee":  # Every Eval Ever records, one folder per run
        from evaluator.cli.interop import cmd_export_eee

        return cmd_export_eee(args)

    text = export_results(
        args.format, benchmark=args.benchmark, metric=args.metric, slice_kind=args.slice_kind
    )
    if args.output:
        args.output.write_text(text, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from evaluator.ingest.demo import build_demo

    for line in build_demo(force=args.force):
        print(line)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    opts = options(args.option)
    if args.detector:
        from evaluator.detectors import runner as detector_runner

        spec = detector_runner.DetectorRunSpec(
            args.detector,
            args.benchmark,
            checkpoint=args.checkpoint,
            device=args.device,
            batch_size=args.batch_size,
            splits=tuple(args.splits) if args.splits else None,
            limit=args.limit,
            model_name=args.model_name,
            options=opts,
            engine=engine(args),
        )
        path = detector_runner.run(spec, progress=sys.stderr.isatty())
        _print_run(path)
        return 0
    from evaluator.llm.runner import run_llm

    paths = run_llm(
        args.llm,
        args.benchmark,
        prompt_id=args.prompt_id,
        temperature=args.temperature,
        repeats=args.repeats,
        concurrency=args.concurrency,
        splits=args.splits,
        limit=args.limit,
        model_name=args.model_name,
        options=opts,
        progress=sys.stderr.isatty(),
        engine=engine(args),
    )
    for path in paths:
        _print_run(path)
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from evaluator.store.doctor import find_problems

    problems = find_problems(verify=not args.quick)
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s) found", file=sys.stderr)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except FactBoardError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
