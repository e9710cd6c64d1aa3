"""Every metric has a plain one-sentence definition for a reader's hover help."""

from __future__ import annotations

from evaluator.core import vocabulary as V


def test_every_metric_is_defined_in_one_plain_sentence() -> None:
    for name, m in V.METRICS.items():
        d = m.definition
        assert d and d[0].isupper() and d.endswith("."), name
        assert "_" not in d and "  " not in d, name
        assert V.metric_definition(name).startswith(f"{m.title}. "), name
    assert "system" in V.metric("partial_pearson").definition
    assert V.metric_definition("not_a_metric") == "not_a_metric"
