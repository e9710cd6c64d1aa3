"""The submission service: an uploaded prediction file becomes a run on the board, or a precise
list of what is wrong with it. The Submit page, `python -m evaluator submit` and the benchmark
script all go through `submit()`.

Steps, each one durable before the next starts (submissions root = $FACTBOARD_SUBMISSIONS):

1. receive: a marker `inflight/<id>` and a record `records/<id>.json` (status "receiving": the
   form's metadata, the contact email) are written, then the bytes are saved to
   `uploads/<id>.upload` (fsync'ed, renamed into place) and the record says "received". The id
   is generated; the user's file name is only kept as text in the record.
2. validate: the metadata (model-name rules, URL, ...) and the file (validation.py), against
   the ingested benchmark's sample ids; every problem at once. A rejected file's bytes are
   deleted; its record keeps the problems.
3. score it (threshold policy from the engine), then, under the submissions lock, check that it
   is not a duplicate and mark the record "accepted". A duplicate is the same file or the same
   predictions, or what is scored: the same final labels, or the same scores rounded, on the
   scored split as another submission (fingerprints.scored_fingerprints), whatever else
   differs; or the same model name on the same benchmark version, names compared by
   evaluator.core.vocabulary.model_key (NFKC, case, separators and Unicode look-alikes such as
   Cyrillic "Р" folded).
4. write the run (origin "submitted"; its id is derived from the submission id, so writing it
   again finds it instead of making a second one), queue a judge job when the file has
   explanations and a judge is configured ($FACTBOARD_JUDGE="provider:model",
   $FACTBOARD_JUDGE_PROTOCOL, default EvalV4), mark the record "scored" and drop the marker.

Quotas (quotas.py): before the bytes are saved, under the lock, a submitter's and a benchmark's
submissions per day and bytes kept are checked; over a limit, the file is refused with a
message saying which, and its bytes are never saved. Maintainers (`exempt=True`) are exempt.

A crash anywhere leaves the marker: `recover()` (run by the worker) picks the submission up where
it stopped. Runs are staged then renamed (runs.write_run), so no partial run is ever visible. The
contact email is stored in the record only: never in run.json, an export or a page.

Beside this module: records.py (the submissions root: ids, records, uploads, markers, lock),
validation.py (the file format and its parser), moderation.py (hide/show/delete, the maintainer
token), quotas.py (limits per submitter and per benchmark) and report.py (a scored run described
to the submitter). See docs/ARCHITECTURE.md.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import pandas as pd
import pyarrow.parquet as pq

from evaluator import runner, scorer
from evaluator.benchmarks import registry
from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core.choices import DEFAULT_JUDGE_PROTOCOL
from evaluator.core.errors import FactBoardError
from evaluator.core.scoring import Scored, ScoreOptions, score
from evaluator.core.types import ModelInfo, RunConfig, RunRecord
from evaluator.core.vocabulary import model_key
from evaluator.jobs import queue
from evaluator.llm.prompts import JUDGE_PROTOCOLS  # the registered judge protocols
from evaluator.store import fingerprints, ingested, layout, runs
from evaluator.submissions import quotas, recipes
from evaluator.submissions import validation as submissions
from evaluator.submissions.records import (
    TERMINAL,
    MetaJSON,
    SubmissionRecord,
    dirs,
    finish,
    inflight_records,
    locked,
    new_submission_id,
    read_submission,
    record_path,
    root_dir,
    run_id_for,
    save_record,
    upload_path,
)

RECOVER_GRACE_SECONDS = 60.0


@dataclass(frozen=True)
class SubmissionMeta:
    """What the form (or the CLI) says about the submission."""

    benchmark: str
    model_name: str
    kind: str = "non-llm"
    org: str | None = None
    params: str | None = None
    url: str | None = None
    description: str | None = None
    email: str | None = None
    split: str | None = None  # None: the engine's default (test when there is a dev split)
    threshold_policy: str = "auto"
    threshold: float | None = None
    # how the predictions were made (evaluator.submissions.recipes): a JSON object, or None for
    # a self-reported submission
    recipe: Mapping[str, object] | None = None

    def model(self) -> ModelInfo:
        return ModelInfo(
            name=self.model_name,
            kind=self.kind,  # type: ignore[arg-type]
            org=self.org or None,
            params=self.params or None,
            url=self.url or None,
            description=self.description or None,
        )

    def to_json(self) -> MetaJSON:
        """The form's words as the submission record keeps them."""
        return {
            "benchmark": self.benchmark,
            "model_name": self.model_name,
            "kind": self.kind,
            "org": self.org,
            "params": self.params,
            "url": self.url,
            "description": self.description,
            "email": self.email,
            "split": self.split,
            "threshold_policy": self.threshold_policy,
            "threshold": self.threshold,
            "recipe": None if self.recipe is None else dict(self.recipe),
        }

    @classmethod
    def from_json(cls, meta: MetaJSON) -> SubmissionMeta:
        return cls(**meta)


