"""Prediction-file validation (a pure function over bytes) and the bad-file corpus.

Every file in tests/submissions/bad_files/ is one failure mode. Each goes through the real
submission path (evaluator.submissions.service.submit, as the page and the CLI do) and must be
refused with exactly the messages listed here, leaving leaderboard_data/ and the queue
untouched."""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc
from pathlib import Path

import pandas as pd
import pytest

from evaluator.core.errors import ValidationFailed
from evaluator.jobs import queue
from evaluator.submissions import records
from evaluator.submissions import service as submit
from evaluator.submissions import validation as submissions
from evaluator.submissions.validation import parse_predictions, precheck, validate_predictions
from tests.support.submit import demo_copy, predictions_csv, tree

BAD_DIR = Path(__file__).resolve().parent / "bad_files"
META = submit.SubmissionMeta(benchmark="demo", model_name="Bad file test")
FIRST_MISSING = (
    "'demo-meeting-04_0', 'demo-meeting-04_1', 'demo-meeting-04_2', 'demo-meeting-04_3', "
    "'demo-meeting-04_4'"
)
ALLOWED = "- _ . , : ; / ( ) [ ] + & ' # @ ! ? * % ~ ="


def missing(n: int) -> str:
    verb = "has" if n == 1 else "have"
    ids = f"{n:,} sample_id{'' if n == 1 else 's'}"
    return f"{ids} of the scored split {verb} no prediction, e.g. {FIRST_MISSING}"


def label_msg(value: str) -> str:
    return f"label {value!r} is not one of 0/1, yes/no, consistent/inconsistent, true/false"


BAD: dict[str, list[str]] = {
    # encodings and binary content
    "latin1.csv": ["line 2: not valid UTF-8 (byte 0xe9 at offset 53); save the file as UTF-8"],
    "utf16_bom.csv": ["the file is UTF-16; save it as UTF-8"],
    "utf16_no_bom.csv": ["the file looks like UTF-16 without a byte-order mark; save it as UTF-8"],
    "binary_garbage.bin": [
        "line 2: the file contains a NUL byte (offset 67): it looks binary, not CSV or JSON Lines"
    ],
    "nul_byte.csv": [
        "line 3: the file contains a NUL byte (offset 49): it looks binary, not CSV or JSON Lines"
    ],
    "archive.csv.gz": ["the file is a gzip archive; upload plain CSV or JSON Lines"],
    "archive.zip": [
        "the file is a zip archive (xlsx, docx and jar files are zip archives too); upload "
        "plain CSV or JSON Lines"
    ],
    "document.pdf": ["the file is a PDF document; upload plain CSV or JSON Lines"],
    "image.png": ["the file is a PNG image; upload plain CSV or JSON Lines"],
    "html_page.html": ["the file is an HTML page; upload plain CSV or JSON Lines"],
    # structure
    "empty.csv": ["the file is empty"],
    "whitespace_only.csv": ["the file is empty"],
    "header_only.csv": ["the file has a header but no prediction rows"],
    "no_sample_id.csv": ["line 1: no sample_id column (columns: id, label)"],
    "semicolons.csv": [
        "line 1: no sample_id column (columns: sample_id;label); the file seems to use ';' as "
        "separator: use a comma or a tab"
    ],
    "neither_label_nor_score.csv": [
        "line 1: neither a label nor a score column: give at least one"
    ],
    "duplicate_columns.csv": ["line 1: 1 duplicate column: label"],
    "too_many_columns.csv": ["line 1: the header has 40 columns; at most 32 are allowed"],
    "wrong_field_counts.csv": [
        "line 3: 3 fields, the header has 2",
        "line 4: 1 field, the header has 2",
        missing(209),
    ],
    "unterminated_quote.csv": ["line 2: unreadable CSV row: unexpected end of data"],
    "json_array.json": [
        "the file is a JSON array; write one JSON object per line (JSON Lines) instead"
    ],
    "invalid_json_line.jsonl": [
        "line 2: invalid JSON (Expecting ',' delimiter at column 32)",
        "line 3: invalid JSON (Expecting property name enclosed in double quotes at column 44)",
        missing(209),
    ],
    "jsonl_not_objects.jsonl": [
        "line 2: expected a JSON object, got list",
        "line 3: expected a JSON object, got str",
        missing(209),
    ],
    "jsonl_wrong_types.jsonl": [
        "line 1: explanation must be text, got dict",
        "line 2: sample_id must be a string or an integer, got list",
        "line 3: score True is not a number",
        missing(208),
    ],
    # values
    "bad_labels.csv": [
        f"line 2: {label_msg('maybe')}",
        f"line 3: {label_msg('2')}",
        "line 4: neither a label nor a score",
        f"line 5: {label_msg('-1')}",
        missing(206),
    ],
    "bad_scores.csv": [
        "line 2: score 'high' is not a number",
        "line 3: score 'nan' is not finite",
        "line 4: score 'inf' is not finite",
        "line 5: score '-Infinity' is not finite",
        "line 6: score '1e999' is not finite",
        missing(205),
    ],
    "duplicate_ids.csv": [
        "line 4: 2 duplicate sample_ids: 'demo-news-04_og' on line 4 (first on line 2); "
        "'demo-news-04_0' on line 5 (first on line 3)",
        missing(208),
    ],
    "unknown_ids.csv": [
        "line 2: 3 sample_ids not in the benchmark: 'not-a-sample' (line 2), "
        "'DEMO-NEWS-04_0' (line 4), 'demo-news-99_og' (line 5)",
        missing(209),
    ],
    "missing_ids.csv": [missing(206)],
    "long_explanation.jsonl": [
        "line 1: explanation of 20,001 characters; the limit is 20,000",
        missing(209),
    ],
    "long_sample_id.csv": ["line 2: sample_id longer than 200 characters"],
}


