"""Prediction files: parse and validate uploaded bytes, reporting every problem at once.

Pure functions over bytes and strings (docs/ARCHITECTURE.md): nothing here touches the disk.
The format is CSV (comma or tab) or JSON Lines, UTF-8 with or without a BOM, with `sample_id`
plus `label` (0/1, yes/no, consistent/inconsistent, true/false) and/or `score` (a finite float,
higher = more consistent), and an optional `explanation`; FORMAT_HELP documents it for the
Submit page and the CLI.

Files that cannot be a prediction file (too large, an archive, binary, UTF-16, a JSON array, a
header with thousands of columns) are refused from a look at the raw bytes, before anything is
decoded or copied, so memory stays bounded by the upload itself. Problems are bounded too: the
first MAX_PROBLEMS are kept and the rest counted (ProblemList), and a row with a wrong field
count or unreadable JSON counts towards MAX_ROWS like any other. MAX_BYTES is in decimal
megabytes, the unit of Streamlit's upload limit (.streamlit/config.toml), so the page and the
engine refuse the same files. The submission metadata (model name, organisation, URL, ...) is
checked here too, by `check_metadata`.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import unicodedata
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pandas as pd

from evaluator.core import formatting as F
from evaluator.core.errors import ValidationFailed
from evaluator.core.formatting import plural
from evaluator.core.sanitize import CONTROL_CATEGORIES, control_char
from evaluator.core.vocabulary import MODEL_KINDS, model_key

# Streamlit's server.maxUploadSize (.streamlit/config.toml) counts decimal megabytes: the page
# and the engine refuse the same files because this is the same number of bytes
MAX_MB = 50
MAX_BYTES = MAX_MB * 1000 * 1000
MAX_ROWS = 500_000
MAX_COLUMNS = 32
MAX_ID_LEN = 200
MAX_EXPLANATION_CHARS = 20_000
MAX_FIELD_CHARS = 100_000
MAX_LINE_CHARS = 2 * MAX_FIELD_CHARS
SHOW_FIRST = 5
# problems kept per file: the first MAX_PROBLEMS, then one line counting the rest
MAX_PROBLEMS = 100
# a number as Python's float() reads it, without the digit-group underscores it also accepts
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity|nan)", re.I)
# a CSV header longer than this is counted on the raw bytes (no decoding, no copy)
_HEADER_SCAN_BYTES = 4096
_NON_SPACE = re.compile(rb"[^ \t\r\n]")

# split: written by the template for the reader; the sample id says which split a row is
KNOWN_COLUMNS = ("sample_id", "split", "label", "score", "explanation", "raw_output")
LABEL_WORDS = {
    "1": 1,
    "0": 0,
    "1.0": 1,
    "0.0": 0,
    "yes": 1,
    "no": 0,
    "true": 1,
    "false": 0,
    "consistent": 1,
    "inconsistent": 0,
}
LABEL_HELP = "0/1, yes/no, consistent/inconsistent, true/false"
_MAGIC = {
    b"\x1f\x8b": "a gzip archive",
    b"PK\x03\x04": "a zip archive (xlsx, docx and jar files are zip archives too)",
    b"PK\x05\x06": "an empty zip archive",
    b"BZh": "a bzip2 archive",
    b"\xfd7zXZ\x00": "an xz archive",
    b"7z\xbc\xaf\x27\x1c": "a 7-zip archive",
    b"\x28\xb5\x2f\xfd": "a zstd archive",
    b"Rar!\x1a\x07": "a RAR archive",
    b"PAR1": "a Parquet file",
    b"%PDF": "a PDF document",
    b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1": "an old-style Office document (xls, doc)",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"\x7fELF": "an executable (ELF)",
    b"SQLite format 3\x00": "an SQLite database",
}


@dataclass(frozen=True)
class Problem:
    line: int | None  # 1-based line in the file (the header is line 1 in a CSV)
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


class ProblemList(list[Problem]):
    """A list of problems that keeps the first `limit` and counts the others (`dropped`), so a
    hostile file with millions of bad rows costs neither memory nor disk."""

    def __init__(self, limit: int = MAX_PROBLEMS) -> None:
        super().__init__()
        self.limit = limit
        self.dropped = 0

    def append(self, problem: Problem) -> None:
        if len(self) < self.limit:
            super().append(problem)
        else:
            self.dropped += 1

    def always(self, problem: Problem) -> None:
        """Keep a problem whatever the count (the few one-line summaries of a whole file)."""
        super().append(problem)

    def summarised(self) -> list[Problem]:
        """The problems kept, sorted by line, and a last line counting those left out."""
        out = sorted(self, key=lambda p: (p.line is None, p.line or 0))
        if self.dropped:
            out.append(
                Problem(
                    None,
                    f"... and {plural(self.dropped, 'more problem')}; "
                    f"the first {self.limit} are shown",
                )
            )
        return out


@dataclass
class Validation:
    predictions: pd.DataFrame | None
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    format: str | None = None
    # every distinct sample_id the file has a row for (valid row or not), known or not
    seen_ids: set[str] = field(default_factory=set)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def messages(self) -> list[str]:
        return [str(p) for p in self.problems]


def parse_label(value: object) -> int | None:
    """0/1 from the accepted spellings; None when empty; raises ValueError otherwise."""
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        if value in (0, 1):
            return int(value)
        raise ValueError(value)
    if not isinstance(value, str):
        raise ValueError(value)
    text = value.strip().lower()
    if text == "":
        return None
    if text in LABEL_WORDS:
        return LABEL_WORDS[text]
    raise ValueError(value)


def _parse_score(value: object) -> float | None:
    if value is None or (isinstance(value, str) and value.strip() == ""):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(value)
    if isinstance(value, str) and not _NUMBER.fullmatch(value.strip()):
        raise ValueError(value)  # "1_000", "0x10", "1,5": not a number in the file format
    x = float(value)
    if not math.isfinite(x):
        raise OverflowError(value)
    return x


# --------------------------------------------------------------------------------------------
# checks on the raw bytes (no decoding, no copy)


def precheck(data: bytes, filename: str | None = None) -> list[Problem]:
    """Refuse what cannot be a prediction file from the raw bytes alone.

    Empty, over the size limit, an archive or other binary format, UTF-16/32, NUL bytes, a JSON
    array, or a CSV header with more than MAX_COLUMNS columns. Memory use is O(1): only slices
    of a few bytes are made, whatever the size of `data`.
    """
    if _NON_SPACE.search(data) is None:
        return [Problem(None, "the file is empty")]
    if len(data) > MAX_BYTES:
        return [Problem(None, f"the file is larger than the {MAX_MB} MB limit")]
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    for magic, what in _MAGIC.items():
        if data.startswith(magic, bom):
            return [Problem(None, f"the file is {what}; upload plain CSV or JSON Lines")]
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return [Problem(None, "the file is UTF-32; save it as UTF-8")]
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return [Problem(None, "the file is UTF-16; save it as UTF-8")]
    nul = data.find(b"\x00")
    if nul >= 0:
        head = data[:200]
        half = max(1, len(head) // 2)
        if len(head) >= 4 and max(head[0::2].count(0), head[1::2].count(0)) >= 0.4 * half:
            return [
                Problem(
                    None, "the file looks like UTF-16 without a byte-order mark; save it as UTF-8"
                )
            ]
        line = data.count(b"\n", 0, nul) + 1
        return [
            Problem(
                line,
                f"the file contains a NUL byte (offset {nul}): it looks binary, not CSV or "
                "JSON Lines",
            )
        ]
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    m = _NON_SPACE.search(data, start)
    first = data[m.start()] if m else None
    if first == ord("<") and m is not None:
        head = data[m.start() : m.start() + 64].lower()
        if head.startswith((b"<!doctype html", b"<html", b"<?xml", b"<svg")):
            what = (
                "an XML or SVG document" if head.startswith((b"<?xml", b"<svg")) else "an HTML page"
            )
            return [Problem(None, f"the file is {what}; upload plain CSV or JSON Lines")]
    if first == ord("["):
        return [
            Problem(
                None,
                "the file is a JSON array; write one JSON object per line (JSON Lines) instead",
            )
        ]
    if first != ord("{") and not _jsonl_name(filename):
        nl = data.find(b"\n", start)
        end = len(data) if nl < 0 else nl
        if end - start > _HEADER_SCAN_BYTES:
            commas = data.count(b",", start, end)
            tabs = data.count(b"\t", start, end)
            ncols = max(commas, tabs) + 1
            if ncols > MAX_COLUMNS:
                return [
                    Problem(
                        1,
                        f"the header has {F.count(ncols)} columns; at most {MAX_COLUMNS} "
                        "are allowed",
                    )
                ]
            return [
                Problem(
                    1,
                    f"the header line is {F.count(end - start)} bytes long: it cannot be a "
                    f"header of at most {MAX_COLUMNS} column names",
                )
            ]
    return []


def _jsonl_name(filename: str | None) -> bool:
    return (filename or "").lower().endswith((".jsonl", ".ndjson", ".json"))


def _decode(data: bytes) -> tuple[str | None, list[Problem]]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        return None, [
            Problem(
                line,
                f"not valid UTF-8 (byte 0x{data[e.start]:02x} at offset "
                f"{e.start}); save the file as UTF-8",
            )
        ]
    return text, []


def detect_format(text: str, filename: str | None) -> str:
    """'jsonl' when the content starts with '{' or the name says JSON Lines, else 'csv'."""
    if text.lstrip().startswith("{") or _jsonl_name(filename):
        return "jsonl"
    return "csv"


# --------------------------------------------------------------------------------------------
# records


def _csv_records(
    text: str, problems: list[Problem], warnings: list[str]
) -> Iterator[tuple[int, dict[str, object] | None]]:
    nl = text.find("\n")
    first_line = text if nl < 0 else text[:nl]
    delimiter = "\t" if first_line.count("\t") > first_line.count(",") else ","
    csv.field_size_limit(MAX_FIELD_CHARS + 1)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader)
    except StopIteration:
        problems.append(Problem(None, "the file is empty"))
        return
    except csv.Error as e:
        problems.append(Problem(1, f"unreadable CSV header: {e}"))
        return
    header = [h.strip().lower() for h in header]
    if len(header) > MAX_COLUMNS:
        problems.append(
            Problem(
                1,
                f"the header has {F.count(len(header))} columns; at most {MAX_COLUMNS} are allowed",
            )
        )
        return
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        problems.append(Problem(1, f"{plural(len(dup), 'duplicate column')}: {', '.join(dup)}"))
        return
    if not _check_columns(header, problems, warnings):
        return
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            problems.append(Problem(reader.line_num, f"unreadable CSV row: {e}"))
            return
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header):
            problems.append(
                Problem(
                    reader.line_num,
                    f"{len(row)} field{'s' if len(row) != 1 else ''}, the header has {len(header)}",
                )
            )
            yield reader.line_num, None  # a row all the same: it counts towards MAX_ROWS
            continue
        yield reader.line_num, dict(zip(header, row, strict=True))


def _check_columns(
    cols: list[str], problems: list[Problem], warnings: list[str], line: int | None = 1
) -> bool:
    if "sample_id" not in cols:
        shown = ", ".join(c[:40] for c in cols[:MAX_COLUMNS]) or "none"
        hint = ""
        if any(";" in c for c in cols):
            hint = "; the file seems to use ';' as separator: use a comma or a tab"
        problems.append(Problem(line, f"no sample_id column (columns: {shown}){hint}"))
        return False
    if "label" not in cols and "score" not in cols:
        problems.append(Problem(line, "neither a label nor a score column: give at least one"))
        return False
    extra = [c for c in cols if c not in KNOWN_COLUMNS]
    if extra:
        warnings.append(
            f"{plural(len(extra), 'column')} ignored: {', '.join(c[:40] for c in extra[:10])}"
        )
    return True


def _jsonl_records(
    text: str, problems: list[Problem], warnings: list[str]
) -> Iterator[tuple[int, dict[str, object] | None]]:
    checked = False
    for i, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE_CHARS:
            problems.append(Problem(i, f"line longer than {F.count(MAX_LINE_CHARS)} characters"))
            yield i, None
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(Problem(i, f"invalid JSON ({e.msg} at column {e.colno})"))
            yield i, None
            continue
        except RecursionError:
            problems.append(Problem(i, "invalid JSON (nested too deeply)"))
            yield i, None
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(i, f"expected a JSON object, got {type(obj).__name__}"))
            yield i, None
            continue
        if len(obj) > MAX_COLUMNS:
            problems.append(
                Problem(i, f"{F.count(len(obj))} fields; at most {MAX_COLUMNS} are allowed")
            )
            return
        rec = {str(k).strip().lower(): v for k, v in obj.items()}
        if len(rec) != len(obj):
            problems.append(Problem(i, "duplicate field names (they differ only in case)"))
            yield i, None
            continue
        if not checked:
            if not _check_columns(list(rec), problems, warnings, i):
                return
            checked = True
        yield i, rec


def _sample_id(value: object) -> tuple[str | None, str | None]:
    """(id, problem)."""
    if value is None:
        return None, "empty sample_id"
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None, f"sample_id must be a string or an integer, got {type(value).__name__}"
    sid = str(value).strip()
    if not sid:
        return None, "empty sample_id"
    if len(sid) > MAX_ID_LEN:
        return None, f"sample_id longer than {MAX_ID_LEN} characters"
    return sid, None


def _text_field(rec: dict[str, object], key: str, limit: int) -> str | None | ValueError:
    """A row's optional text field (explanation, raw_output), or what is wrong with it."""
    value = rec.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        return ValueError(f"{key} must be text, got {type(value).__name__}")
    if len(value) > limit:
        return ValueError(
            f"{key} of {F.count(len(value))} characters; the limit is {F.count(limit)}"
        )
    return value


