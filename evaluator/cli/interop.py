"""`python -m evaluator import-eee PATH` and `export --format eee`: Every Eval Ever records in
and out (see evaluator.interop.importer and evaluator.interop.export; README.md, "Every Eval
Ever")."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from evaluator.core.errors import FactBoardError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "import-eee",
        help="import Every Eval Ever records: per-sample ones become runs scored here, "
        "aggregate-only ones published numbers",
    )
    p.add_argument(
        "path",
        type=Path,
        help="a record ({uuid}.json, with its {uuid}_samples.jsonl beside it) or a folder of them",
    )
    p.add_argument(
        "--benchmark", help="the benchmark the records are about (default: read from each record)"
    )
    p.set_defaults(run=cmd_import_eee)


def cmd_import_eee(args: argparse.Namespace) -> int:
    from evaluator.interop.importer import import_eee

    for item in import_eee(args.path, args.benchmark):
        what = "run" if item.kind == "run" else "published numbers"
        print(f"{item.record}: {item.benchmark} {what} ({item.rows} rows) -> {item.path}")
        for note in item.notes:
            print(f"  note: {note}")
    return 0


def cmd_export_eee(args: argparse.Namespace) -> int:
    """export --format eee [--run RUN_ID ...] [--benchmark B] [--reported] -o DIR"""
    from evaluator.interop.export import reported_files, run_files, run_ids, write_files

    if args.output is None:
        raise FactBoardError("--format eee writes a folder (data/... inside): give it with -o DIR")
    if args.output.exists() and not args.output.is_dir():
        raise FactBoardError(f"{args.output} is a file; --format eee writes a folder")
    ids = list(args.runs or []) or run_ids(args.benchmark)
    files: dict[str, bytes] = {}
    for rid in dict.fromkeys(ids):  # everything is built and validated before anything is written
        files |= run_files(rid).files()
    if args.reported:
        files |= reported_files(args.benchmark)
    if not files:
        raise FactBoardError(
            "nothing to export" + (f" for benchmark {args.benchmark}" if args.benchmark else "")
        )
    for path in write_files(files, args.output):
        print(path)
    return 0
