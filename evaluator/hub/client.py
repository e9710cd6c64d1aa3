"""The Hub client FactBoard uses: huggingface_hub's HfApi and hf_hub_download with retries, clear
errors and no token ever in a message.

Configuration comes from the environment, as huggingface_hub reads it: $FACTBOARD_HUB_REPO (the
results dataset repo, "owner/name"), $HF_TOKEN (auth) and $HF_ENDPOINT (the Hub's URL). All three
are read at call time, so tests can point a process at a local fake Hub.

huggingface_hub retries some calls (preupload, tree pages) and not others (commits, repo_info and
file downloads that get a 503), so every call here goes through `_retrying`: 408/429/5xx and
network errors are retried with exponential backoff ($FACTBOARD_HUB_RETRIES tries, default 5;
first wait $FACTBOARD_HUB_BACKOFF seconds, default 0.5, doubling to at most 8 s). 401 and 403 are
not retried: they become HubAuthError with what to do about them. A commit made with
`parent_commit` that the Hub answers with 412 (the branch moved) raises StaleHead for the caller
to re-read and retry. A download larger than `max_bytes` allows is refused (TooLarge) without
being read.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from evaluator.core.errors import FactBoardError

T = TypeVar("T")
MAX_BYTES_ENV = "FACTBOARD_HUB_MAX_BYTES"
DEFAULT_MAX_BYTES = 2**30  # a table, a shard or a benchmark's samples
JSON_MAX_BYTES = 16 * 2**20  # the manifest, a job, a benchmark.json
CSV_MAX_BYTES = 64 * 2**20  # a reported table
DEFAULT_ENDPOINT = "https://huggingface.co"
RETRY_STATUS = (408, 429, 500, 502, 503, 504)


class HubError(FactBoardError):
    """The results repo cannot be read or written (after retries)."""


class HubAuthError(HubError):
    """A missing, wrong or read-only token."""


class HubUnavailable(HubError):
    """The Hub kept answering 5xx / 429 or could not be reached."""


class StaleHead(HubError):
    """A commit with parent_commit was refused (412): the branch moved since it was read."""


class TooLarge(HubError):
    """A file of the results repo is larger than a replica reads."""


def max_bytes(path: str) -> int:
    """The most bytes a replica downloads of `path`."""
    try:
        big = int(os.environ.get(MAX_BYTES_ENV, "") or DEFAULT_MAX_BYTES)
    except ValueError:
        raise HubError(f"{MAX_BYTES_ENV} must be a whole number of bytes") from None
    if path.endswith(".json"):
        return min(big, JSON_MAX_BYTES)
    if path.endswith(".csv"):
        return min(big, CSV_MAX_BYTES)
    return big


def too_large(path: str, cap: int, size: int | None = None) -> TooLarge:
    from evaluator.core.formatting import count

    what = f" ({count(size)} bytes)" if size is not None else ""
    return TooLarge(
        f"{path}{what} is larger than a replica reads from the results repo ({count(cap)} "
        f"bytes; {MAX_BYTES_ENV} sets the cap for tables, shards and samples)"
    )


@dataclass(frozen=True)
class HubConfig:
    repo: str
    token: str | None
    endpoint: str

    def __repr__(self) -> str:  # never show the token
        return f"HubConfig(repo={self.repo!r}, endpoint={self.endpoint!r}, token=***)"


def hub_repo() -> str | None:
    return os.environ.get("FACTBOARD_HUB_REPO", "").strip() or None


def config_from_env(repo: str | None = None) -> HubConfig | None:
    """The Hub configuration, or None when no results repo is configured."""
    repo = repo or hub_repo()
    if not repo:
        return None
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise HubError(f"FACTBOARD_HUB_REPO={repo!r} is not of the form owner/name")
    token = os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN") or None
    endpoint = (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
    return HubConfig(repo, token, endpoint)


def require_config(repo: str | None = None) -> HubConfig:
    cfg = config_from_env(repo)
    if cfg is None:
        raise HubError("no results repo: set FACTBOARD_HUB_REPO=owner/name (a dataset repo)")
    return cfg


def redact(text: str, token: str | None) -> str:
    """`text` with the token (and any hf_... looking secret) replaced by ***."""
    if token:
        text = text.replace(token, "***")
    import re

    return re.sub(r"hf_[A-Za-z0-9]{8,}", "hf_***", text)


def blob_oid(data: bytes) -> str:
    """The git blob id of `data`: what the Hub's tree listing reports as a small file's oid."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _retries() -> tuple[int, float]:
    try:
        tries = max(1, int(os.environ.get("FACTBOARD_HUB_RETRIES", "5")))
        base = max(0.0, float(os.environ.get("FACTBOARD_HUB_BACKOFF", "0.5")))
    except ValueError:
        raise HubError("FACTBOARD_HUB_RETRIES / FACTBOARD_HUB_BACKOFF must be numbers") from None
    return tries, base


