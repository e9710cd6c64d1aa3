"""`python -m evaluator reproduce RUN_ID`: re-run a run FactBoard made from what its run.json
records and compare the new predictions with the stored ones, sample by sample
(evaluator.reproduce). Nothing is written to the board.

A submitted run with a recipe is re-run from its recipe. With --approve --token T (a
maintainer) the reproduction is queued for the worker instead, which records the outcome as the
run's verification status (reproduced, or differs with the figures), as the Queue page's
approval does.

Exit codes: 0 reproduced identically (every score bit for bit, every final label), 3 reproduced
with differences (the figures say how much), 1 not reproducible or failed (the message says
why), 2 bad command line.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

DIFFERS = 3


def register(sub: Any) -> None:
    r = sub.add_parser(
        "reproduce",
        help="re-run a run from its recorded recipe and compare it sample by sample",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("run_id", help="the run to reproduce (python -m evaluator runs lists them)")
    r.add_argument("--device", help="run on this device instead of the recorded one (e.g. cpu)")
    r.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an LLM run's client option over the recorded one (e.g. base_url=URL)",
    )
    r.add_argument(
        "--resamples",
        type=int,
        default=1000,
        help="bootstrap resamples for the metric's paired CI (default 1000)",
    )
    r.add_argument("--json", action="store_true", help="print the figures as JSON")
    r.add_argument(
        "--approve",
        action="store_true",
        help="a submitted run: queue its reproduction for the worker, which records the "
        "outcome as its verification status (needs --token)",
    )
    r.add_argument("--token", help="--approve: must match $FACTBOARD_ADMIN_TOKEN")
    r.set_defaults(run=cmd_reproduce)


def cmd_reproduce(args: argparse.Namespace) -> int:
    from evaluator.cli.common import options
    from evaluator.reproduce import reproduce

    if args.approve:
        from evaluator.jobs.reproduce_run import approve

        job = approve(args.run_id, args.token, device=args.device, resamples=args.resamples)
        print(f"reproduction of run {args.run_id} queued: job {job.id} ({job.status})")
        return 0
    result = reproduce(
        args.run_id,
        device=args.device,
        options=options(args.option),
        progress=sys.stderr.isatty(),
        resamples=args.resamples,
    )
    if args.json:
        from evaluator.submissions.verification import figures_of

        figures = {"run_id": result.run_id, "identical": result.identical, **figures_of(result)}
        print(json.dumps(figures, indent=2))
    else:
        for line in result.lines():
            print(line)
    return 0 if result.identical else DIFFERS
