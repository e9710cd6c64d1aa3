"""The app's link to the results repo: one background thread per process that pulls at start and
every $FACTBOARD_HUB_POLL seconds (default 60), and pushes whatever the local root has that the
repo lacks (accepted submissions, moderation, queued jobs) a few seconds after it appears. After
each pull it submits the entries of the repo's open pull requests (evaluator/hub/inbox.py: a
submission from an author without write access), which the next push publishes.

Nothing is queued in memory: the thread notices local changes by a cheap fingerprint of the data
and submissions folders, and each push computes its outbox by comparing the local root with the
repo (evaluator/hub/sync.py); a submission written just before the process died is pushed by the
next process at its start. Failures (Hub down, 5xx, a wrong or read-only token) are retried with
backoff, and `notice()` says what is wrong in one line for the page, without the token.

`page_notice()` is called by app.py on every script run: without $FACTBOARD_HUB_REPO it starts
nothing and says that the board runs on its shipped and local data only; with one it calls
`start()`. Its pulls keep the checked runs in packs (evaluator/store/pulled.py: the board
reads them in place) and write them as run folders at the next tick (FACTBOARD_HUB_PUSH_EVERY),
once the first pages are drawn; many of them (pulled.WRITE_AT_ONCE_BELOW and more) in a child
process at a lower priority (`python -m evaluator.hub.background write-packed ROOT`): thousands
of run folders are seconds of Python that would otherwise hold this server's interpreter lock
while its first visitors' pages wait on it.
The first call waits for the first sync, up to $FACTBOARD_HUB_BOOT_WAIT seconds (default
30) on an empty disk and 3 s otherwise, so a fresh Space shows the whole board on its first page;
a sync still going when that wait ends is said on that first page (the repo has not answered), not
left for a later reload.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from evaluator.hub.client import HubAuthError, HubClient, HubError, config_from_env
from evaluator.store import layout


def _env_float(name: str, default: float) -> float:
    try:
        return max(0.01, float(os.environ.get(name, default)))
    except ValueError:
        return default


@dataclass
class State:
    repo: str
    last_pull: float = 0.0
    last_push: float = 0.0
    error: str | None = None
    auth_error: bool = False
    failures: int = 0
    inbox: str | None = None  # why the last pass over the inbox stopped (None: it did not)


@dataclass(frozen=True)
class Notice:
    """One line for the top of every page: 'info' (how the board runs) or 'warning' (the
    results repo cannot be reached or refused the token)."""

    level: str
    text: str


NO_REPO = (
    "This board is not connected to a results repo: it shows the published numbers that ship "
    "with FactBoard and the runs stored on this server only."
)


class Syncer:
    def __init__(self, client: HubClient, data_root: Path, sub_root: Path):
        self.client = client
        self.data_root, self.sub_root = data_root, sub_root
        self.state = State(client.repo)
        self.first = threading.Event()
        self.stop = threading.Event()
        self.wake = threading.Event()
        self.poll = _env_float("FACTBOARD_HUB_POLL", 60.0)
        self.tick = _env_float("FACTBOARD_HUB_PUSH_EVERY", min(5.0, self.poll))
        self._pushed_print: tuple[int, ...] | None = None
        self._next_try = 0.0
        self.thread = threading.Thread(target=self._run, name="factboard-hub-sync", daemon=True)

    def fingerprint(self) -> tuple[int, ...]:
        """Changes when a run, record, job or moderation action is written locally."""
        from evaluator.jobs import queue

        paths = [
            layout.runs_dir(self.data_root),
            layout.benchmarks_dir(self.data_root),
            self.sub_root / "records",
            self.sub_root / "moderation.jsonl",
            *(queue.queue_dir(self.sub_root) / s for s in queue.STATES),
        ]
        out = []
        for p in paths:
            try:
                out.append(p.stat().st_mtime_ns)
            except OSError:
                out.append(0)
        return tuple(out)

    def once(self, force_pull: bool = False) -> None:
        from evaluator.hub import sync
        from evaluator.store import pulled

        now = time.monotonic()
        if self.first.is_set() and pulled.packs(self.data_root):
            # not before the first sync: the first page waits for that one
            self._write_packed()
        if not force_pull and now < self._next_try:
            return  # backing off after a failure
        due = force_pull or now - self.state.last_pull >= self.poll
        changed = self.fingerprint() != self._pushed_print
        if not due and not changed:
            return
        try:
            if due:  # pull and push from one snapshot of the repo
                _, pushed = sync.sync(self.client, self.data_root, self.sub_root, defer=True)
                self.state.last_pull = time.monotonic()
                if pushed is not None:
                    self.state.last_push = self.state.last_pull
                # what the pull wrote is not news (a write racing it goes out with the next poll)
                self._pushed_print = self.fingerprint()
                self._inbox()  # what it submits changes the fingerprint: the next tick pushes
            else:
                before = self.fingerprint()
                sync.push(self.client, self.data_root, self.sub_root)
                self.state.last_push = time.monotonic()
                self._pushed_print = before
            self.state.error, self.state.auth_error, self.state.failures = None, False, 0
        except HubError as e:
            self._failed(str(e), isinstance(e, HubAuthError))
        except Exception as e:  # never let the thread die on a surprise
            self._failed(f"{type(e).__name__}: {e}", False)
        finally:
            self.first.set()

    def _write_packed(self) -> None:
        """What the last pull kept in packs (the board reads them in place) becomes run
        folders, a tick after the pull, once the first pages are drawn. A failure (a full
        disk) is said on the page and tried again next tick; the sync goes on."""
        quiet = self.fingerprint() == self._pushed_print  # nothing local to push
        try:
            write_packed(self.data_root)
        except Exception as e:  # never the end of the thread
            self.state.error = f"the pulled runs could not be written here: {e}"
            return
        if quiet:  # the new folders are the repo's runs, not news
            self._pushed_print = self.fingerprint()

    def _inbox(self) -> None:
        """Submit the entries of the results repo's open pull requests (evaluator/hub/inbox.py);
        its failures are its own and never hold up the sync."""
        from evaluator.hub import inbox

        try:
            rep = inbox.process(self.client, self.data_root, self.sub_root)
            self.state.inbox = "; ".join(rep.skipped) or None
        except HubError as e:
            self.state.inbox = str(e)

    def _failed(self, error: str, auth: bool) -> None:
        """Record the failure and retry with backoff (1, 2, 4 ... s, at most one poll), pull
        and push together."""
        self.state.error, self.state.auth_error = error, auth
        self.state.failures += 1
        wait = min(self.poll, 2.0 ** min(self.state.failures - 1, 6))
        self._next_try = time.monotonic() + wait
        self.state.last_pull = 0.0  # the retry pulls too

    def _run(self) -> None:
        self.once(force_pull=True)
        while not self.stop.is_set():
            self.wake.wait(self.tick)
            self.wake.clear()
            if self.stop.is_set():
                break
            self.once()

    def notice(self) -> str | None:
        s = self.state
        if not self.first.is_set():  # the first sync has not finished: no answer yet
            return (
                f"The results repo {s.repo} cannot be reached yet (no answer so far). Showing "
                "the local copy; retrying in the background."
            )
        if not s.error:
            return None
        if s.auth_error:
            return (
                f"The results repo {s.repo} refused this Space's token: {s.error}. New "
                "submissions are kept here and published once the token is fixed."
            )
        return (
            f"The results repo {s.repo} cannot be reached right now ({s.error}). Showing the "
            "local copy; retrying in the background."
        )


CHILD_NICENESS = 10


def write_packed(data_root: Path) -> None:
    """Write the packed runs of `data_root` as run folders (evaluator.store.runs.materialize):
    here when they are few, else in a child process at a lower priority, which takes the
    packs' cross-process lock chunk by chunk as any writer does. Raises when it fails, with
    the child's last line."""
    from evaluator.store import pulled, runs

    if len(pulled.packed_runs(data_root)) < pulled.WRITE_AT_ONCE_BELOW:
        runs.materialize(data_root)
        return
    code = Path(__file__).resolve().parents[2]  # where `evaluator` is imported from
    out = subprocess.run(
        [sys.executable, "-m", "evaluator.hub.background", "write-packed", str(data_root)],
        cwd=code,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode:
        lines = (out.stderr or out.stdout or f"exit code {out.returncode}").strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"exit code {out.returncode}")


