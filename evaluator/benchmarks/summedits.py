"""SummEdits (Laban et al., EMNLP 2023): seed summaries, their LLM edits, a human label for each.

Ten domains; every edited summary is labelled consistent (1) or inconsistent (0) with its document
by the annotator who verified the seed summary. The loader reads the GitHub release (one JSON list
per domain, `summedits_<domain>.json`), a single per-domain file, the single-file Hugging Face
release (`summedits.json`, one list with a `domain` field), or downloads the latter ("hub").

`load_summedits_files` is the parser itself; the demo benchmark reuses it on its synthetic files.
The JSON helpers here (`read_json_records`, `hub_file`, `require_str`) are shared by the other
Salesforce releases (SummExecEdit, the FactCC explanation study).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from evaluator.benchmarks.registry import (
    BenchmarkSpec,
    LoadedBenchmark,
    SliceSpec,
    register,
    resolve_source,
)
from evaluator.core.errors import IngestError
from evaluator.core.types import Sample

NAME = "summedits"
HUB_ID = "Salesforce/summedits"
HUB_FILENAME = "summedits.json"
FILE_PREFIX = "summedits_"

# The ten domains, in the column order of the paper's Table 9 and the repo README.
DOMAINS: tuple[str, ...] = (
    "podcast",
    "billsum",
    "samsum",
    "news",
    "sales_call",
    "sales_email",
    "shakespeare",
    "scitldr",
    "qmsumm",
    "ectsum",
)
EDIT_TYPES: tuple[str, ...] = (
    "entity_modification",
    "antonym_swap",
    "hallucinated_fact_insertion",
    "negation_insertion_removal",
)
# Release split name -> FactBoard split. "evaluation" is SummEdits' dev split
# (docs/ARCHITECTURE.md).
SPLIT_MAP: dict[str, str] = {"evaluation": "dev", "dev": "dev", "test": "test"}
# The Hugging Face upload (Dec 2023) predates the split field (GitHub commit 639f58a, Apr 2024).
UNSPLIT_DEFAULT = "test"


# --------------------------------------------------------------------------- shared JSON helpers


def read_json_records(path: Path) -> tuple[list[Any], str]:
    """The records of a JSON list or JSON-lines file, and which of the two it was.

    Raises IngestError naming the file (and the line, for JSON lines) on unreadable, truncated or
    malformed input, and on a top-level value that is not a list of records.
    """
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise IngestError("file does not exist", file=str(path)) from None
    except OSError as e:
        raise IngestError(f"cannot read file: {e}", file=str(path)) from None
    except UnicodeDecodeError as e:
        raise IngestError(f"not UTF-8 text: {e}", file=str(path)) from None
    if not text.strip():
        raise IngestError("file is empty", file=str(path))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        if e.msg != "Extra data":
            raise IngestError(
                f"malformed or truncated JSON at line {e.lineno}, column {e.colno}: {e.msg}",
                file=str(path),
            ) from None
        return _json_lines(path, text), "JSON lines"
    if isinstance(data, list):
        return data, "JSON list"
    if isinstance(data, dict) and len([ln for ln in text.splitlines() if ln.strip()]) == 1:
        return [data], "JSON lines"
    raise IngestError(
        f"expected a JSON list of records (or JSON lines), found a JSON {type(data).__name__}",
        file=str(path),
    )


def _json_lines(path: Path, text: str) -> list[Any]:
    records: list[Any] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise IngestError(
                f"malformed or truncated JSON line (column {e.colno}): {e.msg}",
                file=str(path),
                record=f"line {lineno}",
            ) from None
    return records


def hub_file(repo_id: str, filename: str, revision: str | None = None) -> Path:
    """Download one file of a Hugging Face dataset repo; any failure becomes an IngestError."""
    where = f"hf://datasets/{repo_id}/{filename}"
    try:
        import huggingface_hub

        local = huggingface_hub.hf_hub_download(
            repo_id=repo_id, filename=filename, repo_type="dataset", revision=revision
        )
    except Exception as e:
        # Offline, package missing, 404, auth: each means there is no file to read.
        raise IngestError(
            f"could not download from the Hugging Face hub ({type(e).__name__}: {e}). "
            "The hub could not be reached; give a local copy of the file with --from PATH.",
            file=where,
        ) from None
    return Path(local)


def require_str(
    rec: Mapping[str, Any],
    key: str,
    *,
    file: Path,
    record: str,
    allow_empty: bool = False,
    aliases: Iterable[str] = (),
) -> str:
    """rec[key] (or the first alias present) as a string; IngestError if missing or not text."""
    for k in (key, *aliases):
        if k in rec:
            value = rec[k]
            break
    else:
        raise IngestError("required field is missing", file=str(file), record=record, field=key)
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise IngestError(
            f"expected a string, found {type(value).__name__} {value!r:.60}",
            file=str(file),
            record=record,
            field=key,
        )
    text = str(value)
    if not allow_empty and not text.strip():
        raise IngestError("must not be empty", file=str(file), record=record, field=key)
    return text


def optional_str(rec: Mapping[str, Any], key: str, *, file: Path, record: str) -> str | None:
    """rec[key] as a string, None when absent, null or NaN; IngestError if it is not text."""
    value = rec.get(key)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise IngestError(
            f"expected a string or null, found {type(value).__name__}",
            file=str(file),
            record=record,
            field=key,
        )
    return str(value)


def binary_label(value: Any, *, file: Path, record: str, field: str = "label") -> int:
    """A 0/1 label (int, or the strings "0"/"1"); IngestError for anything else."""
    if isinstance(value, bool):
        raise IngestError(
            f"label must be 0 or 1, found {value!r}", file=str(file), record=record, field=field
        )
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value.strip())
    raise IngestError(
        f"label must be 0 (inconsistent) or 1 (consistent), found {value!r:.40}",
        file=str(file),
        record=record,
        field=field,
    )


def record_name(index: int, rec: Any, id_key: str = "id") -> str:
    """'#12 (id 'abc_3')': the record's 0-based position in its file, and its id if readable."""
    rid = rec.get(id_key) if isinstance(rec, dict) else None
    return f"#{index} (id {rid!r})" if isinstance(rid, str | int) and rid != "" else f"#{index}"


