"""The one registry pattern (evaluator.core.registry.Registry) that job handlers, benchmarks,
detectors, LLM providers, judge protocols and metrics all use."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from evaluator.core.errors import UnknownNameError
from evaluator.core.registry import Registry


def test_registration_lookup_and_order() -> None:
    reg: Registry[object] = Registry("widget")

    @reg.register("b")
    def b() -> None: ...

    assert reg.add("a", 1) == 1
    assert reg.get("b") is b and reg.get("a") == 1
    assert reg.names() == ["a", "b"]  # sorted
    assert list(reg) == ["b", "a"] and reg.values() == [b, 1]  # registration order
    assert "a" in reg and "c" not in reg and len(reg) == 2
    assert reg.find("c") is None and reg.find("a") == 1


def test_unknown_and_duplicate_names() -> None:
    reg: Registry[int] = Registry("widget")
    reg.add("one", 1)
    with pytest.raises(UnknownNameError) as e:
        reg.get("two")
    assert str(e.value) == "unknown widget 'two'; known: one"
    assert isinstance(e.value, KeyError)
    with pytest.raises(ValueError, match="widget 'one' is registered twice"):
        reg.add("one", 2)
    reg.add("one", 3, replace=True)
    assert reg.get("one") == 3
    reg.remove("one")
    assert str(pytest.raises(UnknownNameError, reg.get, "one").value) == (
        "unknown widget 'one'; known: (none)"
    )


def test_a_lazy_entry_is_loaded_once_on_first_use() -> None:
    calls: list[int] = []
    reg: Registry[str] = Registry("widget")

    def load() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("not yet")
        return "loaded"

    reg.add_lazy("w", load)
    assert calls == [] and reg.names() == ["w"]
    with pytest.raises(RuntimeError, match="not yet"):
        reg.get("w")  # a failed load stays lazy: the next use tries again
    assert reg.get("w") == "loaded" and reg.get("w") == "loaded"
    assert len(calls) == 2


def test_modules_that_register_entries_are_imported_on_first_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "regtest_home.py").write_text(
        "from evaluator.core.registry import Registry\n"
        "REG = Registry('widget', modules=('regtest_plugin',))\n"
    )
    (tmp_path / "regtest_plugin.py").write_text(
        "from regtest_home import REG\n\n@REG.register('gear')\nclass Gear: ...\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for m in ("regtest_home", "regtest_plugin"):
        monkeypatch.delitem(sys.modules, m, raising=False)
    import regtest_home  # type: ignore[import-not-found]

    assert "regtest_plugin" not in sys.modules
    assert regtest_home.REG.names() == ["gear"]
    assert regtest_home.REG.get("gear").__name__ == "Gear"


def test_snapshot_and_restore() -> None:
    reg: Registry[int] = Registry("widget")
    reg.add("a", 1)
    snap = reg.snapshot()
    reg.add("b", 2)
    reg.restore(snap)
    assert reg.names() == ["a"]


def test_the_engine_registries_share_the_pattern() -> None:
    from evaluator.benchmarks.registry import BENCHMARKS
    from evaluator.core.vocabulary import METRICS
    from evaluator.detectors.registry import DETECTORS
    from evaluator.jobs.worker import HANDLERS
    from evaluator.llm.clients import PROVIDERS
    from evaluator.llm.prompts import JUDGES

    for reg, what, some in (
        (BENCHMARKS, "benchmark", "summedits"),
        (METRICS, "metric", "balanced_accuracy"),
        (DETECTORS, "detector", "summac-zs"),
        (HANDLERS, "job kind", "judge"),
        (PROVIDERS, "LLM provider", "openai"),
        (JUDGES, "judge protocol", "EvalV4"),
    ):
        assert isinstance(reg, Registry) and reg.what == what and some in reg.names()
        with pytest.raises(UnknownNameError, match=f"^unknown {what} 'nope'; known: "):
            reg.get("nope")


def test_a_metric_s_domain_follows_the_registry() -> None:
    """metric_domain is kept per name, and a metric registered or removed later is seen at once
    (the registry's version moves with every change)."""
    from evaluator.core.vocabulary import METRICS, OPEN_BOUND, Metric, metric_domain

    name = "test_only_correlation"
    before = METRICS.version
    snap = METRICS.snapshot()
    assert metric_domain(name) == (-OPEN_BOUND, OPEN_BOUND)  # unknown: a wide range
    try:
        METRICS.add(name, Metric(name, "T", "Test", ("correlation",), "scores"))
        assert METRICS.version > before
        assert metric_domain(name) == (-1.0, 1.0)
        METRICS.remove(name)
        assert metric_domain(name) == (-OPEN_BOUND, OPEN_BOUND)
    finally:
        METRICS.restore(snap)
    assert metric_domain("balanced_accuracy") == (0.0, 1.0)
