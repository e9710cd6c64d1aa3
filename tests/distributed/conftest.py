"""One local Ray per test module (2 CPUs, one logical GPU, no dashboard), shut down after the
module; the tiny random-weight detector models, built once per module."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _require(module: str, requirements: str) -> None:
    try:
        __import__(module)
    except ImportError:
        msg = f"{module} is not installed (pip install -r {requirements})"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)


@pytest.fixture(scope="module")
def ray_local() -> Iterator[Any]:
    _require("ray", "requirements-ray.txt")
    import ray

    ray.init(
        num_cpus=2,
        num_gpus=1,  # a logical GPU: a run asking for GPUs is scheduled here (the CPU scores)
        include_dashboard=False,
        namespace="factboard",
        logging_level=logging.WARNING,
        log_to_driver=False,
    )
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    for m in ("torch", "transformers", "tokenizers"):
        _require(m, "requirements-detectors.txt")
    from tests.support.detectors import build_tiny_models

    return build_tiny_models(tmp_path_factory.mktemp("tiny-ray"))


@pytest.fixture
def demo(tmp_data_root: Path) -> Path:
    from evaluator.ingest.demo import build_demo

    list(build_demo(root=tmp_data_root))
    return tmp_data_root