def _prediction_row(line: int, sid: str, rec: dict[str, object]) -> dict[str, object] | Problem:
    """One row of the file checked: its label, score, explanation and raw output as the
    predictions frame takes them, or the first problem with it."""
    try:
        label = parse_label(rec.get("label"))
    except ValueError:
        return Problem(line, f"label {rec.get('label')!r} is not one of {LABEL_HELP}")
    try:
        score = _parse_score(rec.get("score"))
    except OverflowError:
        return Problem(line, f"score {rec.get('score')!r} is not finite")
    except ValueError:
        return Problem(line, f"score {rec.get('score')!r} is not a number")
    if label is None and score is None:
        return Problem(line, "neither a label nor a score")
    expl = _text_field(rec, "explanation", MAX_EXPLANATION_CHARS)
    if isinstance(expl, Exception):
        return Problem(line, str(expl))
    raw = _text_field(rec, "raw_output", MAX_FIELD_CHARS)
    if isinstance(raw, Exception):
        return Problem(line, str(raw))
    return {
        "sample_id": sid,
        "label": label,
        "score": score,
        "explanation": expl if expl and expl.strip() else None,
        "raw_output": raw or None,
    }


@dataclass
class _Rows:
    """What a pass over the file's records found: the valid rows, the line each id is first on,
    repeated ids (line, id, first line), ids not in the benchmark (line, id), and how many
    records there were."""

    rows: list[dict[str, object]] = field(default_factory=list)
    first_line: dict[str, int] = field(default_factory=dict)
    duplicates: list[tuple[int, str, int]] = field(default_factory=list)
    unknown: list[tuple[int, str]] = field(default_factory=list)
    n_records: int = 0


