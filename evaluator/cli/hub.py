"""Sub-commands for the results repo on the Hub and the hosted Space:

  hub pull [--packed]               bring benchmarks, runs, reported tables, moderation,
                                    submission records and the queue from $FACTBOARD_HUB_REPO
                                    (--packed: the runs kept in packs, written as run folders
                                    later, as the app's own pulls do)
  hub push [--reported] [--demo]    publish what the local root has and the repo lacks
  hub status                        what differs, both ways (exit 0 either way)
  hub sync                          pull, submit the entries of the repo's open pull requests
                                    (a submission by pull request: comment, close), push
  hub compact                       merge each benchmark's shards; drop deleted runs' rows
  hub migrate                       turn a repo of the old folder layout into tables
  space deploy --space OWNER/NAME [--results OWNER/NAME] [--set-token]
                                    create or update the Space (Docker) from this checkout

Auth is $HF_TOKEN, the endpoint $HF_ENDPOINT. A wrong or read-only token is a one-line error;
the token itself is never printed. Exit codes: 0 done, 1 refused or failed, 2 bad command line.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    h = sub.add_parser("hub", help="pull from / push to the results repo on the Hub")
    hs = h.add_subparsers(dest="hub_command", required=True)
    pull = hs.add_parser("pull", help="bring the repo's state into the local root")
    pull.add_argument(
        "--packed",
        action="store_true",
        help="keep the pulled runs in packs that the board reads in place; the app's background "
        "sync writes them as run folders, or any command that reads them first (a Space's "
        "start-up: seconds, not minutes)",
    )
    push = hs.add_parser("push", help="publish local runs, benchmarks and records the repo lacks")
    push.add_argument(
        "--reported", action="store_true", help="also publish the reported/*.csv tables"
    )
    push.add_argument(
        "--demo", action="store_true", help="also publish the built-in demo benchmark and runs"
    )
    hs.add_parser("status", help="show what differs between the local root and the repo")
    hs.add_parser(
        "sync",
        help="pull, submit the entries of the repo's open pull requests (comment with the "
        "outcome and close them), push: what the Space does each poll (a write token)",
    )
    hs.add_parser("compact", help="merge each benchmark's shards into one (a write token)")
    hs.add_parser("migrate", help="convert a repo of the old folder layout into tables, once")
    h.set_defaults(run=cmd_hub)
    for p in hs.choices.values():
        p.add_argument("--repo", help="results dataset repo (default: $FACTBOARD_HUB_REPO)")

    s = sub.add_parser("space", help="deploy FactBoard as a Hugging Face Space")
    ss = s.add_subparsers(dest="space_command", required=True)
    d = ss.add_parser("deploy", help="create or update the Space from this checkout")
    d.add_argument("--space", required=True, help="the Space repo, owner/name")
    d.add_argument("--results", help="results dataset repo to configure (FACTBOARD_HUB_REPO)")
    d.add_argument(
        "--set-token",
        action="store_true",
        help="store the current $HF_TOKEN as the Space's HF_TOKEN secret",
    )
    d.add_argument("--private", action="store_true", help="create the Space private")
    s.set_defaults(run=cmd_space)


def cmd_hub(args: argparse.Namespace) -> int:
    from evaluator.hub import sync
    from evaluator.hub.client import HubClient

    client = HubClient.from_env(getattr(args, "repo", None))
    if args.hub_command == "pull":
        rep = sync.pull(client, defer=args.packed)
        print(f"pulled from {client.repo}@{rep.head[:10]}: {rep.summary()}")
        _skipped(rep.skipped)
        return 0
    if args.hub_command == "push":
        client.ensure_repo()
        rep = sync.push(client, reported=args.reported, demo=args.demo)
        print(f"pushed to {client.repo}@{rep.head[:10]}: {rep.summary()}")
        for note in rep.notes:
            print(f"  {note}")
        return 0
    if args.hub_command == "sync":
        return _sync(client)
    if args.hub_command == "compact":
        from evaluator.hub.compact import compact

        done = compact(client, log=lambda m: print(f"  {m}"))
        print(f"{client.repo}: {done.summary()}")
        return 0
    if args.hub_command == "migrate":
        from evaluator.hub.migrate import migrate

        moved = migrate(client, log=lambda m: print(f"  {m}"))
        print(f"{client.repo}: {moved.summary()}")
        _skipped(moved.left_out)
        return 0
    plan = sync.status(client)
    lines = plan.lines()
    print(f"{client.repo}@{plan.head[:10]}: " + ("in step" if not lines else "differs"))
    for line in lines:
        print(f"  {line}")
    _skipped(plan.problems)
    return 0


def _sync(client: Any) -> int:
    """`hub sync`: what the Space's background sync does in one poll."""
    from evaluator.hub import inbox, sync

    pulled, pushed = sync.sync(client)
    print(f"pulled from {client.repo}@{pulled.head[:10]}: {pulled.summary()}")
    _skipped(pulled.skipped)
    rep = inbox.process(client)
    for line in rep.lines():
        print(f"  inbox: {line}")
    if rep.handled:  # the runs the inbox made go out now
        pushed = sync.push(client)
    if pushed is not None:
        print(f"pushed to {client.repo}@{pushed.head[:10]}: {pushed.summary()}")
    return 0


def _skipped(problems: list[str]) -> None:
    """What the repo holds that failed a check (skipped, never written here)."""
    from evaluator.core.formatting import plural

    if problems:
        print(f"  skipped: {plural(len(problems), 'entry', 'entries')} that failed a check")
        for p in problems[:20]:
            print(f"    {p}")


def cmd_space(args: argparse.Namespace) -> int:
    from evaluator.hub.space import deploy

    for line in deploy(
        args.space, results=args.results, set_token=args.set_token, private=args.private
    ):
        print(line)
    return 0
