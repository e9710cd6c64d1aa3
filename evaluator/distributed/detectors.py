"""Reference detectors on Ray Data: the blocks of evaluator.detectors.blocks go through
`map_batches` with a callable class (`ScoreBlocks`) that builds the detector once per actor, by
the same registry code as a local run, and scores each block with the same function
(`blocks.score_block`). `workers` actors run at once, each asking Ray for one CPU and
`gpus_per_worker` GPUs; an actor that dies (killed, out of memory, its node lost) is restarted
by Ray and its block is run again (`max_restarts`, `max_task_retries`). Every finished block
comes back to the driver, which checkpoints it and moves the progress bar; a block is taken
once, however many times it was run.
"""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

import pandas as pd

from evaluator.detectors.blocks import BlockResult, by_block, score_block
from evaluator.distributed.cluster import ClusterError, connect

MAX_RESTARTS = 4  # restarts of one actor (Ray's), and retries of the block it was running


@dataclass(frozen=True)
class DetectorSpec:
    """How each actor builds its detector: the arguments of
    evaluator.detectors.build.build_detector, and `files` (option -> file text) written in the
    actor's own temporary folder and given as that option's path (SummaC-Conv's weights trained
    on the driver, for a node that does not share the driver's disk)."""

    name: str
    checkpoint: str | None = None
    device: str | None = None
    batch_size: int | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)

    def build(self) -> Any:
        from evaluator.detectors.build import build_detector

        options = dict(self.options)
        if self.files:
            folder = tempfile.mkdtemp(prefix="factboard-")
            for key, text in self.files.items():
                path = os.path.join(folder, f"{key}.json")
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text)
                options[key] = path
        return build_detector(
            self.name,
            checkpoint=self.checkpoint,
            device=self.device,
            batch_size=self.batch_size,
            options=options,
            progress=False,
        )


class ScoreBlocks:
    """The map_batches class: one detector per actor; a batch holds whole blocks (one or more),
    each scored by one detector call."""

    def __init__(self, spec: DetectorSpec, factory: Callable[[], Any] | None = None):
        self.det = factory() if factory is not None else spec.build()
        # torch, transformers and the weights are loaded here, once per actor, while the pool
        # starts (the actor is ready when it can score), not by the first block it is given
        load = getattr(self.det, "ensure_loaded", None)
        if callable(load):
            load()

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        out = []
        for block, rows in unpack_blocks(batch):
            r = score_block(self.det, block, rows)
            meta = [json.dumps(r.meta, default=str)] + [""] * (len(rows) - 1)
            out.append(
                pd.DataFrame(
                    {
                        "block": int(block),
                        "sample_id": r.sample_ids,
                        "score": r.scores,
                        "evidence": pd.Series(r.evidence, dtype=object),
                        "meta": meta,
                    }
                )
            )
        if not out:
            return pd.DataFrame(
                {"block": [], "sample_id": [], "score": [], "evidence": [], "meta": []}
            )
        return pd.concat(out, ignore_index=True)


class BlockItem(TypedDict):
    """One block as the pipeline's row: its sample ids, documents and summaries."""

    block: int
    sample_id: list[str]
    document: list[str]
    summary: list[str]


def pack_blocks(todo: pd.DataFrame) -> list[BlockItem]:
    """One item per block (its sample ids, documents and summaries as lists): the pipeline's
    rows. Built in the driver, as `ray.data.from_items` puts them in the object store, where
    `from_pandas` would first run a task on a worker to read each frame's schema (a worker
    process started, and Ray Data imported in it, before the pipeline could begin)."""
    return [
        {
            "block": int(b),
            "sample_id": g["sample_id"].astype(str).tolist(),
            "document": g["document"].tolist(),
            "summary": g["summary"].tolist(),
        }
        for b, g in by_block(todo)
    ]


def unpack_blocks(batch: pd.DataFrame) -> list[tuple[int, pd.DataFrame]]:
    """The blocks of a pipeline batch (pack_blocks's items), each as the frame score_block
    takes."""
    out = []
    for item in batch.to_dict("records"):
        ids = [str(v) for v in item["sample_id"]]
        frame = pd.DataFrame(
            {
                "block": int(item["block"]),
                "sample_id": ids,
                "document": [str(v) for v in item["document"]],
                "summary": [str(v) for v in item["summary"]],
            }
        )
        out.append((int(item["block"]), frame))
    return out


