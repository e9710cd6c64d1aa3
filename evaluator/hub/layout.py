"""The results repo's layout: a Hub dataset repo that mirrors the data root, plus moderation,
sanitized submission records and the job queue. See docs/ARCHITECTURE.md.

    README.md                                       what this repo is and how to query it
    benchmarks/<name>/{samples.parquet, benchmark.json}
    runs/<run_id>/{run.json, predictions.parquet, labels.parquet[, grades.parquet,
                   evidence.parquet]}
    reported/<table>.csv                            published numbers
    moderation/<run_id>.json                        {"run_id", "action": hide|show|delete, "at"}
    submissions/<submission_id>.json                submission records without the contact e-mail
    queue/<job_id>.json                             jobs: the queue's job fields (status inside)
    eee/data/<benchmark>/<developer>/<model>/<uuid>{.json,_samples.jsonl}
                                                    each run as an Every Eval Ever record

Runs and benchmarks keep their local file names, so `runs/*/predictions.parquet` can be read
with DuckDB or pandas straight from a download of the repo.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

RUNS = "runs"
BENCHMARKS = "benchmarks"
REPORTED = "reported"
MODERATION = "moderation"
SUBMISSIONS = "submissions"
QUEUE = "queue"
README = "README.md"
EEE = "eee"

# fields of a submission record that never leave the machine that received it: the contact
# e-mail, and the quota key (a client's key is a digest of its address, which a public repo must
# not carry; quotas are therefore kept per replica)
PRIVATE_RECORD_FIELDS = ("email", "submitter")

_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$")


def safe(name: str) -> bool:
    """A name usable as one path segment in the repo (what FactBoard writes is always safe)."""
    return bool(_SAFE.match(name))


def run_file(run_id: str, name: str) -> str:
    return f"{RUNS}/{run_id}/{name}"


def benchmark_file(name: str, file: str) -> str:
    return f"{BENCHMARKS}/{name}/{file}"


def moderation_file(run_id: str) -> str:
    return f"{MODERATION}/{run_id}.json"


def record_file(submission_id: str) -> str:
    return f"{SUBMISSIONS}/{submission_id}.json"


def job_file(job_id: str) -> str:
    return f"{QUEUE}/{job_id}.json"


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
- config_name: default
  data_files: "runs/*/predictions.parquet"
---

# FactBoard results

The results behind a FactBoard leaderboard: benchmarks, every run's predictions and scores,
moderation state and the evaluation queue. The FactBoard app keeps its local data in step with
this repo (`python -m evaluator hub pull`).

| path | content |
|---|---|
| `benchmarks/<name>/samples.parquet`, `benchmark.json` | ingested benchmark samples and metadata |
| `runs/<run_id>/run.json` | a run: model, threshold, metrics with confidence intervals |
| `runs/<run_id>/predictions.parquet` | its per-sample predictions |
| `runs/<run_id>/grades.parquet` | LLM-judge grades of its explanations (when graded) |
| `runs/<run_id>/evidence.parquet` | per sample, why the detector scored it so (when it says) |
| `reported/*.csv` | numbers published in papers |
| `moderation/<run_id>.json` | the latest moderation action on a run (hide, show, delete) |
| `submissions/<id>.json` | submission records (no contact details) |
| `queue/<job_id>.json` | queued, running, done and failed evaluation jobs |

```python
import duckdb
from huggingface_hub import snapshot_download
root = snapshot_download("{repo}", repo_type="dataset")
duckdb.sql(f"select run_id, count(*) from read_parquet('{{root}}/runs/*/predictions.parquet', "
           "filename=true, hive_partitioning=false) group by all")
```
"""


def eee_file(datastore_path: str) -> str:
    """Where an Every Eval Ever file (a path in the datastore layout, data/...) goes in the repo."""
    return f"{EEE}/{datastore_path}"


def eee_files_of(run_id: str, files: Iterable[str]) -> list[str]:
    """The repo's Every Eval Ever files of one run (its record and samples file: their names
    carry the uuid derived from the run id)."""
    from evaluator.interop.eee import record_uuid

    uid = record_uuid(run_id)
    return sorted(
        f
        for f in files
        if f.startswith(f"{EEE}/")
        and f.rsplit("/", 1)[-1] in (f"{uid}.json", f"{uid}_samples.jsonl")
    )