@dataclass
class SubmitResult:
    submission_id: str
    status: str  # scored | rejected | received | accepted (the last two: still in progress)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    run_id: str | None = None
    job_id: str | None = None
    record: RunRecord | None = None

    @property
    def ok(self) -> bool:
        return self.status == "scored"


# --------------------------------------------------------------------------------------------
# 1. receive


def _read_capped(source: bytes | BinaryIO) -> tuple[bytes, bool]:
    """(bytes, too_big): never reads more than the size limit plus one byte."""
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source) if not isinstance(source, bytes) else source
        return data, len(data) > submissions.MAX_BYTES
    data = source.read(submissions.MAX_BYTES + 1)
    return data, len(data) > submissions.MAX_BYTES


def receive(
    source: bytes | BinaryIO,
    filename: str | None,
    meta: SubmissionMeta,
    submissions_root: Path | None = None,
    submitter: str | None = None,
    exempt: bool = False,
) -> tuple[str, bytes | None]:
    """Save the upload under a generated name before anything else; (submission id, bytes).

    The bytes are None when the upload is over the size limit or a quota (quotas.py; not for
    a maintainer, `exempt`): then nothing but the record (status "rejected") is kept.
    submitter: the key the submitter's quota is kept under (quotas.submitter_key), stored in
    the private record only."""
    root = root_dir(submissions_root)
    try:
        return _receive(root, source, filename, meta, submitter, exempt)
    except OSError as e:  # a full disk, a read-only or vanished folder: nothing half kept
        raise StorageError(
            f"the upload could not be saved on the server ({e.strerror or type(e).__name__}"
            f"{': the disk is full' if e.errno in (errno.ENOSPC, errno.EDQUOT) else ''}); "
            "nothing was stored and no quota was used: try again later, and tell the board's "
            "maintainers if it persists"
        ) from None


class StorageError(FactBoardError):
    """The server could not store what it received (a full disk, a read-only folder)."""


def _receive(
    root: Path,
    source: bytes | BinaryIO,
    filename: str | None,
    meta: SubmissionMeta,
    submitter: str | None,
    exempt: bool,
) -> tuple[str, bytes | None]:
    d = dirs(root)
    sid = new_submission_id()
    try:
        return _receive_as(sid, d, root, source, filename, meta, submitter, exempt)
    except OSError:
        # what was written of this submission goes: an upload that was not kept uses no quota
        (d["inflight"] / sid).unlink(missing_ok=True)
        (d["uploads"] / f".{sid}.part").unlink(missing_ok=True)
        (d["uploads"] / f"{sid}.upload").unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            record_path(root, sid).unlink(missing_ok=True)
        raise