def check_resources(ray: Any, workers: int, gpus_per_worker: float) -> None:
    """A request the cluster can never meet is an error now, not a pipeline that waits."""
    res = ray.cluster_resources()
    gpus = float(res.get("GPU", 0.0))
    if gpus_per_worker > 0 and gpus < gpus_per_worker:
        raise ClusterError(
            f"each worker asks for {gpus_per_worker:g} GPU(s) and the cluster has {gpus:g}"
        )
    if float(res.get("CPU", 0.0)) < 1:
        raise ClusterError("the Ray cluster has no CPU to run a detector actor on")


def score_on_ray(
    todo: pd.DataFrame,
    spec: DetectorSpec,
    *,
    address: str | None,
    workers: int,
    gpus_per_worker: float,
    on_block: Callable[[BlockResult], None],
    factory: Callable[[], Any] | None = None,
) -> None:
    """Score the planned rows `todo` (blocks.plan's columns) on Ray, calling `on_block` in the
    driver for each finished block, once per block.

    factory: builds the detector in each actor instead of `spec` (a test wraps a detector)."""
    if todo.empty:
        return
    connect(address)
    import logging

    import ray.data
    from ray.data import ActorPoolStrategy

    # Ray Data sets up its loggers on import: its per-run notices are not the run's business
    logging.getLogger("ray.data").setLevel(logging.ERROR)

    check_resources(ray, workers, gpus_per_worker)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False  # the run's own bar counts pairs
    ctx.print_on_execution_start = False
    items = pack_blocks(todo)
    expected = {item["block"]: item["sample_id"] for item in items}
    # passed through as map_batches' **ray_remote_args, which Ray types as Any
    remote_args: dict[str, Any] = {
        "max_restarts": MAX_RESTARTS,
        "max_task_retries": MAX_RESTARTS,
    }
    with warnings.catch_warnings():
        # Ray 2.60 warns that extra remote arguments move elsewhere in 2.64: bounded retries
        # matter more than the warning (Ray Data's default retries an actor forever)
        warnings.simplefilter("ignore", DeprecationWarning)
        # one item per Ray Data block and one item per batch: a batch is one whole block of
        # pairs (Ray Data refuses a GPU request without an explicit batch size)
        ds = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
            ScoreBlocks,
            fn_constructor_kwargs={"spec": spec, "factory": factory},
            batch_size=1,
            batch_format="pandas",
            compute=ActorPoolStrategy(
                size=min(workers, len(items)), max_tasks_in_flight_per_actor=1
            ),
            num_cpus=1,
            num_gpus=gpus_per_worker or None,
            **remote_args,
        )
    parts: dict[int, list[pd.DataFrame]] = {}
    done: set[int] = set()
    for batch in ds.iter_batches(batch_format="pandas", batch_size=None, prefetch_batches=0):
        for b, rows in by_block(cast(pd.DataFrame, batch)):
            if b in done or b not in expected:
                continue  # a block run twice (a retried task) is taken once
            parts.setdefault(b, []).append(rows)
            got = pd.concat(parts[b], ignore_index=True).drop_duplicates("sample_id")
            if len(got) < len(expected[b]):
                continue
            if got["sample_id"].tolist() != expected[b]:
                got = got.set_index("sample_id").loc[expected[b]].reset_index()
            meta_text = next((m for m in got["meta"] if m), "{}")
            done.add(b)
            parts.pop(b, None)
            on_block(
                BlockResult(
                    b,
                    got["sample_id"].astype(str).tolist(),
                    [float(v) for v in got["score"]],
                    json.loads(meta_text),
                    [v if isinstance(v, str) else None for v in got["evidence"]],
                )
            )
    missing = sorted(set(expected) - done)
    if missing:
        raise ClusterError(f"the Ray pipeline ended without block(s) {missing[:10]}")