def _read_rows(
    records: Iterator[tuple[int, dict[str, object] | None]],
    known_ids: set[str] | None,
    problems: ProblemList,
) -> _Rows:
    """Check each record (at most MAX_ROWS) and keep the valid rows; a row's problem goes to
    `problems`, repeated and unknown ids are collected for one problem each (_file_problems)."""
    out = _Rows()
    for line, rec in records:
        out.n_records += 1
        if out.n_records > MAX_ROWS:
            problems.always(Problem(line, f"more than {F.count(MAX_ROWS)} rows"))
            break
        if rec is None:  # a bad row, already reported
            continue
        sid, bad = _sample_id(rec.get("sample_id"))
        if sid is None:
            problems.append(Problem(line, bad or "empty sample_id"))
            continue
        if sid in out.first_line:
            out.duplicates.append((line, sid, out.first_line[sid]))
            continue
        out.first_line[sid] = line
        if known_ids is not None and sid not in known_ids:
            out.unknown.append((line, sid))
            continue
        row = _prediction_row(line, sid, rec)
        if isinstance(row, Problem):
            problems.append(row)
        else:
            out.rows.append(row)
    return out


def _file_problems(found: _Rows, required_ids: set[str] | None, problems: ProblemList) -> None:
    """The problems of the file as a whole: repeated ids, ids not in the benchmark, no rows,
    required ids without a row."""
    if found.duplicates:
        shown = "; ".join(
            f"{s!r} on line {ln} (first on line {first})"
            for ln, s, first in found.duplicates[:SHOW_FIRST]
        )
        problems.always(
            Problem(
                found.duplicates[0][0],
                f"{plural(len(found.duplicates), 'duplicate sample_id')}: {shown}",
            )
        )
    if found.unknown:
        shown = ", ".join(f"{s!r} (line {ln})" for ln, s in found.unknown[:SHOW_FIRST])
        problems.always(
            Problem(
                found.unknown[0][0],
                f"{plural(len(found.unknown), 'sample_id')} not in the benchmark: {shown}",
            )
        )
    if found.n_records == 0:
        if not problems:
            problems.always(Problem(None, "the file has a header but no prediction rows"))
    elif required_ids is not None:
        gap = missing_ids_problem(required_ids, found.first_line.keys())
        if gap is not None:
            problems.always(gap)


