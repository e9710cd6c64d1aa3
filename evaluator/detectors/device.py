"""Where a detector runs: CUDA, Apple MPS or the CPU, chosen from what torch reports (never from
nvidia-smi) or by flag; on a GPU the dtype the detector's authors run (float32 unless a detector
says otherwise), float32 on the CPU."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import Any

from evaluator.core.errors import DetectorError

PRECISIONS = ("auto", "float32", "float16", "bfloat16")


@dataclass(frozen=True)
class DeviceChoice:
    name: str  # "cuda", "cuda:1", "mps" or "cpu"
    dtype_name: str  # "float32", "float16" or "bfloat16"

    @property
    def kind(self) -> str:
        return self.name.split(":", 1)[0]

    @property
    def torch_device(self) -> Any:
        import torch

        return torch.device(self.name)

    @property
    def dtype(self) -> Any:
        import torch

        return getattr(torch, self.dtype_name)


def _mps_available() -> bool:
    import torch

    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def resolve_device(
    requested: str | None = None, precision: str | None = None, *, gpu: str = "float32"
) -> DeviceChoice:
    """The device to run on. `requested`: None/"auto" (CUDA if torch sees one, else MPS, else
    CPU), "cuda", "cuda:N", "mps" or "cpu"; asking for an accelerator torch cannot see is an
    error, not a silent fallback. `precision`: "auto" (`gpu`, the authors' dtype, on a GPU;
    float32 on the CPU) or an explicit dtype."""
    import torch

    req = (requested or "auto").strip().lower()
    if req == "auto":
        if torch.cuda.is_available():
            req = "cuda"
        elif _mps_available():
            req = "mps"
        else:
            req = "cpu"
    kind = req.split(":", 1)[0]
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise DetectorError(f"device {requested!r}: torch sees no CUDA device")
        if ":" in req:
            idx = req.split(":", 1)[1]
            if not idx.isdigit() or int(idx) >= torch.cuda.device_count():
                raise DetectorError(
                    f"device {requested!r}: torch sees {torch.cuda.device_count()} CUDA device(s)"
                )
    elif kind == "mps":
        if ":" in req or not _mps_available():
            raise DetectorError(f"device {requested!r}: torch sees no MPS device")
    elif req != "cpu":
        raise DetectorError(f"unknown device {requested!r}; use cuda, cuda:N, mps or cpu")
    prec = (precision or "auto").strip().lower()
    if prec not in PRECISIONS:
        raise DetectorError(f"unknown precision {precision!r}; use {', '.join(PRECISIONS)}")
    if prec == "auto":
        prec = "float32" if kind == "cpu" else gpu
    return DeviceChoice(req, prec)


def seed_everything(seed: int = 0) -> None:
    """Seed Python, numpy and torch, and ask cuDNN for deterministic kernels. Inference in eval
    mode is then a pure function of the inputs (same inputs, same scores)."""
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def place(model: Any, device: DeviceChoice) -> Any:
    """Move a model to the device in the chosen precision, in eval mode."""
    model = model.to(device.torch_device)
    if device.dtype_name != "float32":
        model = model.to(device.dtype)
    model.eval()
    return model