@pytest.fixture
def demo(tmp_data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_copy(tmp_data_root, tmp_path_factory)


def _refused(data: bytes, filename: str, meta: submit.SubmissionMeta = META) -> list[str]:
    """Submit through the real path; assert the refusal left no trace but its record."""
    before = tree(submit.layout.data_root()), tree(queue.queue_dir())
    res = submit.submit(data, filename, meta)
    assert res.status == "rejected"
    assert res.run_id is None and res.job_id is None
    assert (tree(submit.layout.data_root()), tree(queue.queue_dir())) == before
    rec = records.read_submission(res.submission_id)
    assert rec["status"] == "rejected" and rec["problems"] == res.problems
    assert not records.upload_path(res.submission_id).exists()  # a refused file is not kept
    assert list((submit.layout.submissions_root() / "inflight").iterdir()) == []
    return res.problems


def test_the_corpus_has_a_file_per_failure_mode() -> None:
    files = {p.name for p in BAD_DIR.iterdir() if p.name != "README.md"}
    assert files == set(BAD)
    assert len(files) >= 25


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_file_is_refused_with_its_exact_messages(demo: Path, name: str) -> None:
    assert _refused((BAD_DIR / name).read_bytes(), name) == BAD[name]


def test_a_file_with_millions_of_columns_is_refused_early_with_bounded_memory(
    demo: Path,
) -> None:
    n = 2_000_000
    data = (",".join(f"c{i}" for i in range(n)) + "\n").encode()
    assert len(data) > 15_000_000
    tracemalloc.start()
    try:
        problems = precheck(data, "wide.csv")
        _, peak_precheck = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        refused = _refused(data, "wide.csv")
        _, peak_submit = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    msg = f"line 1: the header has {n:,} columns; at most 32 are allowed"
    assert [str(p) for p in problems] == [msg]
    assert refused == [msg]
    # no copy and no decode of the 15 MB file: the check looks at the raw bytes
    assert peak_precheck < 100_000
    assert peak_submit < len(data) / 4


def test_a_one_line_json_object_with_thousands_of_keys_is_refused(demo: Path) -> None:
    obj = {"sample_id": "demo-news-04_og", "label": 1, **{f"k{i}": i for i in range(40)}}
    assert _refused((json.dumps(obj) + "\n").encode(), "wide.jsonl") == [
        "line 1: 42 fields; at most 32 are allowed"
    ]
    huge = json.dumps({f"k{i}": i for i in range(30_000)}).encode()
    assert _refused(huge, "huge.jsonl") == ["line 1: line longer than 200,000 characters"]


def test_an_oversized_file_is_refused_before_it_is_read_whole(demo: Path) -> None:
    limit = submissions.MAX_BYTES
    line = b"demo-news-04_og,1\n"
    data = b"sample_id,label\n" + line * (limit // len(line) + 2)
    assert len(data) > limit
    msg = f"the file is larger than the {submissions.MAX_MB} MB limit"
    stream = io.BytesIO(data + b"x" * 10_000_000)
    tracemalloc.start()
    try:
        assert _refused(data, "big.csv") == [msg]
        _, peak_bytes = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        # a stream is read up to the limit plus one byte, never further
        assert _refused(stream, "big.csv") == [msg]  # type: ignore[arg-type]
        _, peak_stream = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert stream.tell() == limit + 1
    assert peak_bytes < 1_000_000  # bytes in memory already: refused without a copy
    assert peak_stream < limit * 1.1  # the capped read, and no second copy


def test_the_row_cap(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(submissions, "MAX_ROWS", 10)
    rows = "".join(f"demo-news-{d:02d}_og,1\n" for d in range(4, 14))
    rows += "demo-meeting-04_og,1\n"
    assert (
        _refused(b"sample_id,label\n" + rows.encode(), "p.csv")[0] == "line 12: more than 10 rows"
    )


def test_archives_are_refused_whatever_their_name(demo: Path) -> None:
    packed = gzip.compress(predictions_csv(0), mtime=0)
    assert _refused(packed, "predictions.csv") == [
        "the file is a gzip archive; upload plain CSV or JSON Lines"
    ]


# --------------------------------------------------------------------------------------------
# metadata rules, through the same path

NAME_CASES = [
    (
        {"model_name": '=HYPERLINK("http://evil.example","x")'},
        [
            "model name: must start with a letter or a digit, not '='",
            f"model name: characters not allowed: '\"' (use letters, digits, spaces and {ALLOWED})",
        ],
    ),
    ({"model_name": "+SUM(A1)"}, ["model name: must start with a letter or a digit, not '+'"]),
    ({"model_name": "@cmd"}, ["model name: must start with a letter or a digit, not '@'"]),
    ({"model_name": "-1+2"}, ["model name: must start with a letter or a digit, not '-'"]),
    (
        {"model_name": "<script>alert(1)</script>"},
        [
            "model name: must start with a letter or a digit, not '<'",
            f"model name: characters not allowed: '<', '>' (use letters, digits, spaces and "
            f"{ALLOWED})",
        ],
    ),
    (
        {"model_name": "Model <img src=x onerror=alert(1)>"},
        [
            f"model name: characters not allowed: '<', '>' (use letters, digits, spaces and "
            f"{ALLOWED})"
        ],
    ),
    (
        {"model_name": "Bell\x07model"},
        ["model name: contains a control or invisible character (U+0007) at position 5"],
    ),
    (
        {"model_name": "Zero\u200bwidth"},
        ["model name: contains a control or invisible character (U+200B) at position 5"],
    ),
    (
        {"model_name": "Right\u202eto left"},
        ["model name: contains a control or invisible character (U+202E) at position 6"],
    ),
    ({"model_name": "   "}, ["model name: empty (or only spaces)"]),
    ({"model_name": ""}, ["model name: empty (or only spaces)"]),
    ({"model_name": "x"}, ["model name: at least 2 characters are needed"]),
    ({"model_name": "m" * 81}, ["model name: 81 characters; at most 80 are allowed"]),
    ({"model_name": " padded"}, ["model name: starts or ends with a space"]),
    (
        {"model_name": "back`tick $x | y"},
        [
            f"model name: characters not allowed: '`', '$', '|' (use letters, digits, spaces "
            f"and {ALLOWED})"
        ],
    ),
    ({"kind": "human"}, ["model kind: 'human' is not one of non-llm, open-llm, proprietary-llm"]),
    ({"url": "javascript:alert(1)"}, ["URL: must start with http:// or https://"]),
    ({"url": "https://"}, ["URL: has no host name"]),
    ({"url": "https://a.example/x y"}, ["URL: contains spaces or control characters"]),
    (
        {"params": "seven billion"},
        ["parameter count: 'seven billion' is not written like 7B, 355M, 1.3B or 110000000"],
    ),
    ({"email": "not an email"}, ["contact email: not an email address"]),
    (
        {"description": "ok\x1b[31m red"},
        ["description: contains a control or invisible character (U+001B) at position 3"],
    ),
    (
        {"description": "d" * 1001},
        ["description: 1,001 characters; at most 1,000 are allowed"],
    ),
    ({"org": "=evil"}, ["organisation: must start with a letter or a digit, not '='"]),
    ({"split": "train"}, ["split 'train' is not one of dev, test"]),
    (
        {"benchmark": "nope"},
        ["unknown benchmark 'nope'; known: " + ", ".join(sorted(submit.registry.names()))],
    ),
]


@pytest.mark.parametrize("fields,expected", NAME_CASES, ids=[str(c[0])[:40] for c in NAME_CASES])
def test_metadata_rules(demo: Path, fields: dict, expected: list[str]) -> None:
    meta = submit.SubmissionMeta(**{**META.__dict__, **fields})
    assert _refused(predictions_csv(0), "p.csv", meta) == expected


def test_metadata_and_file_problems_are_reported_together(demo: Path) -> None:
    meta = submit.SubmissionMeta(benchmark="demo", model_name="<b>", url="ftp://x")
    assert _refused((BAD_DIR / "missing_ids.csv").read_bytes(), "m.csv", meta) == [
        "model name: must start with a letter or a digit, not '<'",
        f"model name: characters not allowed: '<', '>' (use letters, digits, spaces and {ALLOWED})",
        "URL: must start with http:// or https://",
        missing(206),
    ]


@pytest.mark.parametrize(
    "name",
    [
        "BERTScore-F1 (roberta-large)",
        "Модель 7B",
        "naïve model v2.1",
        "GPT-4o mini: zero-shot",
        "My **bold** [model](x)",
        "AlignScore_large & co.",
    ],
)
def test_names_that_follow_the_rules(name: str) -> None:
    assert submissions.check_name(name) == []


# --------------------------------------------------------------------------------------------
# the pure validator on good files


def test_csv_tsv_jsonl_and_bom_parse_to_the_same_predictions() -> None:
    rows = [("a", "1", "0.9", "fine"), ("b", "inconsistent", "", 'wrong "number", see doc')]
    csv_text = "sample_id,label,score,explanation\n" + "".join(
        f'{a},{b},{c},"{d.replace(chr(34), chr(34) * 2)}"\n' for a, b, c, d in rows
    )
    tsv_text = "sample_id\tlabel\tscore\texplanation\n" + "".join(
        f'{a}\t{b}\t{c}\t"{d.replace(chr(34), chr(34) * 2)}"\n' for a, b, c, d in rows
    )
    jsonl_text = "".join(
        json.dumps({"sample_id": a, "label": b, "score": float(c) if c else None, "explanation": d})
        + "\n"
        for a, b, c, d in rows
    )
    frames = [
        parse_predictions(csv_text.encode(), "p.csv"),
        parse_predictions(tsv_text.encode(), "p.tsv"),
        parse_predictions(jsonl_text.encode(), "p.jsonl"),
        parse_predictions(b"\xef\xbb\xbf" + csv_text.replace("\n", "\r\n").encode(), "p.csv"),
        parse_predictions(jsonl_text.encode(), None),  # detected from the content
    ]
    for f in frames:
        assert f["sample_id"].tolist() == ["a", "b"]
        assert f["label"].tolist() == [1, 0]
        assert f["score"].iloc[0] == 0.9 and pd.isna(f["score"].iloc[1])
        assert f["explanation"].tolist() == ["fine", 'wrong "number", see doc']


@pytest.mark.parametrize(
    "value,label",
    [
        ("1", 1),
        ("0", 0),
        ("yes", 1),
        ("No", 0),
        ("TRUE", 1),
        ("false", 0),
        ("consistent", 1),
        ("Inconsistent", 0),
        ("1.0", 1),
        ("0.0", 0),
    ],
)
def test_label_spellings(value: str, label: int) -> None:
    df = parse_predictions(f"sample_id,label\nx,{value}\n".encode())
    assert df["label"].tolist() == [label]


def test_unknown_columns_are_ignored_with_a_warning_and_blank_lines_skipped() -> None:
    v = validate_predictions(b"sample_id,label,model\n\nx,1,m\n\n")
    assert v.ok and v.warnings == ["1 column ignored: model"]
    assert v.predictions is not None and v.predictions["sample_id"].tolist() == ["x"]
    assert v.format == "csv" and v.seen_ids == {"x"}


def test_parse_predictions_raises_with_every_problem() -> None:
    with pytest.raises(ValidationFailed) as e:
        parse_predictions(b"sample_id,label\nx,7\ny,maybe\n")
    assert e.value.problems == [f"line 2: {label_msg('7')}", f"line 3: {label_msg('maybe')}"]


def test_known_and_required_ids() -> None:
    v = validate_predictions(
        b"sample_id,score\na,0.5\nz,0.1\n", known_ids={"a", "b", "c"}, required_ids={"a", "b", "c"}
    )
    assert [str(p) for p in v.problems] == [
        "line 3: 1 sample_id not in the benchmark: 'z' (line 3)",
        "2 sample_ids of the scored split have no prediction, e.g. 'b', 'c'",
    ]
