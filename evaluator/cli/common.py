"""What several sub-command modules of the CLI share: the --option and engine arguments, and the
threshold policies a user may ask for. The modules (main, llm, submissions, hub) import these
from here, never from each other."""

from __future__ import annotations

import argparse
from typing import Any

from evaluator.core.choices import CHOSEN_POLICIES
from evaluator.core.errors import FactBoardError

# the threshold policies a user may ask for (--threshold-policy)
THRESHOLD_POLICIES = CHOSEN_POLICIES


def add_option_argument(p: argparse.ArgumentParser, help: str | None = None) -> None:
    """The repeatable --option KEY=VALUE argument (parsed with `options`)."""
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help=help)


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """--engine local|ray and the Ray engine's settings (read back with `engine`)."""
    g = p.add_argument_group("engine (README, 'Scale-out on Ray')")
    g.add_argument(
        "--engine", choices=["local", "ray"], default="local", help="where to run (default local)"
    )
    g.add_argument(
        "--ray-address",
        metavar="auto|ray://HOST:PORT",
        help="ray: the cluster (auto: the one `ray start` made here, or $RAY_ADDRESS; default: "
        "start a Ray on this machine)",
    )
    g.add_argument("--workers", type=int, default=1, help="ray: detector actors or LLM tasks")
    g.add_argument(
        "--gpus-per-worker", type=float, default=0.0, help="ray: GPUs per detector actor"
    )
    g.add_argument(
        "--block-size",
        type=int,
        help="samples per block (the unit scored, scheduled and checkpointed; default 256)",
    )


def engine(args: argparse.Namespace) -> Any:
    """The evaluator.runner.Engine the command line asks for, checked."""
    from evaluator.runner import engine_from

    return engine_from(vars(args))


def options(pairs: list[str]) -> dict[str, str]:
    """--option KEY=VALUE arguments as a dict (a later KEY wins)."""
    out: dict[str, str] = {}
    for kv in pairs:
        if "=" not in kv:
            raise FactBoardError(f"--option {kv!r} is not KEY=VALUE")
        k, v = kv.split("=", 1)
        out[k.strip()] = v
    return out