def _status(e: BaseException) -> int | None:
    resp = getattr(e, "response", None)
    code = getattr(resp, "status_code", None)
    return int(code) if isinstance(code, int) else None


def _is_network(e: BaseException) -> bool:
    names = {c.__name__ for c in type(e).__mro__}
    return bool(
        names
        & {
            "ConnectError",
            "ConnectionError",
            "TimeoutException",
            "NetworkError",
            "RemoteProtocolError",
            "ReadTimeout",
            "ConnectTimeout",
        }
    )


class HubClient:
    """One results repo on one endpoint. Thread-safe (huggingface_hub's session is)."""

    def __init__(self, config: HubConfig, sleep: Callable[[float], None] = time.sleep):
        from huggingface_hub import HfApi

        self.config = config
        self.repo = config.repo
        self.api = HfApi(endpoint=config.endpoint, token=config.token or False)
        self._sleep = sleep

    @classmethod
    def from_env(cls, repo: str | None = None) -> HubClient:
        return cls(require_config(repo))

    # ---- errors and retries
    def _explain(self, e: BaseException, what: str) -> HubError:
        code = _status(e)
        msg = redact(str(e).splitlines()[0] if str(e) else type(e).__name__, self.config.token)
        where = f"{self.repo} on {self.config.endpoint}"
        if code == 401:
            if not self.config.token:
                return HubAuthError(
                    f"{what}: the Hub refused an anonymous request to {where}: set HF_TOKEN "
                    "to a token that can read (and, to publish, write) the results repo"
                )
            return HubAuthError(
                f"{what}: the Hub refused the token in HF_TOKEN for {where} (401: invalid or "
                "expired); create a new one at huggingface.co/settings/tokens"
            )
        if code == 403:
            return HubAuthError(
                f"{what}: the token in HF_TOKEN cannot write to {where} (403: read-only or no "
                "access); use a token with write access to the repo"
            )
        if code == 404:
            from huggingface_hub.errors import EntryNotFoundError, RevisionNotFoundError

            if isinstance(e, EntryNotFoundError | RevisionNotFoundError):
                return HubError(f"{what}: not in {where} (404: {msg})")
            return HubError(f"{what}: {where} was not found (404); is FACTBOARD_HUB_REPO right?")
        if code == 412:
            return StaleHead(f"{what}: the results repo moved on since it was read (412)")
        if code in RETRY_STATUS or _is_network(e):
            return HubUnavailable(f"{what}: the Hub at {self.config.endpoint} failed ({msg})")
        return HubError(f"{what}: {msg}")

    def _retrying(self, what: str, fn: Callable[[], T]) -> T:
        tries, base = _retries()
        for attempt in range(1, tries + 1):
            try:
                return fn()
            except HubError:
                raise
            except Exception as e:
                err = self._explain(e, what)
                if not isinstance(err, HubUnavailable) or attempt == tries:
                    raise err from None
                self._sleep(min(8.0, base * 2 ** (attempt - 1)))
        raise AssertionError("unreachable")

    def call(self, what: str, fn: Callable[[], T], retry: bool = True) -> T:
        """Another Hub API call (through `self.api`) with this client's errors: `what` names it
        in the message; retried on 408/429/5xx unless `retry` is False (a call that must not
        run twice, such as opening a pull request)."""
        if retry:
            return self._retrying(what, fn)
        try:
            return fn()
        except HubError:
            raise
        except Exception as e:
            raise self._explain(e, what) from None

    # ---- reads
    def ensure_repo(self) -> None:
        """Create the results dataset repo when it does not exist (needs a write token)."""
        self._retrying(
            "create the results repo",
            lambda: self.api.create_repo(
                self.repo, repo_type="dataset", exist_ok=True, private=False
            ),
        )

    def head(self) -> str:
        """The commit id the main branch points to now."""
        info = self._retrying(
            "read the results repo",
            lambda: self.api.repo_info(self.repo, repo_type="dataset", revision="main"),
        )
        return str(info.sha)

    def tree(self, revision: str, folder: str | None = None) -> dict[str, str]:
        """Every file of the repo (or of one folder) at `revision`: path -> blob oid."""
        from huggingface_hub.errors import EntryNotFoundError

        def listing() -> dict[str, str]:
            out = {}
            try:
                for item in self.api.list_repo_tree(
                    self.repo,
                    folder,
                    recursive=True,
                    repo_type="dataset",
                    revision=revision,
                ):
                    oid = getattr(item, "blob_id", None)
                    if oid is not None and hasattr(item, "size"):
                        out[item.path] = str(oid)
            except EntryNotFoundError:
                if folder is None:
                    raise
            return out

        return self._retrying("list the results repo", listing)

    def download(
        self, paths: Iterable[str], revision: str, dest: Path, workers: int = 8
    ) -> list[Path]:
        """Download files at `revision` into dest/<path> (parallel, each retried and capped in
        size as `fetch` is; a path that would leave `dest` is refused)."""
        dest.mkdir(parents=True, exist_ok=True)
        top = dest.resolve()

        def one(path: str) -> Path:
            target = (dest / path).resolve()
            if not target.is_relative_to(top) or target == top:
                raise HubError(f"download {path!r}: not a path inside the repo")
            data = self.fetch(path, revision)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            return target

        items = list(paths)
        if len(items) <= 1:
            return [one(p) for p in items]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(one, items))

    def fetch(self, path: str, revision: str) -> bytes:
        """One file's bytes at `revision` in one request (a GET on the resolver URL, no metadata
        call first): how the tables, the manifest and the shards are read. A file larger than
        `max_bytes` is refused (TooLarge, naming it and the cap) without
        being read."""
        from huggingface_hub import hf_hub_url
        from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

        url = hf_hub_url(
            self.repo, path, repo_type="dataset", revision=revision, endpoint=self.config.endpoint
        )

        cap = max_bytes(path)  # what a replica reads of one file (named in the error)

        def get() -> bytes:
            headers = build_hf_headers(token=self.config.token or False)
            with get_session().stream("GET", url, headers=headers, timeout=120) as r:
                if r.status_code >= 400:
                    r.read()
                    hf_raise_for_status(r)
                size = r.headers.get("Content-Length") or ""
                if size.isdigit() and int(size) > cap:
                    raise too_large(path, cap, int(size))
                body = bytearray()
                for chunk in r.iter_bytes():
                    body += chunk
                    if len(body) > cap:
                        raise too_large(path, cap)
                return bytes(body)

        return self._retrying(f"download {path}", get)

    def read(self, path: str, revision: str) -> bytes:
        """One (small) file's bytes at `revision`."""
        with tempfile.TemporaryDirectory(prefix="factboard-hub-") as tmp:
            (p,) = self.download([path], revision, Path(tmp))
            data = p.read_bytes()
            shutil.rmtree(tmp, ignore_errors=True)
            return data

    # ---- writes
    def commit(
        self,
        adds: dict[str, bytes | Path],
        deletes: Iterable[str] = (),
        delete_folders: Iterable[str] = (),
        message: str = "FactBoard update",
        parent: str | None = None,
    ) -> str:
        """One commit; returns the new head. With `parent`, StaleHead when the branch moved.

        Without a parent the commit is retried on 5xx (all FactBoard's unconditional writes are
        idempotent: the same files with the same content); with a parent, a retry after a lost
        answer gets a 412 and the caller re-reads the repo to see whether its change is there."""
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        def ops() -> list[Any]:
            out: list[Any] = [
                CommitOperationAdd(path_in_repo=p, path_or_fileobj=_bytes(v))
                for p, v in sorted(adds.items())
            ]
            out += [CommitOperationDelete(path_in_repo=p) for p in sorted(set(deletes))]
            out += [
                CommitOperationDelete(path_in_repo=p.rstrip("/") + "/", is_folder=True)
                for p in sorted(set(delete_folders))
            ]
            return out

        info = self._retrying(
            "publish to the results repo",
            lambda: self.api.create_commit(
                self.repo,
                ops(),
                commit_message=message,
                repo_type="dataset",
                parent_commit=parent,
            ),
        )
        return str(info.oid)


def _bytes(v: bytes | Path) -> bytes:
    return v if isinstance(v, bytes) else Path(v).read_bytes()