# --------------------------------------------------------------------------- SummEdits records


def _edit_types(value: Any, *, file: Path, record: str) -> list[str]:
    """edit_types as a list of strings: a JSON list, null, or a string holding a JSON list."""
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        try:
            value = json.loads(text) if text.startswith("[") else text.split(",")
        except json.JSONDecodeError:
            raise IngestError(
                f"not a list of edit types: {value!r:.60}",
                file=str(file),
                record=record,
                field="edit_types",
            ) from None
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise IngestError(
            f"expected a list of strings, found {value!r:.60}",
            file=str(file),
            record=record,
            field="edit_types",
        )
    return [t.strip() for t in value if t.strip()]


def _split(rec: Mapping[str, Any], *, file: Path, record: str, default: str | None) -> str:
    if "split" not in rec:
        if default is None:
            raise IngestError(
                "required field is missing (the GitHub files carry it since commit 639f58a, "
                "2024-04-10; use a newer copy)",
                file=str(file),
                record=record,
                field="split",
            )
        return default
    value = rec["split"]
    if not isinstance(value, str) or value.strip().lower() not in SPLIT_MAP:
        raise IngestError(
            f"split must be one of {sorted(SPLIT_MAP)}, found {value!r:.40}",
            file=str(file),
            record=record,
            field="split",
        )
    return SPLIT_MAP[value.strip().lower()]


def _doc_id(sample_id: str, document: str) -> str:
    """The seed id (the id before its last '_'), or a hash of the document if the id has none."""
    if "_" in sample_id.strip("_"):
        return sample_id.rsplit("_", 1)[0]
    return "doc-" + hashlib.sha1(document.encode("utf-8")).hexdigest()[:16]


