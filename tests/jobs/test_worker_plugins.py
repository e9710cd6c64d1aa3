"""Worker plugins: handlers registered from $FACTBOARD_WORKER_PLUGINS, and bad specs refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.core.errors import FactBoardError
from evaluator.jobs import worker
from evaluator.store import layout, runs
from tests.support.submit import demo_copy, demo_ids, judge_handler, slow_handler


def test_plugins_register_handlers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "HANDLERS", worker.builtin_handlers())
    assert worker.load_plugins(
        "tests.support.submit:register_slow, tests.support.submit:register_judge"
    ) == [
        "tests.support.submit:register_slow",
        "tests.support.submit:register_judge",
    ]
    assert worker.resolve_handler("slow") is slow_handler
    assert worker.resolve_handler("judge") is judge_handler
    assert "slow" in worker.known_kinds()


@pytest.mark.parametrize(
    "spec,message",
    [
        ("no_colon", "worker plugin 'no_colon' is not of the form module:function"),
        (":f", "worker plugin ':f' is not of the form module:function"),
        (
            "tests.support.submit:nope",
            "worker plugin 'tests.support.submit:nope' cannot be loaded: module "
            "'tests.support.submit' has no attribute 'nope'",
        ),
        (
            "no_such_module_x:f",
            "worker plugin 'no_such_module_x:f' cannot be loaded: No module named "
            "'no_such_module_x'",
        ),
    ],
)
def test_bad_plugin_specs_are_refused(spec: str, message: str) -> None:
    with pytest.raises(FactBoardError) as e:
        worker.load_plugins(spec)
    assert str(e.value) == message


def test_plugins_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "HANDLERS", worker.builtin_handlers())
    monkeypatch.setenv("FACTBOARD_WORKER_PLUGINS", "tests.support.submit:register_slow")
    assert worker.load_plugins() == ["tests.support.submit:register_slow"]
    assert worker.resolve_handler("slow") is slow_handler


def test_demo_copy_is_a_full_data_root(
    tmp_data_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    demo_copy(tmp_data_root, tmp_path_factory)
    assert layout.data_root() == tmp_data_root
    assert len(runs.list_runs().runs) == 4
    assert len(demo_ids("test")) == 210 and len(demo_ids("dev")) == 84
