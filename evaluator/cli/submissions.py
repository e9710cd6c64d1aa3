"""Sub-commands for submissions, the job queue and moderation, registered on the parser of
evaluator/cli/main.py:

  submit FILE --benchmark B --model-name NAME [--kind --org --params --url --description --email
         --split --threshold-policy --threshold --token
         --recipe JSON | --recipe-detector ... | --recipe-llm ... | --recipe-package ...]
                                                       validate, score and store a prediction
                                                       file (--token: a maintainer, no quota;
                                                       a recipe says how it was made, so
                                                       FactBoard can reproduce it)
  submit FILE --hub [REPO] --benchmark B --model-name NAME [...]
                                                       to a hosted board: a pull request on its
                                                       results repo, opened with $HF_TOKEN
  submit --status PR [--hub REPO]                      what the board said on that pull request
  template BENCHMARK [--split S] [-o FILE]             the prediction-file template: the sample
                                                       ids to predict with their split (dev ids
                                                       first), empty label/score/explanation
  worker [--once] [--poll SECONDS]                     run queued jobs
  queue [--status S]                                   list jobs with their last message
  queue requeue|cancel JOB_ID --token T                a failed job back to pending; a pending
                                                       or failed job cancelled (maintainers)
  moderate hide|show|delete RUN_ID --token T           needs $FACTBOARD_ADMIN_TOKEN to match T

Exit codes: 0 done, 1 bad input or refused (messages on stderr), 2 bad command line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluator.core.errors import FactBoardError

RECIPE_HELP = (
    'e.g. \'{"detector": "summac-zs", "checkpoint": "org/model", "revision": "<commit>"}\' '
    'or \'{"llm": "openai:gpt-4o", "prompt": "summedits-zs-v1", "temperature": 0}\' '
    'or \'{"package": "my-detector", "version": "1.0.0"}\'; @FILE reads it from a file'
)


def _recipe_arguments(s: argparse.ArgumentParser) -> None:
    """The submit command's --recipe and --recipe-* flags."""
    r = s.add_argument_group(
        "recipe",
        "how the predictions were made, so that FactBoard can re-run them and mark the run "
        "reproduced (or say how it differs); without one the run is self-reported. Either "
        "--recipe JSON or the --recipe-* flags.",
    )
    r.add_argument(
        "--recipe",
        metavar="JSON",
        help=RECIPE_HELP,
    )
    r.add_argument(
        "--recipe-detector",
        metavar="NAME",
        help="a registered detector (or the entry point of --recipe-package)",
    )
    r.add_argument("--recipe-checkpoint", metavar="HUB_ID", help="a public Hub model id")
    r.add_argument("--recipe-revision", metavar="REV", help="the checkpoint's commit or tag")
    r.add_argument(
        "--recipe-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a detector option (repeatable)",
    )
    r.add_argument("--recipe-llm", metavar="PROVIDER:MODEL")
    r.add_argument("--recipe-prompt", metavar="PROMPT_ID")
    r.add_argument("--recipe-temperature", type=float)
    r.add_argument("--recipe-package", metavar="NAME", help="an installed package's detector")
    r.add_argument("--recipe-version", metavar="VERSION", help="the package's version")


