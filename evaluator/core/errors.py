"""Domain exceptions. Each carries the offending value so a message can name it."""

from __future__ import annotations

from collections.abc import Iterable


class FactBoardError(Exception):
    """Base class for every error FactBoard raises on bad input or bad state."""


class UnknownNameError(FactBoardError, KeyError):
    """A registry lookup with a name that is not registered."""

    def __init__(self, what: str, name: str, known: Iterable[str]):
        self.what = what
        self.name = name
        self.known = sorted(known)
        super().__init__(f"unknown {what} {name!r}; known: {', '.join(self.known) or '(none)'}")

    def __str__(self) -> str:  # KeyError would otherwise quote the whole message
        return str(self.args[0])


class IngestError(FactBoardError):
    """A benchmark release that cannot be read: names file, record and field."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        record: str | int | None = None,
        field: str | None = None,
    ):
        self.file = file
        self.record = record
        self.field = field
        where = []
        if file is not None:
            where.append(str(file))
        if record is not None:
            where.append(f"record {record}")
        if field is not None:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class ScoringError(FactBoardError):
    """Predictions that cannot be scored against a benchmark (unknown ids, no dev split, ...)."""


class CorruptRunError(FactBoardError):
    """A run folder whose files are missing, unreadable or inconsistent."""

    def __init__(self, path: str, problem: str):
        self.path = path
        self.problem = problem
        super().__init__(f"run folder {path}: {problem}")


class ValidationFailed(FactBoardError):
    """A prediction file with one or more problems; `problems` lists them all."""

    def __init__(self, problems: list):
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems[:50])
        more = f"\n  ... and {len(problems) - 50} more" if len(problems) > 50 else ""
        super().__init__(f"{len(problems)} problem(s) in the prediction file:\n{lines}{more}")


class DetectorError(FactBoardError):
    """A detector that cannot run: bad option, unloadable checkpoint, unusable input."""
