"""The hosted Space: the app boots from the results repo (AppTest), says so when the Hub is down
or the token is wrong, the container entry script serves the app against the fake Hub, and
`space deploy` uploads a Docker Space with its front matter."""

from __future__ import annotations

import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from evaluator.cli.main import main
from evaluator.hub import background, sync
from evaluator.hub.client import HubClient
from tests.hub.conftest import READ_TOKEN, WRITE_TOKEN, Replica, hub_env
from tests.support.apptest import open_app_page
from tests.support.fake_hub import FakeHub
from tests.support.server import free_port
from tests.support.server import stop_session as stop
from tests.support.testdata import add_run, build_demo_root

PAGE = "views/leaderboard.py"

# huggingface_hub's LFS upload passes raw bytes the way httpx now deprecates
pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")


@pytest.fixture(autouse=True)
def _stop_background():
    yield
    background.stop_all()


def seed(hub: FakeHub, a: Replica) -> None:
    build_demo_root(a.data, reported=False)
    add_run(a.data, "demo", "Published elsewhere", seed=3)
    sync.push(HubClient.from_env(), a.data, a.subs, demo=True)


def point_app_at(r: Replica, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTBOARD_DATA", str(r.data))
    monkeypatch.setenv("FACTBOARD_SUBMISSIONS", str(r.subs))
    monkeypatch.setenv("FACTBOARD_HUB_BOOT_WAIT", "30")


def test_a_fresh_space_shows_the_whole_board_on_its_first_page(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = replica("a"), replica("b")
    seed(fake_hub, a)
    shutil.rmtree(b.data)
    point_app_at(b, monkeypatch)
    at = open_app_page(PAGE)
    assert "Published elsewhere" in set(at.dataframe[0].value["Model"])
    assert len(at.dataframe[0].value) == 5
    assert not [w for w in at.warning if "results repo" in w.value]


def test_a_hub_that_is_down_leaves_the_local_copy_on_show_with_a_notice(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = replica("b")
    build_demo_root(b.data, reported=False)  # what the entry script builds when the pull fails
    point_app_at(b, monkeypatch)
    monkeypatch.setenv("FACTBOARD_HUB_RETRIES", "2")
    fake_hub.fail_next(10_000, 503, "/revision/")
    at = open_app_page(PAGE)
    notes = [w.value for w in at.warning if "results repo" in w.value]
    assert notes and "cannot be reached" in notes[0] and "retrying" in notes[0]
    assert len(at.dataframe[0].value) == 4  # the local demo
    assert WRITE_TOKEN not in notes[0]


def test_a_read_only_token_is_a_clear_notice_on_the_submit_page(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = replica("a"), replica("b")
    seed(fake_hub, a)
    point_app_at(b, monkeypatch)
    sync.pull(HubClient.from_env(), b.data, b.subs)
    add_run(b.data, "demo", "Waiting to be published", seed=5, origin="submitted")
    monkeypatch.setenv("HF_TOKEN", READ_TOKEN)
    at = open_app_page("views/submit.py")
    notes = [w.value for w in at.warning if "results repo" in w.value]
    assert notes and "refused this Space's token" in notes[0]
    assert "write access" in notes[0] and READ_TOKEN not in notes[0]


def _get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.status, r.read().decode("utf-8", "replace")


def deployed_space(hub: FakeHub, dest: Path) -> Path:
    """`space deploy` to the fake Hub, then the Space's files written out: what the container
    image holds (the Dockerfile copies the Space repo)."""
    from evaluator.hub.space import deploy

    list(deploy("factboard/board", results="factboard/results"))
    for path, data in (hub.repo("factboard/board", "space").files() or {}).items():
        (dest / path).parent.mkdir(parents=True, exist_ok=True)
        (dest / path).write_bytes(data)
    return dest


def serve(app_dir: Path, env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], int]:
    """Run the entry script as the container does; returns once /_stcore/health says ok."""
    port = free_port()
    env = {**env, "PORT": str(port), "FACTBOARD_ADDRESS": "127.0.0.1"}
    with open(log, "w") as fh:
        p = subprocess.Popen(
            ["bash", "scripts/space_entrypoint.sh"],
            cwd=app_dir,
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    end = time.monotonic() + 90
    while True:
        if p.poll() is not None:
            raise AssertionError(log.read_text())
        try:
            status, body = _get(f"http://127.0.0.1:{port}/_stcore/health")
            if status == 200 and body.strip() == "ok":
                return p, port
        except OSError:
            pass
        if time.monotonic() > end:
            stop(p)
            raise AssertionError(log.read_text())
        time.sleep(0.2)


def test_the_container_entry_script_serves_the_app_against_the_fake_hub(
    fake_hub: FakeHub, replica, tmp_path: Path
) -> None:
    a, space = replica("a"), replica("space")
    seed(fake_hub, a)
    shutil.rmtree(space.data.parent)
    app_dir = deployed_space(fake_hub, tmp_path / "image")
    env = hub_env(fake_hub)
    env.update(space.env(), HF_HOME=str(tmp_path / "hf"))
    p, port = serve(app_dir, env, tmp_path / "entry.log")
    try:
        status, page = _get(f"http://127.0.0.1:{port}/leaderboard")
        assert status == 200 and "<noscript>" in page
        # the board it serves is the results repo's, pulled before the app started (its
        # runs kept in packs, or written as folders by the app's background sync meanwhile)
        from evaluator.hub.local import Local

        pulled = Local(space.data, space.subs).run_ids()
        assert pulled == {d.name for d in (a.data / "runs").iterdir()}
    finally:
        stop(p)
    assert WRITE_TOKEN not in (tmp_path / "entry.log").read_text()


def test_the_entry_script_starts_on_the_demo_when_the_hub_is_down(
    fake_hub: FakeHub, replica, tmp_path: Path
) -> None:
    space = replica("space")
    shutil.rmtree(space.data.parent)
    app_dir = deployed_space(fake_hub, tmp_path / "image")
    fake_hub.fail_next(100_000, 503, "/revision/")
    env = hub_env(fake_hub)
    env.update(space.env(), HF_HOME=str(tmp_path / "hf"), FACTBOARD_HUB_RETRIES="2")
    p, _ = serve(app_dir, env, tmp_path / "entry.log")
    stop(p)
    log = (tmp_path / "entry.log").read_text()
    assert "first pull from factboard/results failed" in log
    assert (space.data / "benchmarks" / "demo" / "samples.parquet").is_file()
    assert len(list((space.data / "runs").iterdir())) == 4


def test_space_deploy_uploads_a_docker_space_with_its_front_matter(
    fake_hub: FakeHub, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(
        [
            "space",
            "deploy",
            "--space",
            "factboard/board",
            "--results",
            "factboard/results",
            "--set-token",
        ]
    )
    out = capsys.readouterr()
    assert rc == 0, out.err
    space = fake_hub.repo("factboard/board", "space")
    files = space.files() or {}
    readme = files["README.md"].decode()
    front = readme.split("---")[1]
    for line in (
        "sdk: docker",
        "app_port: 8501",
        "title: FactBoard",
        "emoji:",
        "short_description:",
    ):
        assert line in front
    for f in (
        "Dockerfile",
        "app.py",
        "scripts/space_entrypoint.sh",
        "scripts/space_prepare.sh",
        "requirements.txt",
        "evaluator/hub/background.py",
        "views/leaderboard.py",
        "leaderboard_data/demo/demo_news.json",
    ):
        assert f in files
    assert not any(p.startswith(("tests/", "submissions/", ".git/")) for p in files)
    assert not any("__pycache__" in p for p in files)
    assert space.variables == {"FACTBOARD_HUB_REPO": "factboard/results"}
    assert space.secrets == {"HF_TOKEN": WRITE_TOKEN}
    assert WRITE_TOKEN not in out.out + out.err
    docker = files["Dockerfile"].decode()
    assert "USER user" in docker and "8501" in docker and "/_stcore/health" in docker


def test_new_runs_in_the_repo_appear_without_a_restart(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = replica("a"), replica("b")
    seed(fake_hub, a)
    point_app_at(b, monkeypatch)
    monkeypatch.setenv("FACTBOARD_HUB_POLL", "0.2")
    monkeypatch.setenv("FACTBOARD_HUB_PUSH_EVERY", "0.05")
    at = open_app_page(PAGE)
    assert "Published later" not in set(at.dataframe[0].value["Model"])
    add_run(a.data, "demo", "Published later", seed=9)
    sync.push(HubClient.from_env(), a.data, a.subs)
    end = time.monotonic() + 20
    while "Published later" not in set(at.dataframe[0].value["Model"]):
        assert time.monotonic() < end, "the new run never reached the page"
        time.sleep(0.2)
        at.run()
    assert not at.exception