def register(sub: Any) -> None:
    from evaluator.cli.common import THRESHOLD_POLICIES
    from evaluator.jobs.queue import STATES
    from evaluator.submissions import validation as submissions

    s = sub.add_parser(
        "submit",
        help="submit a prediction file: validate, score, put on the board (origin submitted)",
    )
    s.add_argument("file", type=Path, nargs="?")
    s.add_argument("--benchmark", help="required with a file")
    s.add_argument("--model-name", help="required with a file")
    s.add_argument(
        "--hub",
        nargs="?",
        const="",
        metavar="REPO",
        help="submit to a hosted board: open a pull request on its results repo (REPO, default "
        "$FACTBOARD_HUB_REPO) with your own $HF_TOKEN; the board scores it and comments there",
    )
    s.add_argument(
        "--status",
        metavar="PR",
        help="with --hub: what the board said on a submission's pull request (number or URL)",
    )
    s.add_argument("--kind", default="non-llm", choices=list(submissions.SUBMITTABLE_KINDS))
    s.add_argument("--org")
    s.add_argument("--params", help="parameter count as stated, e.g. 7B")
    s.add_argument("--url")
    s.add_argument("--description")
    s.add_argument("--email", help="contact email: stored privately, never shown or exported")
    s.add_argument("--split", help="the split to score (default: test when there is a dev split)")
    s.add_argument("--threshold-policy", default="auto", choices=list(THRESHOLD_POLICIES))
    s.add_argument("--threshold", type=float, help="for --threshold-policy fixed")
    s.add_argument(
        "--token", help="a maintainer's submission, exempt from quotas: $FACTBOARD_ADMIN_TOKEN"
    )
    _recipe_arguments(s)
    s.set_defaults(run=cmd_submit, submit_parser=s)

    t = sub.add_parser(
        "template",
        help="write a benchmark's prediction-file template (the ids to predict, with their split)",
    )
    t.add_argument("benchmark")
    t.add_argument(
        "--split",
        help="the split scored (default: test when there is a dev split; dev ids come first "
        "then, for a scores-only file's threshold)",
    )
    t.add_argument("--output", "-o", type=Path, help="file to write (default: stdout)")
    t.set_defaults(run=cmd_template)

    w = sub.add_parser("worker", help="run queued jobs (judge grading, detector runs)")
    w.add_argument("--once", action="store_true", help="run every ready job, then exit")
    w.add_argument("--poll", type=float, default=2.0, help="seconds between queue scans (2)")
    w.add_argument(
        "--hub",
        action="store_true",
        help="take jobs from the results repo on the Hub ($FACTBOARD_HUB_REPO, $HF_TOKEN)",
    )
    w.set_defaults(run=cmd_worker)

    q = sub.add_parser(
        "queue",
        help="list queued, running, done and failed jobs; requeue or cancel one (maintainers)",
    )
    q.add_argument("action", nargs="?", default="list", choices=["list", "requeue", "cancel"])
    q.add_argument("job_id", nargs="?", help="the job to requeue or cancel")
    q.add_argument("--status", choices=list(STATES))
    q.add_argument("--token", help="requeue, cancel: must match $FACTBOARD_ADMIN_TOKEN")
    q.set_defaults(run=cmd_queue)

    m = sub.add_parser("moderate", help="hide, show or delete a run (maintainers)")
    m.add_argument("action", choices=["hide", "show", "delete"])
    m.add_argument("run_id")
    m.add_argument("--token", required=True, help="must match $FACTBOARD_ADMIN_TOKEN")
    m.set_defaults(run=cmd_moderate)


def cmd_submit(args: argparse.Namespace) -> int:
    from evaluator.core import formatting as F
    from evaluator.core.formatting import plural
    from evaluator.submissions import match, moderation, report
    from evaluator.submissions import service as submit

    if args.status is not None:
        return _hub_status(args)
    if args.file is None or not args.benchmark or not args.model_name:
        args.submit_parser.error("submit: FILE, --benchmark and --model-name are required")
    if args.token is not None:
        moderation.check_admin_token(args.token)
    if not args.file.is_file():
        raise FactBoardError(f"no such file: {args.file}")
    recipe = recipe_arg(args)
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
        recipe=recipe,
    )
    if args.hub is not None:
        from evaluator.hub.inbox import open_submission

        opened = open_submission(args.file.read_bytes(), args.file.name, meta, args.hub or None)
        for line in opened.lines():
            print(line)
        return 0
    with open(args.file, "rb") as fh:
        res = submit.submit(fh, args.file.name, meta, exempt=args.token is not None)
    for w in res.warnings:
        print(f"note: {w}", file=sys.stderr)
    if not res.ok or res.record is None:
        print(
            f"submission {res.submission_id} rejected: {plural(len(res.problems), 'problem')}",
            file=sys.stderr,
        )
        for p in res.problems:
            print(f"  - {p}", file=sys.stderr)
        if res.status == "rejected":
            note = match.wrong_benchmark_note(
                args.file.read_bytes(),
                args.file.name,
                args.benchmark,
                res.problems,
                advice=lambda other: f"Submit it with --benchmark {other}.",
            )
            if note:
                print(note, file=sys.stderr)
        return 1
    rec = res.record
    print(f"submission {res.submission_id}: run {rec.run_id} is on the board")
    print(f"threshold: {report.threshold_text(rec)}")
    c = rec.counts
    print(
        f"samples: {F.count(c.n)}, predicted {F.count(c.predicted)}, missing "
        f"{F.count(c.missing)}, unusable {F.count(c.unparsable)}"
    )
    for r in rec.results:
        if r.slice_kind != "overall" or r.value is None:
            continue
        value = F.value_ci(r.value, r.ci_low, r.ci_high)
        print(f"  {r.split:5} {r.unit:8} {r.metric:20} {value}  n={F.count(r.n)}")
    if res.job_id:
        print(f"judge job queued: {res.job_id}")
    from evaluator.submissions import verification

    status = verification.record_status(rec)
    print(f"verification: {verification.BADGES[status]} ({verification.STATUSES[status]})")
    return 0


