"""The results repo's layout: a Hub dataset repo of tables. See docs/ARCHITECTURE.md.

Layout 2 (what FactBoard writes and reads):

    README.md                                  dataset card: `configs` name the tables below
    manifest.json                              {"layout_version": 2, "shards": {benchmark:
                                                {shard_id: [kind, ...]}}}: the current shards
    tables/runs.parquet                        one row per run: identity, moderation state,
                                               deleted flag, the shard holding its rows, run.json
    tables/results.parquet                     run x split x unit x slice x metric: value, CI, n
    tables/submissions.parquet                 submission records without the contact e-mail
    shards/<benchmark>/<kind>-<shard_id>.parquet
                                               per-sample rows of many runs (kind: predictions,
                                               labels, grades, evidence), a run_id column first
    benchmarks/<name>/{samples.parquet, benchmark.json}
    reported/<table>.csv                       published numbers
    queue/<job_id>.json                        jobs: the queue's job fields (status inside)

Files grow with benchmarks and shards, not runs: a push appends one shard per benchmark and kind,
and `hub compact` merges them. Every Eval Ever records are not stored: they are exported on demand
from a pulled replica (`python -m evaluator export --format eee`).

Layout 1 (before the tables): one folder per run under runs/, moderation/<run_id>.json,
submissions/<id>.json and eee/...; `hub migrate` turns it into layout 2. A replica refuses to
read it and says so.
"""

from __future__ import annotations

import re

from evaluator.submissions.records import PRIVATE_FIELDS

LAYOUT_VERSION = 2

MANIFEST = "manifest.json"
TABLES = "tables"
RUNS_TABLE = f"{TABLES}/runs.parquet"
RESULTS_TABLE = f"{TABLES}/results.parquet"
SUBMISSIONS_TABLE = f"{TABLES}/submissions.parquet"
SHARDS = "shards"
BENCHMARKS = "benchmarks"
REPORTED = "reported"
QUEUE = "queue"
README = "README.md"

# layout 1's folders (read by `hub migrate` only)
RUNS = "runs"
MODERATION = "moderation"
SUBMISSIONS = "submissions"
EEE = "eee"

# per-sample files of a run folder, by the kind of shard that carries them
SHARD_KINDS = ("predictions", "labels", "grades", "evidence")

# fields of a submission record that never leave the machine that received it
PRIVATE_RECORD_FIELDS = PRIVATE_FIELDS

_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$")


def safe(name: str) -> bool:
    """A name usable as one path segment in the repo (what FactBoard writes is always safe)."""
    return isinstance(name, str) and bool(_SAFE.match(name))


def shard_file(benchmark: str, kind: str, shard_id: str) -> str:
    return f"{SHARDS}/{benchmark}/{kind}-{shard_id}.parquet"


def benchmark_file(name: str, file: str) -> str:
    return f"{BENCHMARKS}/{name}/{file}"


def job_file(job_id: str) -> str:
    return f"{QUEUE}/{job_id}.json"


def run_file(run_id: str, name: str) -> str:
    """Layout 1: a run folder's file."""
    return f"{RUNS}/{run_id}/{name}"


def moderation_file(run_id: str) -> str:
    """Layout 1: a run's latest moderation action."""
    return f"{MODERATION}/{run_id}.json"


def record_file(submission_id: str) -> str:
    """Layout 1: a submission record."""
    return f"{SUBMISSIONS}/{submission_id}.json"


def split(path: str) -> list[str]:
    return path.split("/")


CARD = """---
license: apache-2.0
pretty_name: FactBoard results
tags:
- factual-consistency
- summarization
- leaderboard
configs:
- config_name: results
  default: true
  data_files: "tables/results.parquet"
- config_name: runs
  data_files: "tables/runs.parquet"
- config_name: submissions
  data_files: "tables/submissions.parquet"
- config_name: predictions
  data_files: "shards/*/predictions-*.parquet"
- config_name: labels
  data_files: "shards/*/labels-*.parquet"
- config_name: grades
  data_files: "shards/*/grades-*.parquet"
- config_name: evidence
  data_files: "shards/*/evidence-*.parquet"
---

# FactBoard results

The results behind a FactBoard leaderboard, as tables: one row per run, one row per published
number, and every run's per-sample predictions. The FactBoard app keeps its local data in step
with this repo (`python -m evaluator hub pull`).

| config | file(s) | one row per |
|---|---|---|
| `results` | `tables/results.parquet` | run x split x unit x slice x metric: value, CI, n |
| `runs` | `tables/runs.parquet` | run: model, origin, `hidden`, `deleted`, `run_json` |
| `submissions` | `tables/submissions.parquet` | submission record (no contact details) |
| `predictions`, ... | `shards/<benchmark>/<kind>-<id>.parquet` | run x sample (`run_id` first) |
| | `benchmarks/<name>/samples.parquet` | benchmark sample (`benchmark.json`: metadata) |
| | `reported/*.csv` | number published in a paper |
| | `queue/<job_id>.json` | evaluation job (queued, running, done, failed) |
| | `manifest.json` | (one) the layout version and the current shards |

Leave out runs with `deleted` (moderation removed them; their per-sample rows leave the shards at
the next compaction) and, for what the board shows, runs with `hidden`. A shard not named in
`manifest.json` is being replaced and may hold stale rows.

```python
from datasets import load_dataset
results = load_dataset("{repo}", "results", split="train")

import pandas as pd
from huggingface_hub import hf_hub_download
runs = pd.read_parquet(hf_hub_download("{repo}", "tables/runs.parquet", repo_type="dataset"))

import duckdb
from huggingface_hub import snapshot_download
root = snapshot_download("{repo}", repo_type="dataset", allow_patterns=["tables/*"])
duckdb.sql(f"select model_name, split, value, ci_low, ci_high "
           f"from '{{root}}/tables/results.parquet' where metric = 'balanced_accuracy' "
           "and slice_kind = 'overall' and not hidden order by value desc")
```

With DuckDB's httpfs extension, `from 'hf://datasets/{repo}/tables/results.parquet'` reads it in
place. Every Eval Ever records are exported on demand from a replica:
`python -m evaluator export --format eee -o DIR`.
"""