def validate_predictions(
    data: bytes,
    filename: str | None = None,
    known_ids: set[str] | None = None,
    required_ids: set[str] | None = None,
) -> Validation:
    """Parse and check a prediction file; `problems` lists everything wrong, with line numbers.

    known_ids: the benchmark's sample ids (unknown ids are problems).
    required_ids: ids that must all be present (e.g. the scored split), else a problem.
    filename: only its extension is used (.jsonl/.ndjson/.json mean JSON Lines).
    """
    early = precheck(data, filename)
    if early:
        return Validation(None, early)
    text, decode_problems = _decode(data)
    if text is None:
        return Validation(None, decode_problems)
    problems = ProblemList()
    warnings: list[str] = []
    fmt = detect_format(text, filename)
    records = (_jsonl_records if fmt == "jsonl" else _csv_records)(text, problems, warnings)
    found = _read_rows(records, known_ids, problems)
    _file_problems(found, required_ids, problems)
    df = pd.DataFrame(
        found.rows, columns=["sample_id", "label", "score", "explanation", "raw_output"]
    )
    df["label"] = df["label"].astype("Int8")
    df["score"] = df["score"].astype(float)
    return Validation(df, problems.summarised(), warnings, fmt, set(found.first_line))


def missing_ids_problem(required: Collection[str], present: Collection[str]) -> Problem | None:
    """The problem listing how many required ids have no row, with the first few, or None."""
    have = present if isinstance(present, set | frozenset | dict) else set(present)
    missing = sorted(i for i in required if i not in have)
    if not missing:
        return None
    shown = ", ".join(repr(m) for m in missing[:SHOW_FIRST])
    verb = "has" if len(missing) == 1 else "have"
    return Problem(
        None,
        f"{plural(len(missing), 'sample_id')} of the scored split {verb} no prediction, "
        f"e.g. {shown}",
    )


