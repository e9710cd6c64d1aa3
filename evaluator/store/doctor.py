"""Every corrupt file the store can meet, found by one function: `find_problems`.

`python -m evaluator doctor` prints them and the Queue page shows them to maintainers (its
problems panel). Nothing here writes or repairs: a problem names the file, what kind of file it
is, and what is wrong, so a maintainer can remove or restore it. What is checked:

- run folders (<data root>/runs/<id>/): run.json through the one record check
  (evaluator.store.runs.validate_record), and predictions.parquet, labels.parquet and
  grades.parquet readable with the columns and types of their schema (a truncated file or a
  `score` written as strings is a problem);
- benchmark folders (<data root>/benchmarks/<name>/): benchmark.json and samples.parquet;
- job files (<submissions root>/queue/): evaluator.jobs.queue.corrupt_files;
- submission records (<submissions root>/records/*.json);
- reported CSVs (leaderboard_data/reported/*.csv): readable, the required columns, numeric
  values;
- LLM cache entries (<data root>/.cache/llm/): JSON with the key of their file name and a
  reply;
- submitted runs that repeat one another (the same predictions on one benchmark: the same file
  submitted on two replicas);
- the moderation log (<submissions root>/moderation.jsonl): unreadable lines and dates in the
  future (moderation between replicas follows the repo's commit order, never these dates);
- what the last pull from the results repo skipped (<data root>/_hub/rejected.json, written by
  evaluator.hub.checks): rows, shards and benchmarks that failed a check, with why.

A page calls it behind the maintainer token; it never raises on a bad file (that is a problem
in the list), so a corrupt file cannot take the page down. See docs/ARCHITECTURE.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from evaluator.core.errors import CorruptRunError
from evaluator.core.types import GRADE_SCHEMA, LABEL_SCHEMA, PREDICTION_SCHEMA, SAMPLE_SCHEMA
from evaluator.store import evidence_file, ingested, layout, runs

KINDS: tuple[str, ...] = (
    "run",
    "benchmark",
    "job",
    "submission",
    "moderation",
    "reported",
    "llm-cache",
    "hub",
)
FUTURE_S = 86_400  # a moderation entry dated further ahead than this is named
MAX_CACHE_ENTRIES = 200_000  # a scan stops (and says so) after this many cache files


@dataclass(frozen=True)
class StoreProblem:
    kind: str  # one of KINDS
    path: str
    problem: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.path}: {self.problem}"


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:300] if text else type(e).__name__


def check_parquet(path: Path, schema: pa.Schema, required: bool = True) -> str | None:
    """What is wrong with a Parquet file against its schema (None when nothing is): missing,
    unreadable (truncated), a schema column missing or of another type. Reads the footer and
    then the data, so a damaged page is found too."""
    if not path.is_file():
        return f"{path.name} is missing" if required else None
    try:
        pf = pq.ParquetFile(path)
        have = pf.schema_arrow
    except (OSError, pa.ArrowException) as e:
        return f"{path.name} is unreadable ({_first_line(e)})"
    for f in schema:
        i = have.get_field_index(f.name)
        if i < 0:
            if f.name in ("sample_id",):
                return f"{path.name} has no {f.name!r} column"
            continue
        got = have.field(i).type
        if got != f.type and not (pa.types.is_null(got) or _compatible(got, f.type)):
            return f"{path.name}: column {f.name!r} is {got}, expected {f.type}"
    try:
        pf.read()
    except (OSError, pa.ArrowException) as e:
        return f"{path.name} is unreadable ({_first_line(e)})"
    return None


def _compatible(got: pa.DataType, want: pa.DataType) -> bool:
    """Types the readers accept for a column: any integer or float for a number, large
    strings for strings."""
    if pa.types.is_floating(want) or pa.types.is_integer(want):
        return pa.types.is_integer(got) or pa.types.is_floating(got)
    if pa.types.is_string(want):
        return pa.types.is_large_string(got) or pa.types.is_dictionary(got)
    if pa.types.is_boolean(want):
        return pa.types.is_boolean(got)
    return False


def run_problems(root: Path | None = None) -> list[StoreProblem]:
    runs.materialize(root)  # pulled runs still in packs become folders first
    d = layout.runs_dir(root)
    out: list[StoreProblem] = []
    if not d.is_dir():
        return out
    for run_dir in sorted(p for p in d.iterdir() if p.is_dir()):
        try:
            runs.read_record(run_dir)
        except CorruptRunError as e:
            out.append(StoreProblem("run", str(run_dir), e.problem))
            continue
        for name, schema, required in (
            (layout.PREDICTIONS_FILE, PREDICTION_SCHEMA, True),
            (layout.LABELS_FILE, LABEL_SCHEMA, False),
            (layout.GRADES_FILE, GRADE_SCHEMA, False),
            (layout.EVIDENCE_FILE, evidence_file.EVIDENCE_SCHEMA, False),
        ):
            why = check_parquet(run_dir / name, schema, required)
            if why:
                out.append(StoreProblem("run", str(run_dir), why))
    return out


def benchmark_problems(root: Path | None = None) -> list[StoreProblem]:
    from evaluator.benchmarks import registry

    d = layout.benchmarks_dir(root)
    out: list[StoreProblem] = []
    if not d.is_dir():
        return out
    known = set(registry.names())
    for bdir in sorted(p for p in d.iterdir() if p.is_dir()):
        where = str(bdir)
        if bdir.name not in known:
            out.append(StoreProblem("benchmark", where, "not a registered benchmark name"))
            continue
        meta = bdir / layout.META_FILE
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
            problem = ingested.meta_problem(data)
            if problem:
                out.append(StoreProblem("benchmark", where, f"{meta.name}: {problem}"))
        except FileNotFoundError:
            out.append(StoreProblem("benchmark", where, f"{meta.name} is missing"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
            out.append(StoreProblem("benchmark", where, f"{meta.name} is not valid JSON ({e})"))
        why = check_parquet(bdir / layout.SAMPLES_FILE, SAMPLE_SCHEMA)
        if why:
            out.append(StoreProblem("benchmark", where, why))
    return out


def job_problems(submissions_root: Path | None = None) -> list[StoreProblem]:
    from evaluator.jobs import queue

    return [StoreProblem("job", str(p), why) for p, why in queue.corrupt_files(submissions_root)]


def submission_problems(submissions_root: Path | None = None) -> list[StoreProblem]:
    d = (submissions_root or layout.submissions_root()) / "records"
    out: list[StoreProblem] = []
    if not d.is_dir():
        return out
    for f in sorted(d.glob("*.json")):
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
            out.append(StoreProblem("submission", str(f), f"not valid JSON ({_first_line(e)})"))
            continue
        if not isinstance(data, dict):
            out.append(StoreProblem("submission", str(f), "not a JSON object"))
        elif data.get("id") != f.stem:
            out.append(StoreProblem("submission", str(f), "its id does not match the file name"))
        elif not isinstance(data.get("status"), str) or not isinstance(data.get("meta"), dict):
            out.append(StoreProblem("submission", str(f), "no status or no metadata"))
    return out


def reported_problem(f: Path) -> str | None:
    """What is wrong with a reported CSV (None when nothing is): readable, the required columns,
    numeric values."""
    try:
        df = pd.read_csv(f, dtype=str, keep_default_na=False)
    except (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError) as e:
        return f"unreadable CSV ({_first_line(e)})"
    missing = [c for c in layout.REPORTED_REQUIRED if c not in df.columns]
    if missing:
        return f"no column(s) {', '.join(missing)}"
    values = df["value"].str.strip()
    bad = values[(values != "") & pd.to_numeric(values, errors="coerce").isna()]
    if len(bad):
        line = int(bad.index[0]) + 2  # the header is line 1
        return f"{len(bad)} value(s) are not numbers, e.g. {bad.iloc[0][:40]!r} on line {line}"
    return None


def reported_problems(root: Path | None = None) -> list[StoreProblem]:
    out: list[StoreProblem] = []
    for f in layout.reported_files(root):  # the tables the board reads
        why = reported_problem(f)
        if why:
            out.append(StoreProblem("reported", str(f), why))
    return out


def llm_cache_problems(root: Path | None = None) -> list[StoreProblem]:
    from evaluator.llm.cache import default_dir
    from evaluator.llm.clients import ChatResponse

    d = default_dir(root)
    out: list[StoreProblem] = []
    if not d.is_dir():
        return out
    for n, f in enumerate(sorted(d.glob("*/*.json"))):
        if n >= MAX_CACHE_ENTRIES:
            out.append(
                StoreProblem("llm-cache", str(d), f"only the first {n:,} entries were checked")
            )
            break
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("key") != f.stem:
                raise ValueError("its key does not match the file name")
            ChatResponse.from_json(data.get("response") or {})
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
            out.append(StoreProblem("llm-cache", str(f), f"not valid JSON ({_first_line(e)})"))
        except (ValueError, TypeError, AttributeError) as e:
            out.append(StoreProblem("llm-cache", str(f), _first_line(e)))
    return out


def verify_problems(root: Path | None = None, full: bool = False) -> list[StoreProblem]:
    """Readable runs whose recorded numbers do not follow from their predictions and the
    benchmark's samples (evaluator.verify: each run scored again)."""
    from evaluator.verify import verify_run  # the scorer: only when asked to verify

    runs.materialize(root)
    d = layout.runs_dir(root)
    out: list[StoreProblem] = []
    for run_dir in sorted(p for p in d.iterdir() if p.is_dir()) if d.is_dir() else []:
        try:
            found = verify_run(run_dir, root, full)
        except CorruptRunError:
            continue  # run_problems names it
        except Exception as e:  # one unreadable run must not stop the check of the others
            found = [f"could not be checked: {_first_line(e)}"]
        out += [StoreProblem("run", str(run_dir), p) for p in found if "cannot be checked" not in p]
    return out


