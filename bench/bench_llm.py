"""Speed of the LLM layer against a local fake OpenAI-compatible server answering in 100 ms.

    python bench/bench_llm.py [--n 1000] [--latency 0.1] [--concurrency 16] [--baseline-n 100]
                              [--full-baseline]

Every figure goes through run_llm end to end (requests, parsing, scoring, writing the run):
1. baseline: the same runner with concurrency 1 and the cache off, on the first --baseline-n
   samples (100 by default: 10 s), scaled to --n per request; --full-baseline sends all --n
   sequentially (100 s at the defaults);
2. --n requests with --concurrency workers (goal: at least 8x faster than sequential);
3. the same run again, fully cached (goal: 0 requests, under 2 s).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from evaluator.benchmarks import registry  # noqa: E402
from evaluator.core.types import Sample  # noqa: E402
from evaluator.ingest import pipeline  # noqa: E402
from evaluator.llm.runner import run_llm  # noqa: E402
from evaluator.store import layout  # noqa: E402
from tests.support.llm_servers import FakeLLMServer, Recorded, Reply  # noqa: E402


def synthetic_demo(root: Path, n: int) -> None:
    """n test samples (and a few dev ones) in the demo benchmark's schema, written as ingested."""
    spec = registry.get("demo")
    samples = []
    for i in range(n + 6):
        split = "test" if i < n else "dev"
        samples.append(
            Sample(
                benchmark="demo",
                sample_id=f"bench-{i:05d}",
                split=split,
                unit="summary",
                domain=("news", "meeting", "science")[i % 3],
                doc_id=f"doc-{i // 4}",
                document=f"Document {i // 4}: the council met and approved {i % 7} projects.",
                summary=f"The council approved {(i % 7) + (i % 2)} projects.",
                label=1 - (i % 2),
            )
        )
    table = pipeline.samples_table(spec, samples)
    d = layout.benchmark_dir("demo", root)
    d.mkdir(parents=True, exist_ok=True)
    import pyarrow.parquet as pq

    pq.write_table(table, d / layout.SAMPLES_FILE)
    meta = {**spec.card(), "version": pipeline.version_of(table)}
    (d / layout.META_FILE).write_text(json.dumps(meta), encoding="utf-8")


def answer(req: Recorded) -> Reply:
    return Reply(text="No. The count is wrong." if "approved 1 " in req.user else "Yes.")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--baseline-n", type=int, default=100)
    ap.add_argument("--full-baseline", action="store_true")
    a = ap.parse_args()
    os.environ.setdefault("FACTBOARD_COMPATIBLE_API_KEY", "bench-not-a-key")
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeLLMServer("openai", responder=answer, latency=a.latency) as server,
    ):
        root = Path(tmp) / "leaderboard_data"
        os.environ["FACTBOARD_DATA"] = str(root)
        synthetic_demo(root, a.n)
        opts = {"base_url": server.url}
        common = dict(prompt_id="summedits-zs-v1", root=root)

        base_n = a.n if a.full_baseline else min(a.baseline_n, a.n)
        before = server.count
        t0 = time.perf_counter()
        run_llm(
            "compatible:bench",
            "demo",
            concurrency=1,
            limit=base_n,
            options={**opts, "cache": "off"},
            **common,
        )  # type: ignore[arg-type]
        t_seq = time.perf_counter() - t0
        assert server.count - before == base_n
        t_seq_n = t_seq / base_n * a.n
        how = "measured" if base_n == a.n else f"{base_n} measured, scaled to {a.n}"
        print(
            f"sequential ({how}): {t_seq_n:8.2f} s  ({t_seq / base_n * 1000:.1f} ms/request; "
            f"server latency {a.latency * 1000:.0f} ms)"
        )

        before = server.count
        t0 = time.perf_counter()
        run_llm("compatible:bench", "demo", concurrency=a.concurrency, options=opts, **common)  # type: ignore[arg-type]
        t_conc = time.perf_counter() - t0
        sent = server.count - before
        assert sent == a.n, sent
        speedup = t_seq_n / t_conc
        print(
            f"concurrency {a.concurrency:3}:        {t_conc:8.2f} s  ({sent} requests; "
            f"max {server.max_active} at once)  speed-up x{speedup:.1f} "
            f"[goal >= 8: {'ok' if speedup >= 8 else 'MISSED'}]"
        )

        before = server.count
        t0 = time.perf_counter()
        run_llm("compatible:bench", "demo", concurrency=a.concurrency, options=opts, **common)  # type: ignore[arg-type]
        t_cached = time.perf_counter() - t0
        resent = server.count - before
        ok = resent == 0 and t_cached < 2.0
        print(
            f"cached rerun:           {t_cached:8.2f} s  ({resent} requests)  "
            f"x{t_conc / t_cached:.1f} faster than the first run "
            f"[goal 0 requests, < 2 s: {'ok' if ok else 'MISSED'}]"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
