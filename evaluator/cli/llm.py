"""Sub-commands for LLM judges and prompts, registered on the parser of evaluator/cli/main.py:

  judge --run RUN --judge PROVIDER:MODEL [--protocol EvalV4] [--concurrency N] [--limit N]
        [--option KEY=VALUE] [--engine local|ray ...]
                                      grade a run's explanations; writes a run superseding RUN
  grade-judges --judge PROVIDER:MODEL [--judge ...] [--protocol EvalV1 ...] [--benchmark B]
        [--concurrency N] [--limit N] [--option KEY=VALUE] [--engine local|ray ...]
                                      judge the FactCC explanation study and report agreement
                                      with the human grades beside SummExecEdit Table 4
  prompts [ID] [--kind detector|judge]
                                      list the prompt ids, or show one prompt in full

(`python -m evaluator run --llm PROVIDER:MODEL --prompt ID --benchmark B` runs a prompted
detector.) Exit codes: 0 done, 1 bad input or failed requests (message on stderr), 2 bad command
line.
"""

from __future__ import annotations

import argparse
from typing import Any

from evaluator.cli.common import add_engine_arguments, add_option_argument, engine, options


def register(sub: Any) -> None:
    from evaluator.core.choices import DEFAULT_JUDGE_PROTOCOL, JUDGE_PROTOCOLS

    j = sub.add_parser("judge", help="grade a run's explanations with an LLM judge (EvalV1-V4)")
    j.add_argument("--run", required=True, dest="run_id", help="the run to grade")
    j.add_argument("--judge", required=True, metavar="PROVIDER:MODEL", help="e.g. openai:gpt-4o")
    j.add_argument("--protocol", default=DEFAULT_JUDGE_PROTOCOL, choices=list(JUDGE_PROTOCOLS))
    j.add_argument("--concurrency", type=int, default=8)
    j.add_argument("--limit", type=int, help="grade only the first N explanations (smoke run)")
    add_option_argument(j, "judge client option")
    add_engine_arguments(j)
    j.set_defaults(run=cmd_judge)

    g = sub.add_parser(
        "grade-judges",
        help="judge the FactCC explanation study; agreement with human grades (Table 4)",
    )
    g.add_argument(
        "--judge", required=True, action="append", dest="judges", metavar="PROVIDER:MODEL"
    )
    g.add_argument(
        "--protocol",
        action="append",
        dest="protocols",
        choices=list(JUDGE_PROTOCOLS),
        help="repeatable (default EvalV1, the one the study's inputs allow)",
    )
    g.add_argument("--benchmark", default="factcc_explanations")
    g.add_argument("--concurrency", type=int, default=8)
    g.add_argument("--limit", type=int, help="grade only the first N explanations of each run")
    add_option_argument(g, "judge client option")
    add_engine_arguments(g)
    g.set_defaults(run=cmd_grade_judges)

    p = sub.add_parser("prompts", help="list the LLM prompt ids, or show one")
    p.add_argument("prompt_id", nargs="?")
    p.add_argument("--kind", choices=["detector", "judge"])
    p.set_defaults(run=cmd_prompts)


def cmd_judge(args: argparse.Namespace) -> int:
    from evaluator.llm.judges import judge_run
    from evaluator.store import runs

    path = judge_run(
        args.run_id,
        args.judge,
        args.protocol,
        concurrency=args.concurrency,
        options=options(args.option),
        limit=args.limit,
        progress=True,
        engine=engine(args),
    )
    rec = runs.read_record(path)
    print(f"run {rec.run_id} written to {path} (supersedes {rec.supersedes})")
    grader = f"{args.judge}/{args.protocol}"
    for r in rec.results:
        if r.grader == grader and r.slice_kind == "overall":
            ci = (
                f" [{r.ci_low:.4f}, {r.ci_high:.4f}]"
                if r.ci_low is not None and r.ci_high is not None
                else ""
            )
            value = f"{r.value:.4f}" if r.value is not None else "-"
            print(f"  {r.unit:8} {r.metric:20} {value}{ci}  n={r.n}")
    return 0


def _fmt(v: Any) -> str:
    return "-" if v is None or v != v else f"{float(v):.3f}"


def cmd_grade_judges(args: argparse.Namespace) -> int:
    from evaluator.llm.judges import grade_the_grader, reported_table4

    protocols = args.protocols or ["EvalV1"]
    opts = options(args.option)
    eng = engine(args)
    tables = []
    for judge in args.judges:
        rep = grade_the_grader(
            judge,
            protocols,
            benchmark=args.benchmark,
            concurrency=args.concurrency,
            options=opts,
            limit=args.limit,
            progress=True,
            engine=eng,
        )
        print(f"{judge}: {len(rep.paths)} runs written")
        tables.append(rep.table)
    print(f"\nAgreement with the human grades ({args.benchmark}):")
    print(
        f"{'judge':32} {'protocol':8} {'n':>6} {'pearson':>8} {'BAcc':>6} {'BAcc(1 vs rest)':>16}"
    )
    for t in tables:
        for r in t.to_dict("records"):
            print(
                f"{r['judge']:32} {r['protocol']:8} {r['n']:>6} {_fmt(r['pearson']):>8} "
                f"{_fmt(r['balanced_accuracy']):>6} {_fmt(r['balanced_accuracy_binary']):>16}"
            )
    t4 = reported_table4()
    if not t4.empty:
        print("\nSummExecEdit Table 4 (published; judges of SummExecEdit explanations):")
        wide = t4.pivot_table(
            index=["judge", "protocol"], columns="metric", values="value", aggfunc="first"
        ).reset_index()
        for r in wide.to_dict("records"):
            if r["protocol"] in protocols:
                print(
                    f"{r['judge']:32} {r['protocol']:8} {'':>6} {_fmt(r.get('correlation')):>8} "
                    f"{_fmt(r.get('balanced_accuracy')):>6}"
                )
    return 0


def cmd_prompts(args: argparse.Namespace) -> int:
    from evaluator.llm import prompts as P

    if args.prompt_id:
        p = P.get(args.prompt_id)
        print(f"id:      {p.id}")
        print(f"kind:    {p.kind}" + (f" ({p.protocol})" if p.protocol else f", unit {p.unit}"))
        print(f"title:   {p.title}")
        print(f"source:  {p.source}")
        print(f"output:  {p.output}")
        print(f"sha256:  {p.sha256}")
        if p.notes:
            print(f"notes:   {p.notes}")
        if p.system:
            print("\n--- system ---")
            print(p.system)
        print("\n--- user ---")
        print(p.template)
        return 0
    for p in P.PROMPTS.values():
        if args.kind and p.kind != args.kind:
            continue
        what = p.protocol if p.protocol else f"{p.unit}"
        print(f"{p.id:28} {p.kind:8} {what:9} {p.title}")
    return 0
