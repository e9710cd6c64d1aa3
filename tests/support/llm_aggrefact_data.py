"""Records in the LLM-AggreFact hub release's schema (lytang/LLM-AggreFact: dataset, doc, claim,
label with 1 = supported, contamination_identifier), written in its Parquet layout
(data/dev-*.parquet, data/test-*.parquet): the data itself cannot be reached here."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from evaluator.benchmarks.llm_aggrefact import DATASETS

IDENT = "a" * 64  # the card's 64-character contamination identifier


def records(split: str, per_dataset: int = 6, skew: bool = False) -> list[dict]:
    """`per_dataset` claims per dataset (three per document), both labels, every card field;
    with `skew`, the share of supported claims differs between datasets."""
    rows = []
    for d_i, dataset in enumerate(DATASETS):
        for j in range(per_dataset):
            doc = f"{dataset} {split} document {j // 3}: the council approved {d_i + 10} homes."
            supported = j <= d_i % (per_dataset - 1) if skew else (j + d_i) % 3 != 0
            claim = (
                f"The council approved {d_i + 10} homes ({j})."
                if supported
                else f"Zoning board vetoed every proposal ({j})."
            )
            rows.append(
                {
                    "dataset": dataset,
                    "doc": doc,
                    "claim": claim,
                    "label": int(supported),
                    "contamination_identifier": IDENT,
                }
            )
    return rows


def write_hub_layout(folder: Path, dev: list[dict], test: list[dict]) -> Path:
    (folder / "data").mkdir(parents=True, exist_ok=True)
    for split, rows in (("dev", dev), ("test", test)):
        pq.write_table(
            pa.Table.from_pylist(rows), folder / "data" / f"{split}-00000-of-00001.parquet"
        )
    return folder


def write_release(folder: Path) -> Path:
    """A small release folder with both splits and every dataset."""
    return write_hub_layout(folder, records("dev", 4), records("test", 4))