def duplicate_problems(root: Path | None = None) -> list[StoreProblem]:
    """Submitted runs of one benchmark made from the same predictions (the first, by creation
    time, is the original)."""
    listing = runs.list_runs(root, include_hidden=True, include_superseded=True).runs
    first: dict[tuple[str, str, str], str] = {}
    out: list[StoreProblem] = []
    for r in sorted(listing, key=lambda r: (r.created_at, r.run_id)):
        sub = r.submission or {}
        if r.origin != "submitted" or r.supersedes:
            continue  # a judged copy carries its original's submission
        keys = [
            (r.benchmark, k, str(sub[k])) for k in ("file_sha256", "predictions_sha") if sub.get(k)
        ]
        seen = next((first[k] for k in keys if k in first), None)
        if seen is not None:
            where = str(layout.run_dir(r.run_id, root))
            out.append(
                StoreProblem("run", where, f"a duplicate of run {seen} (the same predictions)")
            )
            continue
        for k in keys:
            first[k] = r.run_id
    return out


def moderation_problems(submissions_root: Path | None = None) -> list[StoreProblem]:
    from datetime import UTC, datetime

    f = (submissions_root or layout.submissions_root()) / "moderation.jsonl"
    out: list[StoreProblem] = []
    if not f.is_file():
        return out
    now = datetime.now(UTC).timestamp()
    for n, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            at = datetime.fromisoformat(str(entry["at"]))
            if at.tzinfo is None:
                at = at.replace(tzinfo=UTC)
            if not isinstance(entry["runs"], list) or entry["action"] not in (
                "hide",
                "show",
                "delete",
            ):
                raise ValueError("no action or no runs")
        except (ValueError, KeyError, TypeError, RecursionError) as e:
            out.append(
                StoreProblem("moderation", f"{f}:{n}", f"unreadable entry ({_first_line(e)})")
            )
            continue
        if at.timestamp() - now > FUTURE_S:
            out.append(
                StoreProblem(
                    "moderation",
                    f"{f}:{n}",
                    f"dated {entry['at']}, in the future (a wrong clock; the order between "
                    "replicas is the results repo's commit order, not this date)",
                )
            )
    return out


def hub_problems(root: Path | None = None) -> list[StoreProblem]:
    """What the last pull skipped from the results repo, with why (evaluator.hub.checks)."""
    from evaluator.hub.rejected import rejected_problems

    d = root or layout.data_root()
    where = f"{d / '_hub'} (the results repo, as last pulled)"
    return [StoreProblem("hub", where, why) for why in rejected_problems(d)]


def find_problems(
    data_root: Path | None = None, submissions_root: Path | None = None, verify: bool = False
) -> list[StoreProblem]:
    """Every corrupt file of the store, in KINDS order (never raises on a bad file); with
    `verify`, also every run whose numbers do not follow from its predictions."""
    return [
        *run_problems(data_root),
        *(verify_problems(data_root) if verify else []),
        *benchmark_problems(data_root),
        *job_problems(submissions_root),
        *duplicate_problems(data_root),
        *submission_problems(submissions_root),
        *moderation_problems(submissions_root),
        *reported_problems(data_root),
        *llm_cache_problems(data_root),
        *hub_problems(data_root),
    ]