def _domain_from_filename(path: Path, allowed: Collection[str] | None) -> str | None:
    """summedits_sales_call.json -> sales_call. With a list of allowed domains, the longest one
    the file stem ends with; without, the stem after its first '_' (demo_news.json -> news)."""
    stem = path.stem
    if allowed is not None:
        hits = [d for d in allowed if stem == d or stem.endswith("_" + d)]
        return max(hits, key=len) if hits else None
    if stem.startswith(FILE_PREFIX):
        return stem[len(FILE_PREFIX) :] or None
    return stem.split("_", 1)[1] if "_" in stem else stem


def _to_sample(
    rec: Any,
    index: int,
    *,
    file: Path,
    benchmark: str,
    domain: str | None,
    allowed: Collection[str] | None,
    default_split: str | None,
) -> Sample:
    record = record_name(index, rec)
    if not isinstance(rec, dict):
        raise IngestError(
            f"expected a JSON object, found {type(rec).__name__}", file=str(file), record=record
        )
    sample_id = require_str(rec, "id", file=file, record=record)
    if "domain" in rec:
        domain = require_str(rec, "domain", file=file, record=record).strip()
    if domain is None:
        raise IngestError(
            "no domain: the record has no 'domain' field and the file name is not "
            f"{FILE_PREFIX}<domain>.json",
            file=str(file),
            record=record,
            field="domain",
        )
    if allowed is not None and domain not in allowed:
        raise IngestError(
            f"unknown domain {domain!r}; known: {', '.join(allowed)}",
            file=str(file),
            record=record,
            field="domain",
        )
    document = require_str(rec, "doc", file=file, record=record)
    summary = require_str(rec, "summary", file=file, record=record)
    seed = require_str(rec, "original_summary", file=file, record=record, aliases=("seed_summary",))
    if "label" not in rec:
        raise IngestError("required field is missing", file=str(file), record=record, field="label")
    label = binary_label(rec["label"], file=file, record=record)
    split = _split(rec, file=file, record=record, default=default_split)
    if "edit_types" not in rec:
        raise IngestError(
            "required field is missing", file=str(file), record=record, field="edit_types"
        )
    tags = list(dict.fromkeys(_edit_types(rec["edit_types"], file=file, record=record)))
    attributes = {"is_seed": "1" if sample_id.endswith("_og") else "0"}
    if label == 0:
        attributes["n_edit_types"] = str(len(tags))
    elif tags:
        # GPT-4 tagged some consistent rows too; they are not errors, so they are kept aside.
        attributes["gpt4_edit_types"] = ",".join(tags)
    return Sample(
        benchmark=benchmark,
        sample_id=sample_id,
        split=split,
        unit="summary",
        summary=summary,
        domain=domain,
        doc_id=_doc_id(sample_id, document),
        document=document,
        seed_summary=seed,
        label=label,
        error_types=tuple(tags) if label == 0 else (),
        attributes=attributes,
    )


def load_summedits_files(
    paths: Iterable[str | Path],
    benchmark_name: str = NAME,
    *,
    allowed_domains: Collection[str] | None = DOMAINS,
    domain_of: Mapping[str, str] | None = None,
) -> LoadedBenchmark:
    """Parse SummEdits-format files (per-domain lists, or one list with a `domain` field).

    benchmark_name: written into every Sample (the demo benchmark passes "demo").
    allowed_domains: the domains a record may name (None: any; the demo passes its own or None).
    domain_of: file name -> domain, for per-domain files whose name does not say it.
    A record's own `domain` field wins over the file name. Files without any `split` field are
    accepted only when their records carry `domain` (the Hugging Face release); their rows go to
    test. Duplicate ids, within or across files, raise IngestError.
    """
    files = [Path(p) for p in paths]
    if not files:
        raise IngestError("no SummEdits files to read")
    samples: list[Sample] = []
    notes: list[str] = []
    seen: dict[str, tuple[Path, int]] = {}
    for path in files:
        records, fmt = read_json_records(path)
        if not records:
            raise IngestError("the file holds no records", file=str(path))
        file_domain = (domain_of or {}).get(path.name) or _domain_from_filename(
            path, allowed_domains
        )
        dicts = [r for r in records if isinstance(r, dict)]
        hub_format = bool(dicts) and all("domain" in r for r in dicts)
        default_split = None
        if hub_format and not any("split" in r for r in dicts):
            default_split = UNSPLIT_DEFAULT
            notes.append(
                f"{path.name}: no split field (the Hugging Face release predates the GitHub "
                f"evaluation/test split); all {len(records)} rows put in {UNSPLIT_DEFAULT}"
            )
        for i, rec in enumerate(records):
            s = _to_sample(
                rec,
                i,
                file=path,
                benchmark=benchmark_name,
                domain=file_domain,
                allowed=allowed_domains,
                default_split=default_split,
            )
            if s.sample_id in seen:
                other, j = seen[s.sample_id]
                raise IngestError(
                    f"duplicate id {s.sample_id!r}: also record #{j} of {other}",
                    file=str(path),
                    record=record_name(i, rec),
                    field="id",
                )
            seen[s.sample_id] = (path, i)
            samples.append(s)
        notes.append(f"{path.name}: {len(records)} rows ({fmt})")
    notes.extend(_domain_notes(samples, allowed_domains))
    return LoadedBenchmark(samples=samples, notes=notes, sources=[str(p) for p in files])


