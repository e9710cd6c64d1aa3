"""Sub-commands for submissions, the job queue and moderation (found by evaluator/__main__.py):

  submit FILE --benchmark B --model-name NAME [--kind --org --params --url --description --email
         --split --threshold-policy --threshold]      validate, score and store a prediction file
  worker [--once] [--poll SECONDS]                     run queued jobs
  queue [--status S]                                   list jobs with their last message
  moderate hide|show|delete RUN_ID --token T           needs $FACTBOARD_ADMIN_TOKEN to match T

Exit codes: 0 done, 1 bad input or refused (messages on stderr), 2 bad command line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evaluator.core.errors import FactBoardError


def register(sub: Any) -> None:
    from evaluator.jobs import worker
    from evaluator.jobs.queue import STATES
    from evaluator.submissions import validation as submissions

    s = sub.add_parser(
        "submit",
        help="submit a prediction file: validate, score, put on the board (origin submitted)",
    )
    s.add_argument("file", type=Path)
    s.add_argument("--benchmark", required=True)
    s.add_argument("--model-name", required=True)
    s.add_argument("--kind", default="non-llm", choices=list(submissions.SUBMITTABLE_KINDS))
    s.add_argument("--org")
    s.add_argument("--params", help="parameter count as stated, e.g. 7B")
    s.add_argument("--url")
    s.add_argument("--description")
    s.add_argument("--email", help="contact email: stored privately, never shown or exported")
    s.add_argument("--split", help="the split to score (default: test when there is a dev split)")
    s.add_argument(
        "--threshold-policy",
        default="auto",
        choices=["auto", "labels", "dev", "fixed", "per-domain-dev"],
    )
    s.add_argument("--threshold", type=float, help="for --threshold-policy fixed")

    w = sub.add_parser("worker", help="run queued jobs (judge grading, detector runs)")
    worker.add_arguments(w)

    q = sub.add_parser("queue", help="list queued, running, done and failed jobs")
    q.add_argument("--status", choices=list(STATES))

    m = sub.add_parser("moderate", help="hide, show or delete a run (maintainers)")
    m.add_argument("action", choices=["hide", "show", "delete"])
    m.add_argument("run_id")
    m.add_argument("--token", required=True, help="must match $FACTBOARD_ADMIN_TOKEN")


def cmd_submit(args: argparse.Namespace) -> int:
    from evaluator.submissions import service as submit

    if not args.file.is_file():
        raise FactBoardError(f"no such file: {args.file}")
    meta = submit.SubmissionMeta(
        benchmark=args.benchmark,
        model_name=args.model_name,
        kind=args.kind,
        org=args.org,
        params=args.params,
        url=args.url,
        description=args.description,
        email=args.email,
        split=args.split,
        threshold_policy=args.threshold_policy,
        threshold=args.threshold,
    )
    with open(args.file, "rb") as fh:
        res = submit.submit(fh, args.file.name, meta)
    for w in res.warnings:
        print(f"note: {w}", file=sys.stderr)
    if not res.ok or res.record is None:
        print(
            f"submission {res.submission_id} rejected: {len(res.problems)} problem(s)",
            file=sys.stderr,
        )
        for p in res.problems:
            print(f"  - {p}", file=sys.stderr)
        return 1
    rec = res.record
    print(f"submission {res.submission_id}: run {rec.run_id} is on the board")
    print(f"threshold: {submit.threshold_text(rec)}")
    c = rec.counts
    print(f"samples: {c.n}, predicted {c.predicted}, missing {c.missing}, unusable {c.unparsable}")
    for r in rec.results:
        if r.slice_kind != "overall" or r.value is None:
            continue
        ci = (
            f" [{r.ci_low:.4f}, {r.ci_high:.4f}]"
            if r.ci_low is not None and r.ci_high is not None
            else ""
        )
        print(f"  {r.split:5} {r.unit:8} {r.metric:20} {r.value:.4f}{ci}  n={r.n}")
    if res.job_id:
        print(f"judge job queued: {res.job_id}")
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from evaluator.jobs import worker

    return worker.run_from_args(args)


def cmd_queue(args: argparse.Namespace) -> int:
    from evaluator.jobs import queue

    jobs = queue.list_jobs(args.status)
    for j in jobs:
        prog = f"{j.progress:4.0%}" if j.progress is not None else "   -"
        print(
            f"{j.status:8} {j.id:40} {j.kind:14} {j.attempts}/{j.max_attempts} {prog}  "
            f"{(j.error or j.last_message)[:120]}"
        )
    if not jobs:
        print("no jobs", file=sys.stderr)
    return 0


def cmd_moderate(args: argparse.Namespace) -> int:
    from evaluator.submissions import service as submit

    changed = submit.moderate(args.action, args.run_id, args.token)
    done = {"hide": "hidden", "show": "shown", "delete": "deleted"}[args.action]
    for rid in changed:
        print(f"{rid}: {done}")
    return 0


COMMANDS = {
    "submit": cmd_submit,
    "worker": cmd_worker,
    "queue": cmd_queue,
    "moderate": cmd_moderate,
}


def main(argv: list[str] | None = None) -> int:
    """These sub-commands on their own: `python -m evaluator.cli.submissions submit ...`."""
    p = argparse.ArgumentParser(prog="python -m evaluator.cli.submissions", description=__doc__)
    register(p.add_subparsers(dest="command", required=True))
    args = p.parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except FactBoardError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    from evaluator.cli.submissions import main as _main

    sys.exit(_main())
