"""Every DuckDB statement the app runs (docs/ARCHITECTURE.md): one package, bound parameters only.

The app keeps one in-memory DuckDB database per process (explorer.store.Store). The files on disk
are the source of truth; the tables here are caches of them, loaded incrementally:

  samples      one row per benchmark sample (+ derived topic_type, n_edit_types, sent_idx)
  runs         one row per run.json (model, origin, threshold, counts, hidden)
  results      the per-slice results of each run: a view of the store's snapshot file read in
               place (the runs it holds, less those gone or changed since: snapshot_gone)
               and of results_new (the runs read from their run.json since)
  run_dimensions  every (benchmark, unit, slice, metric, grader) of the visible runs' results,
               as of the last pass over them (the store's snapshot keeps it beside the results)
  predictions  per-sample predictions (score, label, explanation; raw output stays on disk)
  labels       final predicted labels per run and sample, as the scorer made them (threshold
               applied, sentence predictions rolled up to summaries): read from the run's
               labels.parquet, or made by evaluator.core.scoring.final_labels for a run stored
               without one; never derived in SQL
  grades       explanation grades (human or judge)
  sample_stats per sample and benchmark version: how many visible runs label it, how many get
               it wrong (the Samples page's difficulty), aggregated from the runs'
               labels.parquet read in place, so that no page loads every run's rows
  run_units    per visible run and unit: how many final labels and scores it has
  reported     published numbers from leaderboard_data/reported/*.csv

Identifiers are never built from user text: the only variable SQL fragments are chosen from
fixed whitelists in this package (sort orders, optional WHERE clauses with `?` parameters).

Callers import this package (`from explorer import queries as Q`); its modules hold:
`schema` (the tables' layout, run.json's structure, the connection), `loading` (files into the
tables, the snapshot), `results` (runs, per-slice results, published numbers), `labels`
(per-sample labels and scores, sample statistics), `samples` (the samples explorer), `grades`
(explanations, judges, sizes and every Overall number).
"""

from __future__ import annotations

from explorer.queries.grades import (
    explanation_types,
    graded_runs,
    judge_pairs,
    judge_runs,
    overall_numbers,
    table_sizes,
)
from explorer.queries.labels import (
    build_sample_stats,
    check_label_files,
    explanation_files,
    explanation_matches,
    label_matrix,
    labelled_runs,
    pair_frame,
    sample_predictions_in_files,
    score_matrix,
    scored_samples,
)
from explorer.queries.loading import (
    SnapshotState,
    apply_supersession,
    delete_benchmark,
    delete_labels,
    delete_predictions,
    delete_runs,
    drop_staged_runs,
    insert_labels,
    insert_staged_runs,
    label_inputs,
    load_grades,
    load_labels,
    load_predictions,
    load_reported,
    load_samples,
    load_snapshot,
    run_predictions,
    run_thresholds,
    snapshot_states,
    stage_checked_runs,
    stage_run_files,
    supersession_rows,
    switch_to_snapshot_results,
    use_snapshot_results,
    write_snapshot,
)
from explorer.queries.results import (
    all_result_dimensions,
    board_run_fields,
    board_slice,
    fill_run_dimensions,
    has_runs,
    hidden_runs,
    reported_benchmarks,
    reported_judges,
    reported_results,
    result_dimensions,
    run_benchmarks,
    run_results,
    run_row,
    runs_frame,
    slice_other_values,
)
from explorer.queries.samples import (
    SORTS,
    SampleFilter,
    count_samples,
    grades_for_sample,
    predictions_for_sample,
    sample,
    sample_facets,
    sample_units,
    samples_by_id,
    samples_page,
    sentences_of,
)
from explorer.queries.schema import (
    FOLDER_OF_FILE,
    RESULT_COLUMNS,
    RUN_COLUMNS,
    RUN_JSON_STRUCTURE,
    SCHEMA,
    SNAPSHOT_LAYOUT,
    Con,
    connect,
    model_structure,
)

__all__ = [
    "Con",
    "FOLDER_OF_FILE",
    "RESULT_COLUMNS",
    "RUN_COLUMNS",
    "RUN_JSON_STRUCTURE",
    "SCHEMA",
    "SNAPSHOT_LAYOUT",
    "SORTS",
    "SampleFilter",
    "SnapshotState",
    "all_result_dimensions",
    "apply_supersession",
    "board_run_fields",
    "board_slice",
    "slice_other_values",
    "build_sample_stats",
    "check_label_files",
    "connect",
    "count_samples",
    "delete_benchmark",
    "delete_labels",
    "delete_predictions",
    "delete_runs",
    "drop_staged_runs",
    "explanation_files",
    "explanation_matches",
    "explanation_types",
    "fill_run_dimensions",
    "graded_runs",
    "grades_for_sample",
    "has_runs",
    "hidden_runs",
    "insert_labels",
    "insert_staged_runs",
    "judge_pairs",
    "judge_runs",
    "label_inputs",
    "label_matrix",
    "labelled_runs",
    "load_grades",
    "load_labels",
    "load_predictions",
    "load_reported",
    "load_samples",
    "load_snapshot",
    "snapshot_states",
    "model_structure",
    "overall_numbers",
    "pair_frame",
    "predictions_for_sample",
    "reported_benchmarks",
    "reported_judges",
    "reported_results",
    "result_dimensions",
    "run_benchmarks",
    "run_predictions",
    "run_results",
    "run_row",
    "run_thresholds",
    "runs_frame",
    "sample",
    "sample_facets",
    "sample_predictions_in_files",
    "sample_units",
    "samples_by_id",
    "samples_page",
    "score_matrix",
    "scored_samples",
    "sentences_of",
    "stage_checked_runs",
    "stage_run_files",
    "supersession_rows",
    "switch_to_snapshot_results",
    "table_sizes",
    "use_snapshot_results",
    "write_snapshot",
]