def parse_predictions(
    data: bytes,
    filename: str | None = None,
    known_ids: set[str] | None = None,
    required_ids: set[str] | None = None,
) -> pd.DataFrame:
    """The predictions of a valid file, or ValidationFailed listing every problem."""
    v = validate_predictions(data, filename, known_ids, required_ids)
    if not v.ok or v.predictions is None:
        raise ValidationFailed([str(p) for p in v.problems])
    return v.predictions


# --------------------------------------------------------------------------------------------
# submission metadata

NAME_MIN_CHARS = 2
NAME_MAX_CHARS = 80
ORG_MAX_CHARS = 80
DESCRIPTION_MAX_CHARS = 1000
URL_MAX_CHARS = 300
EMAIL_MAX_CHARS = 254
NAME_PUNCTUATION = " -_.,:;/()[]+&'#@!?*%~="
# human and baseline rows are the board's own: every other model kind can be submitted
SUBMITTABLE_KINDS: tuple[str, ...] = tuple(k for k in MODEL_KINDS if k not in ("human", "baseline"))
_PARAMS = re.compile(r"^[0-9]+(\.[0-9]+)?[KMBTkmbt]?$")
_EMAIL = re.compile(r"^[^@\s<>\"',;]+@[^@\s<>\"',;]+\.[^@\s<>\"',;]+$")


def check_name(value: str | None, what: str = "model name", required: bool = True) -> list[str]:
    """Rules for a name shown on the board (model, organisation). Every broken rule is listed.

    Letters and digits of any script, single-line, no control or invisible characters, starting
    with a letter or a digit (so a spreadsheet never reads it as a formula), and only the
    punctuation in NAME_PUNCTUATION (no < > ` " \\ { } | $ ^).
    """
    limit = NAME_MAX_CHARS if what == "model name" else ORG_MAX_CHARS
    if value is None or not value.strip():
        return [f"{what}: empty (or only spaces)"] if required else []
    out = []
    if len(value) > limit:
        out.append(f"{what}: {F.count(len(value))} characters; at most {limit} are allowed")
    elif len(value.strip()) < NAME_MIN_CHARS:
        out.append(f"{what}: at least {NAME_MIN_CHARS} characters are needed")
    ctrl = control_char(value)
    if ctrl is not None:
        out.append(
            f"{what}: contains a control or invisible character "
            f"(U+{ord(ctrl[1]):04X}) at position {ctrl[0] + 1}"
        )
    if value != value.strip():
        out.append(f"{what}: starts or ends with a space")
    head = value.strip()[0]
    if unicodedata.category(head)[0] not in "LN":
        out.append(f"{what}: must start with a letter or a digit, not {head!r}")
    bad = []
    for ch in value:
        cat = unicodedata.category(ch)
        if cat[0] in "LNM" or ch in NAME_PUNCTUATION or cat in CONTROL_CATEGORIES:
            continue
        if ch not in bad:
            bad.append(ch)
    if bad:
        shown = ", ".join(repr(c) for c in bad[:SHOW_FIRST])
        out.append(
            f"{what}: characters not allowed: {shown} (use letters, digits, spaces and "
            f"{' '.join(NAME_PUNCTUATION.strip())})"
        )
    return out