def _child(argv: list[str]) -> int:
    """`python -m evaluator.hub.background write-packed ROOT` (write_packed's child)."""
    if len(argv) != 2 or argv[0] != "write-packed":
        print("usage: python -m evaluator.hub.background write-packed DATA_ROOT", file=sys.stderr)
        return 2
    from evaluator.store import runs

    os.nice(CHILD_NICENESS)  # the server's pages first
    runs.materialize(Path(argv[1]))
    return 0


_LOCK = threading.Lock()
_SYNCERS: dict[tuple[str, str, str], Syncer] = {}


def start(data_root: Path | None = None, sub_root: Path | None = None) -> str | None:
    """Start (once per process, data root and repo) the background sync; returns the notice to
    show, or None when all is well or no results repo is configured."""
    try:
        cfg = config_from_env()
    except HubError as e:
        return str(e)
    if cfg is None:
        return None
    data_root = data_root or layout.data_root()
    sub_root = sub_root or layout.submissions_root()
    key = (cfg.repo, str(data_root), str(sub_root))
    with _LOCK:
        syncer = _SYNCERS.get(key)
        fresh = syncer is None
        if syncer is None:
            from huggingface_hub.utils import disable_progress_bars

            # the sync's modules before the first page's wait starts: on a busy machine their
            # import alone took longer than that wait
            import evaluator.hub.sync  # noqa: F401

            disable_progress_bars()  # the app's log is no place for download bars
            syncer = Syncer(HubClient(cfg), data_root, sub_root)
            _SYNCERS[key] = syncer
            syncer.thread.start()
    if fresh:
        # the first page waits for the first sync: the whole board on an empty disk (up to
        # $FACTBOARD_HUB_BOOT_WAIT s), a short check when the entry script already pulled
        wait = _env_float("FACTBOARD_HUB_BOOT_WAIT", 30.0)
        syncer.first.wait(wait if not _has_runs(data_root) else min(wait, 3.0))
    else:
        syncer.wake.set()  # a rerun (e.g. after a submission): push soon
    return syncer.notice()


def page_notice(data_root: Path | None = None, sub_root: Path | None = None) -> Notice | None:
    """What the top of a page says about the results repo, from the first page load on: that
    none is configured (the board runs on its shipped and local data), that it cannot be
    reached or refused the token (`start`), or nothing when all is well."""
    try:
        configured = config_from_env() is not None
    except HubError as e:
        return Notice("warning", str(e))
    if not configured:
        return Notice("info", NO_REPO)
    text = start(data_root, sub_root)
    return Notice("warning", text) if text else None


def _has_runs(data_root: Path) -> bool:
    from evaluator.store import pulled

    if pulled.packs(data_root):
        return True
    try:
        return any(layout.runs_dir(data_root).iterdir())
    except OSError:
        return False


def stop_all() -> None:
    """Stop every background sync of this process (tests)."""
    with _LOCK:
        for s in _SYNCERS.values():
            s.stop.set()
            s.wake.set()
        for s in _SYNCERS.values():
            s.thread.join(timeout=10)
        _SYNCERS.clear()


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