def _domain_notes(samples: list[Sample], allowed: Collection[str] | None) -> list[str]:
    present = {s.domain for s in samples}
    order = list(allowed) if allowed is not None else sorted(d for d in present if d)
    have = [d for d in order if d in present]
    notes = [f"domains present ({len(have)}): {', '.join(have)}"]
    if allowed is not None:
        missing = [d for d in allowed if d not in present]
        if missing:
            notes.append(
                f"domains absent ({len(missing)} of {len(allowed)}, not invented): "
                f"{', '.join(missing)}; an overall mean over domains covers only the "
                f"{len(have)} present"
            )
    return notes


# --------------------------------------------------------------------------- the loader


def _files_in(folder: Path) -> list[Path]:
    hub = folder / HUB_FILENAME
    if hub.is_file():
        return [hub]
    files = sorted(folder.glob(f"{FILE_PREFIX}*.json"))
    if not files:
        raise IngestError(
            f"no {FILE_PREFIX}<domain>.json files and no {HUB_FILENAME} in this folder",
            file=str(folder),
        )
    return files


def load(source: str | Path, *, revision: str | None = None) -> LoadedBenchmark:
    """SummEdits from a folder of per-domain files, one file, or "hub" (Salesforce/summedits)."""
    if str(source) == "hub":
        local = hub_file(HUB_ID, HUB_FILENAME, revision=revision)
        loaded = load_summedits_files([local])
        loaded.sources = [
            f"hf://datasets/{HUB_ID}/{HUB_FILENAME}" + (f"@{revision}" if revision else "")
        ]
        return loaded
    path = resolve_source(source)
    files = _files_in(path) if path.is_dir() else [path]
    loaded = load_summedits_files(files)
    if path.is_dir() and files[0].name == HUB_FILENAME and len(list(path.glob("summedits_*.json"))):
        loaded.notes.append(
            f"{HUB_FILENAME} found beside per-domain files: the complete release was read and the "
            "per-domain files were ignored"
        )
    return loaded


CITATION = """@inproceedings{laban-etal-2023-summedits,
    title = "{S}umm{E}dits: Measuring {LLM} Ability at Factual Reasoning
             Through The Lens of Summarization",
    author = "Laban, Philippe and Kryscinski, Wojciech and Agarwal, Divyansh and
              Fabbri, Alexander and Xiong, Caiming and Joty, Shafiq and Wu, Chien-Sheng",
    booktitle = "Proceedings of the 2023 Conference on Empirical Methods
                 in Natural Language Processing",
    month = dec,
    year = "2023",
    address = "Singapore",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2023.emnlp-main.600",
    doi = "10.18653/v1/2023.emnlp-main.600",
    pages = "9662--9676",
    note = "Preprint: arXiv:2305.14540, LLMs as Factual Reasoners:
            Insights from Existing Benchmarks and Beyond"
}"""