def check_metadata(
    model_name: str | None,
    kind: str | None = "non-llm",
    org: str | None = None,
    params: str | None = None,
    url: str | None = None,
    description: str | None = None,
    email: str | None = None,
    email_required: bool = False,
) -> list[Problem]:
    """Every problem with a submission's model metadata (pure; no line numbers)."""
    out = check_name(model_name, "model name")
    if kind not in SUBMITTABLE_KINDS:
        out.append(f"model kind: {kind!r} is not one of {', '.join(SUBMITTABLE_KINDS)}")
    out += check_name(org, "organisation", required=False)
    if params and not _PARAMS.match(params):
        out.append(
            f"parameter count: {params[:40]!r} is not written like 7B, 355M, 1.3B or 110000000"
        )
    if url:
        if len(url) > URL_MAX_CHARS:
            out.append(f"URL: {F.count(len(url))} characters; at most {URL_MAX_CHARS} are allowed")
        elif any(ch.isspace() for ch in url) or control_char(url) is not None:
            out.append("URL: contains spaces or control characters")
        else:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https"):
                out.append("URL: must start with http:// or https://")
            elif not parts.hostname:
                out.append("URL: has no host name")
    if description:
        if len(description) > DESCRIPTION_MAX_CHARS:
            out.append(
                f"description: {F.count(len(description))} characters; at most "
                f"{F.count(DESCRIPTION_MAX_CHARS)} are allowed"
            )
        ctrl = control_char(description, allowed="\n\t")
        if ctrl is not None:
            out.append(
                f"description: contains a control or invisible character "
                f"(U+{ord(ctrl[1]):04X}) at position {ctrl[0] + 1}"
            )
    if email:
        if len(email) > EMAIL_MAX_CHARS or not _EMAIL.match(email):
            out.append("contact email: not an email address")
    elif email_required:
        out.append("contact email: required (it is kept private: never shown or exported)")
    return [Problem(None, m) for m in out]


def normalise_name(name: str) -> str:
    """The form two model names are compared in (the duplicate check): the vocabulary's model
    key (NFKC, case-folded, separators dropped, Unicode look-alikes folded to Latin)."""
    return model_key(name)


# the file format, as the Submit page and the documentation show it (Markdown)
FORMAT_HELP = f"""\
**File format.** CSV (comma- or tab-separated, with a header) or JSON Lines (one JSON object per
line), UTF-8 with or without a byte-order mark.

| column | required | values |
|---|---|---|
| `sample_id` | yes | the benchmark's sample id (see the template) |
| `label` | this and/or `score` | 1/0, yes/no, true/false, consistent/inconsistent; 1 = consistent |
| `score` | this and/or `label` | a finite number, higher = more consistent |
| `explanation` | no | free text (at most {F.count(MAX_EXPLANATION_CHARS)} characters) |
| `split` | no | ignored: the template writes it for you to read (the sample id says the split) |

Every sample of the scored split needs a row. With scores and no labels, the threshold is the one
that maximises balanced accuracy on the **dev** split's rows (include them), applied to test.
Limits: {MAX_MB} MB, {F.count(MAX_ROWS)} rows, {MAX_COLUMNS} columns,
sample ids up to {MAX_ID_LEN} characters. Compressed archives, spreadsheets and binary
files are refused. Model names: {NAME_MIN_CHARS}-{NAME_MAX_CHARS}
characters, letters, digits, spaces and `{" ".join(NAME_PUNCTUATION.strip())}`,
starting with a letter or a digit; a name can be used once per benchmark version.
"""
