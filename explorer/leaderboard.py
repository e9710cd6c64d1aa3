"""The leaderboard of one benchmark slice, as the pages import it: one name for the modules
that make and show a board.

- explorer.board_types: what a board is asked for (BoardQuery) and returns (Board);
- explorer.board: `build_board` (rows, other metrics, rank, differences, notes) and
  `with_other_values` (the runs' other metrics read when a column shows one);
- explorer.board_rows: the FactBoard runs' rows (their own columns kept per run);
- explorer.published: published numbers (their rows, folding, a paper's per-slice table);
- explorer.paired: the paired bootstrap of the best complete runs;
- explorer.board_options: what the pickers offer and the view a page opens on;
- explorer.board_table: the table as shown and downloaded (filters, columns, drawn CIs);
- explorer.board_charts: the charts' data.

Pure pandas/numpy over explorer.queries; labels and metric direction come from
evaluator.core.vocabulary; the page only reads widgets and renders (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

from explorer.board import PAIRWISE_TOP, build_board, with_other_values
from explorer.board_charts import chart_kinds, slice_long
from explorer.board_options import (
    Options,
    benchmark_order,
    default_slice_value,
    metric_key_label,
    metric_keys,
    metric_notice,
    options,
    parse_metric_key,
    run_metrics,
    slice_noun,
)
from explorer.board_rows import as_list, coverage_text, params_to_float, row_labels, run_source
from explorer.board_table import (
    COLUMN_TITLES,
    DEFAULT_COLUMNS,
    OPTIONAL_COLUMNS,
    ROW_SETS,
    RUN_SOURCE,
    SORTS,
    Look,
    ci_images,
    column_help,
    column_label,
    column_titles,
    count_line,
    display_table,
    eee_download,
    file_stem,
    filter_rows,
    first_rows,
    kinds_present,
    origins_present,
    pairwise_table,
    rows_of,
    samples_link,
    screen_table,
    suspect_reason,
    verified_present,
)
from explorer.board_types import Board, BoardQuery, LabelReader
from explorer.paired import PAIRED_TOP, SCORE_METRICS
from explorer.published import fold_published, published_rows, published_table

__all__ = [
    "COLUMN_TITLES",
    "DEFAULT_COLUMNS",
    "OPTIONAL_COLUMNS",
    "PAIRED_TOP",
    "PAIRWISE_TOP",
    "ROW_SETS",
    "RUN_SOURCE",
    "SCORE_METRICS",
    "SORTS",
    "Board",
    "BoardQuery",
    "LabelReader",
    "Look",
    "Options",
    "as_list",
    "benchmark_order",
    "build_board",
    "with_other_values",
    "chart_kinds",
    "ci_images",
    "column_help",
    "column_label",
    "column_titles",
    "count_line",
    "coverage_text",
    "default_slice_value",
    "display_table",
    "eee_download",
    "file_stem",
    "filter_rows",
    "first_rows",
    "fold_published",
    "kinds_present",
    "metric_key_label",
    "metric_keys",
    "metric_notice",
    "options",
    "run_metrics",
    "origins_present",
    "verified_present",
    "pairwise_table",
    "params_to_float",
    "parse_metric_key",
    "published_rows",
    "published_table",
    "row_labels",
    "rows_of",
    "run_source",
    "samples_link",
    "screen_table",
    "slice_long",
    "slice_noun",
    "suspect_reason",
]
