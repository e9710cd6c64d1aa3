"""What a board is asked for (BoardQuery) and what it returns (Board: its rows, how they were
ranked, its notes), and the columns of Board.rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class BoardQuery:
    benchmark: str
    unit: str
    slice_kind: str = "overall"
    slice_value: str = ""
    metric: str = "balanced_accuracy"
    grader: str | None = None


@dataclass
class Board:
    rows: pd.DataFrame
    method: str = ""
    notes: list[str] = field(default_factory=list)
    paired_runs: list[str] = field(default_factory=list)
    other_metrics: list[str] = field(default_factory=list)
    # p-values of the paired test between the best paired runs (row/column: run_id), and
    # each one's point value; empty when fewer than two runs are paired
    pairwise: pd.DataFrame = field(default_factory=pd.DataFrame)
    pairwise_values: dict[str, float] = field(default_factory=dict)
    # "significance": runs ranked by significance (published rows unranked, placed by value);
    # "value": no run in the view, the published numbers ranked by value alone
    rank_by: str = "significance"


# labels(run_ids, frame, scores) -> each run's final labels on the frame's samples (int8, -1:
# none), or with scores=True the scores they were made from (float, NaN: none)
LabelReader = Callable[[list[str], pd.DataFrame, bool], dict[str, np.ndarray]]


BOARD_COLUMNS = [
    "rank",
    "model",
    "kind",
    "origin",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "coverage",
    "split",
    "config",
    "source",
    "note",
    "org",
    "params",
    "threshold",
    "run_id",
    "version",
    "created",
    "paired",
    "kind_code",
    "origin_code",
    "params_value",
    "params_from",
    "label",
    "verified",
    "verified_code",
]