def _hub_status(args: argparse.Namespace) -> int:
    """`submit --status PR`: the board's outcome on a submission's pull request; exit 1 when
    it was rejected."""
    from evaluator.hub.inbox import read_status

    got = read_status(args.status, args.hub or None)
    for line in got.lines():
        print(line)
    return 1 if got.outcome is not None and got.outcome.status == "rejected" else 0


def recipe_arg(args: argparse.Namespace) -> dict[str, Any] | None:
    """The recipe the command line gives (--recipe JSON, @FILE, or the --recipe-* flags),
    checked: a problem names the field."""
    import json

    from evaluator.cli.common import options
    from evaluator.submissions import recipes

    flags = recipes.from_flags(
        detector=args.recipe_detector,
        checkpoint=args.recipe_checkpoint,
        revision=args.recipe_revision,
        options=options(args.recipe_option) if args.recipe_option else None,
        llm=args.recipe_llm,
        prompt=args.recipe_prompt,
        temperature=args.recipe_temperature,
        package=args.recipe_package,
        version=args.recipe_version,
    )
    text = args.recipe
    if text and flags:
        raise FactBoardError("give the recipe as --recipe JSON or as --recipe-* flags, not both")
    if text and text.startswith("@"):
        try:
            text = Path(text[1:]).read_text(encoding="utf-8")
        except OSError as e:
            raise FactBoardError(f"--recipe {args.recipe}: {e.strerror or e}") from None
    given: Any = flags
    if text:
        try:
            given = json.loads(text)
        except json.JSONDecodeError as e:
            raise FactBoardError(
                f"--recipe: not valid JSON ({e.msg} at character {e.pos})"
            ) from None
    recipe, problems = recipes.parse_recipe(given)
    if problems:
        raise FactBoardError("the recipe is not valid:\n" + "\n".join(f"  - {p}" for p in problems))
    return dict(recipe.to_json()) if recipe else None


def cmd_template(args: argparse.Namespace) -> int:
    from evaluator.core.formatting import plural
    from evaluator.submissions import service as submit

    text = submit.template_csv(args.benchmark, args.split)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
        rows = text.count("\n") - 1
        print(f"wrote {args.output} ({plural(rows, 'id')} to predict)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    """Run the worker until SIGTERM/SIGINT (or, with --once, until no job is ready); plugins
    named in $FACTBOARD_WORKER_PLUGINS register their handlers first."""
    import signal
    import threading

    from evaluator.core.formatting import plural
    from evaluator.jobs import worker

    if args.poll <= 0:
        raise FactBoardError(f"--poll must be positive, got {args.poll}")
    stop = threading.Event()

    def _stop(signum: int, frame: object) -> None:
        print(f"worker: signal {signum}, stopping after the current job", file=sys.stderr)
        stop.set()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGINT, _stop)
    for entry in worker.load_plugins():
        print(f"worker: plugin {entry} loaded", file=sys.stderr, flush=True)
    run: Callable[..., int] = worker.run_worker
    if args.hub:
        from evaluator.hub.queue import run_hub_worker

        run = run_hub_worker
    n = run(
        once=args.once,
        poll=args.poll,
        stop=stop,
        log=lambda m: print(f"worker: {m}", file=sys.stderr, flush=True),
    )
    print(f"worker: {plural(n, 'job')} run", file=sys.stderr)
    return 0


def cmd_queue(args: argparse.Namespace) -> int:
    from evaluator.core import formatting as F
    from evaluator.jobs import queue
    from evaluator.submissions import moderation

    if args.action != "list":
        if not args.job_id:
            raise FactBoardError(f"queue {args.action}: name the job (queue {args.action} JOB_ID)")
        moderation.check_admin_token(args.token)
        job = (queue.requeue if args.action == "requeue" else queue.cancel)(args.job_id)
        print(f"{job.id}: {job.status} ({job.last_message})")
        return 0
    jobs = queue.list_jobs(args.status)
    for j in jobs:
        prog = F.percent(j.progress, missing="-").rjust(6)
        print(
            f"{j.status:8} {j.id:40} {j.kind:14} {j.attempts}/{j.max_attempts} {prog}  "
            f"{(j.error or j.last_message)[:120]}"
        )
    if not jobs:
        print("no jobs", file=sys.stderr)
    for path, why in queue.corrupt_files():
        print(f"corrupt job file {path}: {why}", file=sys.stderr)
    return 0


def cmd_moderate(args: argparse.Namespace) -> int:
    from evaluator.submissions import moderation

    changed = moderation.moderate(args.action, args.run_id, args.token)
    done = {"hide": "hidden", "show": "shown", "delete": "deleted"}[args.action]
    for rid in changed:
        print(f"{rid}: {done}")
    return 0