def _receive_as(
    sid: str,
    d: dict[str, Path],
    root: Path,
    source: bytes | BinaryIO,
    filename: str | None,
    meta: SubmissionMeta,
    submitter: str | None,
    exempt: bool,
) -> tuple[str, bytes | None]:
    (d["inflight"] / sid).touch()
    now = runs.now_iso()
    rec: SubmissionRecord = {
        "id": sid,
        "status": "receiving",
        "created_at": now,
        "updated_at": now,
        "meta": meta.to_json(),
        "filename": (filename or "")[-200:] or None,
        "size": None,
        "sha256": None,
        "problems": [],
        "warnings": [],
        "run_id": None,
        "job_id": None,
        "submitter": submitter,
    }
    save_record(root, rec)
    data, too_big = _read_capped(source)
    if too_big:
        msg = f"the file is larger than the {submissions.MAX_MB} MB limit"
        finish(root, rec, "rejected", problems=[msg])
        return sid, None
    if not exempt:
        with locked(root):
            over = quotas.check(root, submitter, meta.benchmark, len(data), exclude=sid)
            if over is not None:
                finish(root, rec, "rejected", problems=[over], quota_refused=True)
                return sid, None
            save_record(root, rec, size=len(data))  # counted by the next check at once
    part = d["uploads"] / f".{sid}.part"
    with open(part, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.rename(part, d["uploads"] / f"{sid}.upload")
    sha = hashlib.sha256(data).hexdigest()
    save_record(root, rec, status="received", size=len(data), sha256=sha)
    return sid, data


# --------------------------------------------------------------------------------------------
# 2. validate


@dataclass
class _Checked:
    spec: BenchmarkSpec
    version: str
    samples: pd.DataFrame
    predictions: pd.DataFrame
    fmt: str | None
    warnings: list[str]


def _scored_splits(spec: BenchmarkSpec, split: str | None) -> list[str]:
    if split:
        return [split]
    return ["test"] if "dev" in spec.splits and "test" in spec.splits else list(spec.splits)


def benchmark_choices(data_root: Path | None = None) -> list[str]:
    """Ingested benchmarks that take prediction files (not the explanation-grading studies)."""
    return [n for n in ingested.names(data_root) if registry.get(n).task != "explanation-grading"]


def check_submission(
    data: bytes, filename: str | None, meta: SubmissionMeta, data_root: Path | None = None
) -> tuple[list[str], _Checked | None]:
    """Every problem with the metadata and the file (pure except for reading the benchmark)."""
    problems = [
        str(p)
        for p in submissions.check_metadata(
            meta.model_name,
            meta.kind,
            meta.org,
            meta.params,
            meta.url,
            meta.description,
            meta.email,
        )
    ]
    problems += recipes.parse_recipe(meta.recipe)[1]
    try:
        spec = registry.get(meta.benchmark)
        if meta.benchmark not in benchmark_choices(data_root):
            raise FactBoardError(
                f"benchmark {meta.benchmark!r} does not take submissions here; choose one of "
                f"{', '.join(benchmark_choices(data_root)) or '(none ingested)'}"
            )
        bmeta = ingested.load_meta(meta.benchmark, data_root)
        samples = ingested.load_samples(meta.benchmark, data_root)
    except FactBoardError as e:
        return problems + [str(e)], None
    if meta.split is not None and meta.split not in spec.splits:
        problems.append(f"split {meta.split!r} is not one of {', '.join(spec.splits)}")
        return problems, None
    ids = samples["sample_id"].tolist()
    v = submissions.validate_predictions(data, filename, known_ids=set(ids))
    file_problems = list(v.problems)
    if v.seen_ids:
        splits = set(_scored_splits(spec, meta.split))
        units_of = samples["unit"].tolist()
        units = {u for i, u in zip(ids, units_of, strict=True) if i in v.seen_ids}
        if len(units) > 1:
            file_problems.append(
                submissions.Problem(
                    None,
                    f"the file mixes {' and '.join(sorted(units))} ids: predict one unit "
                    f"({' or '.join(spec.units)})",
                )
            )
        elif units:
            need = {
                i
                for i, u, sp in zip(ids, units_of, samples["split"].tolist(), strict=True)
                if u in units and sp in splits
            }
            gap = submissions.missing_ids_problem(need, v.seen_ids)
            if gap is not None:
                file_problems.append(gap)
    problems += [str(p) for p in file_problems]
    if problems or v.predictions is None:
        return problems, None
    return [], _Checked(spec, bmeta["version"], samples, v.predictions, v.format, v.warnings)


def _score(checked: _Checked, meta: SubmissionMeta, resamples: int) -> Scored:
    opts = ScoreOptions(
        policy=meta.threshold_policy,
        threshold=meta.threshold,
        splits=(meta.split,) if meta.split else None,
        resamples=resamples,
    )
    return score(checked.spec, checked.samples, checked.predictions, opts)


# --------------------------------------------------------------------------------------------
# 3. duplicates


def _same_scored(mine: dict[str, str], other: Mapping[str, object]) -> bool:
    return any(other.get(k) == v for k, v in mine.items())


def _duplicates(
    meta: SubmissionMeta,
    sha256: str | None,
    preds_sha: str,
    version: str,
    sid: str,
    data_root: Path | None,
    root: Path,
    scored_fp: dict[str, str] | None = None,
) -> list[str]:
    """Why this submission repeats an earlier one (empty when it does not). scored_fp: its
    scored fingerprints (fingerprints.scored_fingerprints), once it is scored; sha256: the upload's
    (None: not known, matching nothing)."""
    name = model_key(meta.model_name)
    same_file: str | None = None
    same_scored: str | None = None
    same_name: str | None = None
    listing = runs.list_runs(
        data_root, benchmark=meta.benchmark, include_hidden=True, include_superseded=True
    )
    for r in listing.runs:
        sub = r.submission or {}
        if sub.get("submission_id") == sid:
            continue
        if same_file is None and (
            (sha256 is not None and sub.get("file_sha256") == sha256)
            or sub.get("predictions_sha") == preds_sha
        ):
            same_file = f"run {r.run_id} ({r.model.name!r}, {r.created_at[:10]})"
        if (
            same_file is None
            and same_scored is None
            and scored_fp
            and r.origin == "submitted"  # a baseline or a released run may be matched
            and r.benchmark_version == version
            and _same_scored(scored_fp, fingerprints.fingerprints_of(r, data_root))
        ):
            same_scored = f"run {r.run_id} ({r.model.name!r}, {r.created_at[:10]})"
        if same_name is None and r.benchmark_version == version and model_key(r.model.name) == name:
            same_name = f"run {r.run_id}"
    for other in inflight_records(root):
        if other["id"] == sid or other.get("status") != "accepted":
            continue
        ometa = other.get("meta")
        if ometa is None or ometa.get("benchmark") != meta.benchmark:
            continue
        if same_file is None and (
            (sha256 is not None and other.get("sha256") == sha256)
            or other.get("predictions_sha") == preds_sha
        ):
            same_file = f"submission {other['id']} (being scored)"
        if (
            same_scored is None
            and scored_fp
            and other.get("benchmark_version") == version
            and _same_scored(scored_fp, other.get("scored") or {})
        ):
            same_scored = f"submission {other['id']} (being scored)"
        if (
            same_name is None
            and other.get("benchmark_version") == version
            and model_key(str(ometa.get("model_name", ""))) == name
        ):
            same_name = f"submission {other['id']} (being scored)"
    out = []
    if same_file:
        out.append(
            f"duplicate submission: the same predictions were already submitted as {same_file}"
        )
    elif same_scored:
        out.append(
            "duplicate submission: it scores exactly as "
            f"{same_scored} (the same final labels or the same scores on the scored split, "
            "whatever else differs)"
        )
    if same_name:
        out.append(
            f"duplicate submission: a model named {meta.model_name!r} already has a run on "
            f"{meta.benchmark} (same benchmark version): {same_name}; choose another name, or "
            "ask a maintainer to remove the earlier run"
        )
    return out


# --------------------------------------------------------------------------------------------
# 4. the run, the judge job


def judge_config() -> tuple[str, str] | None:
    """(judge, protocol) from $FACTBOARD_JUDGE and $FACTBOARD_JUDGE_PROTOCOL, or None."""
    judge = os.environ.get("FACTBOARD_JUDGE", "").strip()
    if not judge:
        return None
    provider, sep, model = judge.partition(":")
    if not sep or not provider.strip() or not model.strip():
        raise FactBoardError(f"FACTBOARD_JUDGE={judge!r} is not of the form provider:model")
    protocol = os.environ.get("FACTBOARD_JUDGE_PROTOCOL", "").strip() or DEFAULT_JUDGE_PROTOCOL
    if protocol not in JUDGE_PROTOCOLS:
        raise FactBoardError(
            f"FACTBOARD_JUDGE_PROTOCOL={protocol!r} is not one of {', '.join(JUDGE_PROTOCOLS)}"
        )
    return judge, protocol


def _enqueue_judge(
    rec: SubmissionRecord, run_id: str, preds: pd.DataFrame, root: Path
) -> tuple[str | None, str | None]:
    """(job id, note): a judge job when the predictions carry explanations and a judge is set."""
    if preds["explanation"].notna().sum() == 0:
        return None, None
    try:
        cfg = judge_config()
    except FactBoardError as e:
        return None, f"explanations stored but not graded: {e}"
    if cfg is None:
        return None, "explanations stored; no judge is configured, so they are not graded yet"
    job = queue.enqueue(
        "judge",
        {"run_id": run_id, "judge": cfg[0], "protocol": cfg[1]},
        job_id=f"judge-{rec['id']}",
        root=root,
    )
    return job.id, f"explanations queued for grading by {cfg[0]} ({cfg[1]}): job {job.id}"


def _stored_recipe(meta: SubmissionMeta, checked: _Checked) -> recipes.RecipeJSON | None:
    """The recipe as the run keeps it: what the submitter said, with the splits and the unit
    the file predicted (what a reproduction runs on)."""
    recipe, _ = recipes.parse_recipe(meta.recipe)
    if recipe is None:
        return None
    ids = set(checked.predictions["sample_id"].astype(str))
    s = checked.samples[checked.samples["sample_id"].astype(str).isin(ids)]
    out = recipe.to_json()
    out["splits"] = [sp for sp in checked.spec.splits if sp in set(s["split"])]
    units = sorted(set(s["unit"]))
    if len(units) == 1 and recipe.kind != "llm":
        out["unit"] = units[0]
    return out


def _write(
    rec: SubmissionRecord,
    meta: SubmissionMeta,
    checked: _Checked,
    scored: Scored,
    data_root: Path | None,
    root: Path,
) -> SubmitResult:
    run_id = run_id_for(rec["id"], meta.benchmark, meta.model_name)
    # the run's `submission`: the fingerprints of the file, the predictions and what they scored
    submission: dict[str, object] = {
        "submission_id": rec["id"],
        "file_sha256": rec["sha256"],
        "predictions_sha": rec.get("predictions_sha"),
        **(rec.get("scored") or {}),
        "format": checked.fmt,
        "rows": int(len(checked.predictions)),
        "submitted_at": rec["created_at"],
    }
    recipe = _stored_recipe(meta, checked)
    if recipe is not None:
        submission["recipe"] = recipe
    config = RunConfig(extra={"split": meta.split} if meta.split else {})
    record = scorer.build_record(
        checked.spec,
        checked.version,
        scored,
        meta.model(),
        "submitted",
        config,
        submission,
        run_id,
    )
    path, _ = runner.write_run_once(
        record, checked.predictions, None, data_root, scored.final_labels
    )
    stored = runs.read_record(path)
    job_id, note = _enqueue_judge(rec, run_id, checked.predictions, root)
    warnings = list(checked.warnings) + ([note] if note else [])
    finish(root, rec, "scored", run_id=run_id, job_id=job_id, warnings=warnings)
    return SubmitResult(rec["id"], "scored", [], warnings, run_id, job_id, stored)


# --------------------------------------------------------------------------------------------
# the whole path


def submit(
    source: bytes | BinaryIO,
    filename: str | None,
    meta: SubmissionMeta,
    *,
    data_root: Path | None = None,
    submissions_root: Path | None = None,
    resamples: int = 1000,
    submitter: str | None = None,
    exempt: bool = False,
) -> SubmitResult:
    """Save, validate, score and store an uploaded prediction file (see the module doc).

    submitter: the quota key (quotas.submitter_key: the HF user, else a stable client key);
    exempt: a maintainer's submission, held to no quota.
    An unexpected error after the file is saved does not lose it: the result then has status
    "received" or "accepted" and says so in its warnings, and the worker finishes the job."""
    sid, data = receive(source, filename, meta, submissions_root, submitter, exempt)
    try:
        return process(sid, data_root, submissions_root, data=data, resamples=resamples)
    except Exception as e:
        rec = read_submission(sid, submissions_root)
        if rec["status"] in TERMINAL:
            return _result_of(rec, data_root)
        return SubmitResult(
            sid,
            rec["status"],
            warnings=[
                f"the file is saved as submission {sid}, but processing it stopped on an "
                f"unexpected error ({type(e).__name__}: {e}); the worker will finish it"
            ],
        )


def _meta_of(rec: SubmissionRecord) -> SubmissionMeta:
    return SubmissionMeta.from_json(rec["meta"])


def _result_of(rec: SubmissionRecord, data_root: Path | None) -> SubmitResult:
    stored = None
    run_id = rec.get("run_id")
    if run_id:
        with contextlib.suppress(FactBoardError):
            stored = runs.read_record(runs.find_run(run_id, data_root))
    return SubmitResult(
        rec["id"],
        rec["status"],
        list(rec.get("problems") or []),
        list(rec.get("warnings") or []),
        rec.get("run_id"),
        rec.get("job_id"),
        stored,
    )


def _reject(root: Path, rec: SubmissionRecord, problems: list[str]) -> SubmitResult:
    """Refuse the submission. The bytes of a file refused on first sight are deleted; those of
    a file that had been accepted (refused later, because the benchmark changed) are kept."""
    if rec["status"] != "accepted":
        upload_path(rec["id"], root).unlink(missing_ok=True)
    finish(root, rec, "rejected", problems=problems)
    return SubmitResult(rec["id"], "rejected", problems, list(rec.get("warnings") or []))


def process(
    sid: str,
    data_root: Path | None = None,
    submissions_root: Path | None = None,
    data: bytes | None = None,
    resamples: int = 1000,
) -> SubmitResult:
    """Take a received submission as far as it goes: rejected, or scored and on the board.

    Safe to call again on the same submission (after a crash, or from two processes at once):
    every step checks the record's state, and the run id is fixed by the submission id."""
    root = root_dir(submissions_root)
    rec = read_submission(sid, root)
    if rec["status"] in TERMINAL:
        return _result_of(rec, data_root)
    if rec["status"] == "receiving":
        raise FactBoardError(f"submission {sid} was not fully received")
    meta = _meta_of(rec)
    if data is None:
        try:
            data = upload_path(sid, root).read_bytes()
        except FileNotFoundError:
            raise FactBoardError(f"submission {sid}: its upload is missing") from None
    problems, checked = check_submission(data, rec.get("filename"), meta, data_root)
    if checked is None:
        if rec["status"] == "accepted":  # the benchmark changed after acceptance
            problems = [f"the benchmark changed since the file was accepted: {p}" for p in problems]
        return _reject(root, rec, problems)
    preds_sha = fingerprints.predictions_hash(checked.predictions)
    if rec["status"] == "received":
        dup = _duplicates(meta, rec["sha256"], preds_sha, checked.version, sid, data_root, root)
        if dup:
            return _reject(root, rec, dup)
    try:
        scored = _score(checked, meta, resamples)
    except FactBoardError as e:
        return _reject(root, rec, [str(e)])
    scored_fp = fingerprints.scored_fingerprints(scored.final_labels)
    if rec["status"] == "received":
        with locked(root):
            rec = read_submission(sid, root)
            if rec["status"] == "received":
                dup = _duplicates(
                    meta,
                    rec["sha256"],
                    preds_sha,
                    checked.version,
                    sid,
                    data_root,
                    root,
                    scored_fp,
                )
                if dup:
                    return _reject(root, rec, dup)
                save_record(
                    root,
                    rec,
                    status="accepted",
                    predictions_sha=preds_sha,
                    scored=scored_fp,
                    benchmark_version=checked.version,
                    warnings=list(checked.warnings),
                )
        if rec["status"] in TERMINAL:
            return _result_of(rec, data_root)
    return _write(rec, meta, checked, scored, data_root, root)


def recover(
    data_root: Path | None = None,
    submissions_root: Path | None = None,
    grace: float = RECOVER_GRACE_SECONDS,
) -> list[str]:
    """Finish the submissions a crashed process left in flight (older than `grace` seconds);
    returns one line per submission handled."""
    root = root_dir(submissions_root)
    lines = [
        f"removed {name} from _staging/ (left by a process that died)"
        for name in runs.sweep_staging(data_root)
    ]
    d = root / "inflight"
    if not d.is_dir():
        return lines
    now = time.time()
    for marker in sorted(d.iterdir()):
        try:
            if now - marker.stat().st_mtime < grace:
                continue
            sid = marker.name
            try:
                rec = read_submission(sid, root)
            except FactBoardError:
                marker.unlink(missing_ok=True)  # crashed before anything was received
                lines.append(f"submission {sid}: nothing was received; marker removed")
                continue
            if rec["status"] == "receiving":
                saved = upload_path(sid, root)
                if not saved.is_file():  # the bytes never reached their final name
                    (root / "uploads" / f".{sid}.part").unlink(missing_ok=True)
                    finish(root, rec, "abandoned", problems=["the upload was interrupted"])
                    lines.append(f"submission {sid}: upload interrupted; abandoned")
                    continue
                data = saved.read_bytes()  # complete (renamed into place): carry on
                sha = hashlib.sha256(data).hexdigest()
                save_record(root, rec, status="received", size=len(data), sha256=sha)
            res = process(sid, data_root, root)
            what = f"run {res.run_id}" if res.ok else "; ".join(res.problems)[:300]
            lines.append(f"submission {sid}: {res.status} ({what})")
        except FileNotFoundError:
            continue
        except Exception as e:  # keep going: one bad submission must not stop the others
            lines.append(f"submission {marker.name}: could not be processed: {e}")
    return lines


# --------------------------------------------------------------------------------------------
# helpers for the page and the CLI


def template_splits(spec_splits: Sequence[str], split: str) -> list[str]:
    """The splits a template lists: dev first when test is scored and the benchmark has dev
    (a scores-only detector needs dev scores for its threshold), then the scored split."""
    if split != "dev" and "dev" in spec_splits:
        return ["dev", split]
    return [split]


def template_csv(benchmark: str, split: str | None = None, data_root: Path | None = None) -> str:
    """The prediction-file template: the benchmark's sample ids (of the unit a submission
    predicts) with their split, dev ids first where a scores-only file needs them for its
    threshold (template_splits), then the split scored (`split`, default as a submission's);
    empty label, score and explanation columns. The split column is for the reader: the
    sample id says which split a row is."""
    spec = registry.get(benchmark)
    ingested.load_meta(benchmark, data_root)  # not ingested: says so
    scored = split or _scored_splits(spec, None)[0]
    if scored not in spec.splits:
        raise FactBoardError(f"split {scored!r} is not one of {', '.join(spec.splits)}")
    f = layout.benchmark_dir(benchmark, data_root) / layout.SAMPLES_FILE
    samples = pq.read_table(f, columns=["sample_id", "split", "unit"]).to_pandas()
    samples = samples[samples["unit"] == spec.units[0]]
    parts = [
        samples.loc[samples["split"] == s, ["sample_id", "split"]].sort_values("sample_id")
        for s in template_splits(spec.splits, scored)
    ]
    out = pd.concat(parts, ignore_index=True).assign(label="", score="", explanation="")
    buf = io.StringIO()
    out.to_csv(buf, index=False)
    return buf.getvalue()
