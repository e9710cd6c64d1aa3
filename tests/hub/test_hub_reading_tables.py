"""Reading the repo's tables fast and right: the runs table's run.json texts searched for a
submission's fingerprints (duplicates across replicas) in one pass, each needle matched as plain
text, never as a pattern; a shard cut into its runs whatever the order of its rows."""

from __future__ import annotations

from types import SimpleNamespace

import pyarrow as pa

from evaluator.hub.checks import _rows_containing


def test_needles_match_as_plain_text_in_one_pass() -> None:
    texts = {
        "r1": '{"submission": {"file_sha256": "0123456789abcdef0123"}}',
        "r2": '{"note": "a.c(d)*[x] and é 日本 as written"}',
        "r3": '{"note": "abc(d) matches only a pattern"}',
        "r4": '{"file_sha256": "0123456789ABCDEF0123"}',  # another case: another needle
        "r5": None,
    }
    table = pa.table({"run_id": list(texts), "run_json": list(texts.values())})
    tabs = SimpleNamespace(runs_table=table)
    needles = {"0123456789abcdef0123", "a.c(d)*[x] and é 日本"}
    assert _rows_containing(tabs, needles) == {"r1", "r2"}  # type: ignore[arg-type]
    assert _rows_containing(tabs, {"zzzzzzzzzzzzzzzzzz"}) == set()  # type: ignore[arg-type]
    assert _rows_containing(tabs, set()) == set()  # type: ignore[arg-type]


def test_a_shard_reads_run_by_run_whatever_its_order() -> None:
    """A shard as a push writes it (each run's rows together) is cut into runs without a copy;
    one whose rows are interleaved (another writer, a hand-made file) gives the same runs, each
    in its stored order; rows of runs not asked for and rows with no run id are left out."""
    import numpy as np

    from evaluator.hub import tables as T

    def part(ids: list[str], label: int) -> pa.Table:
        schema = T.kind_schema("predictions")
        t = pa.table({n: pa.nulls(len(ids), schema.field(n).type) for n in schema.names})
        t = t.set_column(schema.get_field_index("sample_id"), "sample_id", pa.array(ids))
        at = schema.get_field_index("label")
        return t.set_column(at, "label", pa.array([label] * len(ids), pa.int8()))

    parts = [("a", part(["s2", "s1", "s3"], 0)), ("b", part(["s1"], 1)), ("c", part(["s9"], 1))]
    grouped = T.shard_table("predictions", parts)
    rng = np.random.default_rng(0)
    interleaved = grouped.take(pa.array(rng.permutation(len(grouped))))
    orphan = grouped.slice(0, 1).set_column(0, "run_id", pa.array([None], pa.string()))
    with_orphan = pa.concat_tables([interleaved, orphan])
    want = {r: t.select(["sample_id", "label"]).to_pylist() for r, t in parts if r != "c"}
    # small row groups: each has a dictionary of run ids of its own, and a run's rows span two
    for shard, groups in [(grouped, None), (grouped, 2), (interleaved, 2), (with_orphan, 1)]:
        got = T.read_shard(T.parquet_bytes(shard, groups), "predictions", {"a", "b"}, "shard")
        assert set(got) == {"a", "b"}
        for rid, rows in want.items():
            assert got[rid].schema == T.kind_schema("predictions")
            mine = got[rid].select(["sample_id", "label"]).to_pylist()
            if shard is grouped:
                assert mine == rows  # in their stored order
            else:
                assert sorted(mine, key=str) == sorted(rows, key=str)
    # run ids written as numbers are read as their text
    numbered = grouped.set_column(0, "run_id", pa.array([7, 7, 7, 8, 9], pa.int64()))
    got = T.read_shard(T.parquet_bytes(numbered), "predictions", {"7", "8"}, "shard")
    assert {r: len(t) for r, t in got.items()} == {"7": 3, "8": 1}
    assert set(T.read_shard(T.parquet_bytes(grouped), "predictions", set(), "shard")) == {
        "a",
        "b",
        "c",
    }