SPEC = register(
    BenchmarkSpec(
        release_folder="summedits",
        name=NAME,
        title="SummEdits",
        task="detection",
        units=("summary",),
        splits=("dev", "test"),
        slices=(
            SliceSpec("domain", "domain"),
            SliceSpec("edit_type", "error_types", multi=True, with_consistent=True),
            SliceSpec("n_edit_types", "attributes.n_edit_types", with_consistent=True),
        ),
        primary_metric="balanced_accuracy",
        license=(
            "Apache-2.0 (GitHub repo salesforce/factualNLG); CC-BY-4.0 (Hugging Face copy). "
            "Documents keep their upstream licenses (news, Spotify podcasts, SAMSum, SciTLDR, "
            "QMSum, ECTSum, BillSum, Shakespeare); sales_call/sales_email documents are synthetic."
        ),
        citation=CITATION,
        source=(
            "github.com/salesforce/factualNLG @ 0da1dfa62c783218d26208c1796d3a2605bec745, "
            "data/summedits/summedits_<domain>.json; Hugging Face dataset Salesforce/summedits, "
            "summedits.json (6,348 rows, 10 domains)"
        ),
        description=(
            "Seed summaries verified consistent by an annotator, then edited by GPT-3.5-turbo "
            "(about 30 edits per seed); the same annotator labels each edit consistent or "
            "inconsistent (borderline edits removed). 10 domains, 6,348 rows, inter-annotator "
            "agreement 0.92. Metric: balanced accuracy per domain, Overall = unweighted mean over "
            "domains (paper Table 9); per edit type (Table 10) and per number of distinct edit "
            "types (Table 11), each over the consistent rows plus the inconsistent rows of the "
            "group."
        ),
        loader=load,
        overall="mean_over_domains",
        domains=DOMAINS,
        hub_id=HUB_ID,
        caveats=(
            (
                "The GitHub snapshot in ../shared holds 8 of 10 domains (4,681 of 6,348 rows): "
                "billsum and shakespeare (1,667 rows) are missing, so an Overall computed on it "
                "averages 8 domains, not the paper's 10. --from hub gives all 10."
            ),
            (
                "The evaluation/test split was added to the GitHub files in April 2024 (commit "
                "639f58a); the paper's numbers use all rows. 'evaluation' is FactBoard's dev split "
                "(986 rows in the 8 GitHub domains; test 3,695)."
            ),
            (
                "The Hugging Face file's format is assumed, not checked here: the per-domain "
                "fields plus 'domain', the seed summary as 'original_summary' or 'seed_summary', "
                "and no split field (its Dec 2023 upload predates the split), so all its rows go "
                "to test."
            ),
            (
                "Edit types are GPT-4 predictions (0.85 F1 against 200 hand-labelled rows), not "
                "human labels. 73 inconsistent rows have none (n_edit_types '0'); 41 consistent "
                "rows carry tags, kept as attributes.gpt4_edit_types and not as error types."
            ),
            (
                "Edit-type shares of inconsistent rows on the 8 GitHub domains: entity 76.8%, "
                "antonym 46.7%, hallucination 23.2%, negation 19.2% (paper, 10 domains: "
                "78/48/22/18)."
            ),
            (
                "ECTSum: the paper's Table 8 gives 38.0% consistent; the released file has 242 of "
                "668 (36.2%; 34.1% without seed rows). The 7 other GitHub domains match Table 8 "
                "to 0.05 points with the seed rows counted."
            ),
            (
                "Seed rows (ids ending '_og', 163 in the 8 GitHub domains) are the unedited, "
                "verified summaries, all consistent; they count in the paper's N "
                "(attributes.is_seed)."
            ),
            (
                "doc_id is the seed id; in qmsumm two seeds share one document (163 seeds, 162 "
                "documents in the 8 GitHub domains)."
            ),
            (
                "No per-sample model predictions are released; the paper's tables can only be "
                "compared through the reported numbers."
            ),
        ),
        loader_options={
            "revision": "Hugging Face revision (commit) to download with --from hub; default: main",
        },
    )
)
