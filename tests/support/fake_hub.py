"""A small Hugging Face Hub on 127.0.0.1 for tests, spoken to by the real huggingface_hub client
(point HF_ENDPOINT at `FakeHub.url`).

It implements what FactBoard's Hub code calls: whoami, repo creation, repo info at a revision,
the recursive tree listing, resolve (HEAD and GET, with X-Repo-Commit and ETag, plus X-Linked-Etag
and X-Linked-Size for LFS files), preupload (Parquet files "lfs", like the Hub's .gitattributes,
everything else "regular"), the LFS batch API with basic transfer (the client must run with
HF_HUB_DISABLE_XET=1: there is no Xet storage here), the NDJSON commit (file / lfsFile /
deletedFile / deletedFolder) with `parentCommit` answered by 412 when the branch head moved, the
Space secret and variable endpoints, and bearer-token auth (401 for an unknown token, 403 for a
write with a read token). Every commit is
kept, so any past revision resolves. `fail_next(n, status, match)` makes the next n requests whose
path contains `match` fail with that status (503s, 429s...).
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

ZERO = "0" * 40


def blob_oid(data: bytes) -> str:
    """The git blob id of `data` (what the Hub reports as a regular file's oid)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def is_lfs(path: str) -> bool:
    return path.endswith(".parquet")


def lfs_pointer(data: bytes) -> bytes:
    sha = hashlib.sha256(data).hexdigest()
    spec = "version https://git-lfs.github.com/spec/v1"
    return f"{spec}\noid sha256:{sha}\nsize {len(data)}\n".encode()


def oid_of(path: str, data: bytes) -> str:
    """A file's oid in a tree listing: the blob id of its content, or of its LFS pointer."""
    return blob_oid(lfs_pointer(data) if is_lfs(path) else data)


@dataclass
class FakeDiscussion:
    """A discussion or pull request; a pull request's commits live on refs/pr/<num>."""

    num: int
    title: str
    author: str
    is_pr: bool
    created_at: str
    status: str = "open"
    events: list[dict[str, Any]] = field(default_factory=list)
    base: dict[str, bytes] = field(default_factory=dict)  # main's files it was opened on
    commits: list[tuple[str, dict[str, bytes]]] = field(default_factory=list)

    def files(self) -> dict[str, bytes]:
        return self.commits[-1][1] if self.commits else dict(self.base)

    def changed(self) -> list[str]:
        """The paths the pull request adds, changes or deletes against its base."""
        now = self.files()
        return sorted(p for p in set(now) | set(self.base) if now.get(p) != self.base.get(p))

    def summary(self, repo: FakeRepo) -> dict[str, Any]:
        return {
            "num": self.num,
            "title": self.title,
            "status": self.status,
            "isPullRequest": self.is_pr,
            "createdAt": self.created_at,
            "author": {"name": self.author},
            "repo": {"name": repo.repo_id, "type": repo.repo_type},
            "pinned": False,
            "numComments": sum(1 for e in self.events if e["type"] == "comment"),
            "topReactions": [],
        }


@dataclass
class FakeRepo:
    repo_id: str
    repo_type: str
    commits: list[tuple[str, dict[str, bytes], str]] = field(default_factory=list)
    secrets: dict[str, str] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)
    private: bool = False
    discussions: dict[int, FakeDiscussion] = field(default_factory=dict)

    @property
    def head(self) -> str:
        return self.commits[-1][0]

    def files(self, rev: str = "main") -> dict[str, bytes] | None:
        if rev in ("main", self.head):
            return self.commits[-1][1]
        if rev.startswith("refs/pr/") and rev[8:].isdigit():
            d = self.discussions.get(int(rev[8:]))
            return d.files() if d is not None and d.is_pr else None
        for sha, files, _ in self.commits:
            if sha == rev:
                return files
        for d in self.discussions.values():
            for sha, files in d.commits:
                if sha == rev:
                    return files
        return None

    def revision_sha(self, rev: str) -> str:
        """The commit a revision names (main, a pull request's ref, or a commit id)."""
        if rev == "main":
            return self.head
        if rev.startswith("refs/pr/") and rev[8:].isdigit():
            d = self.discussions.get(int(rev[8:]))
            if d is not None and d.commits:
                return d.commits[-1][0]
        return rev

    def pull_requests(self) -> list[FakeDiscussion]:
        return [d for d in self.discussions.values() if d.is_pr]


class FakeHub:
    """The server's state and its controls; `start()` binds 127.0.0.1 on a free port."""

    def __init__(self, tokens: dict[str, str] | None = None, users: dict[str, str] | None = None):
        # token -> "write" | "read"; token -> its user's name (default "tester")
        self.tokens = dict(tokens or {})
        self.users = dict(users or {})
        self.repos: dict[tuple[str, str], FakeRepo] = {}
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str, int]] = []  # (method, path, status)
        self.auth_headers: list[str] = []
        self.lfs: dict[str, bytes] = {}  # sha256 -> content uploaded through the LFS batch API
        self._faults: list[list[Any]] = []  # [remaining, status, match]
        self._n = 0
        self.server: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None
        self.delay = 0.0

    # ---- control
    @property
    def url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeHub:
        hub = self

        class Handler(_Handler):
            state = hub

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def create(self, repo_id: str, repo_type: str = "dataset", private: bool = False) -> FakeRepo:
        with self.lock:
            key = (repo_type, repo_id)
            if key not in self.repos:
                repo = FakeRepo(repo_id, repo_type, private=private)
                repo.commits.append((self._sha(), {}, "initial commit"))
                self.repos[key] = repo
            return self.repos[key]

    def repo(self, repo_id: str, repo_type: str = "dataset") -> FakeRepo:
        return self.repos[(repo_type, repo_id)]

    def put(self, repo_id: str, files: dict[str, bytes], message: str = "seed") -> str:
        """Commit files directly (test set-up)."""
        with self.lock:
            repo = self.repos[("dataset", repo_id)]
            new = dict(repo.files() or {})
            new.update(files)
            sha = self._sha()
            repo.commits.append((sha, new, message))
            return sha

    def fail_next(self, n: int, status: int = 503, match: str = "") -> None:
        with self.lock:
            self._faults.append([n, status, match])

    def count(self, method: str, match: str, status: int | None = None) -> int:
        with self.lock:
            return sum(
                1
                for m, p, s in self.requests
                if m == method and match in p and (status is None or s == status)
            )

    def user_of(self, token: str) -> str:
        return self.users.get(token, "tester")

    def _sha(self) -> str:
        self._n += 1
        return hashlib.sha1(f"commit-{self._n}-{id(self)}".encode()).hexdigest()

    def _fault(self, path: str) -> int | None:
        with self.lock:
            for f in self._faults:
                if f[0] > 0 and f[2] in path:
                    f[0] -= 1
                    return int(f[1])
        return None


_TYPES = {"datasets": "dataset", "spaces": "space", "models": "model"}
PAGE = 50  # discussions per page of the list


def _revision(parts: list[str]) -> tuple[str, list[str]]:
    """A revision at the head of a path's segments (a pull request's ref is three), and the
    rest."""
    if parts[:2] == ["refs", "pr"] and len(parts) >= 3:
        return "/".join(parts[:3]), parts[3:]
    return parts[0], parts[1:]


def _now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class _Handler(BaseHTTPRequestHandler):
    state: FakeHub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        # headers and body go out in two writes: without this, delayed ACKs add 40 ms a call
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # ---- plumbing
    def _send(
        self,
        status: int,
        body: Any = None,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> None:
        data = raw if raw is not None else json.dumps(body if body is not None else {}).encode()
        with self.state.lock:  # before answering: a client may act on the answer at once
            self.state.requests.append((self.command, urlparse(self.path).path, status))
        self.send_response(status)
        ctype = "application/octet-stream" if raw is not None else "application/json"
        self.send_header("Content-Type", ctype)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _error(self, status: int, message: str, code: str | None = None, **hdr: str) -> None:
        headers = {"X-Error-Message": message, **hdr}
        if code:
            headers["X-Error-Code"] = code
        self._send(status, {"error": message}, headers)

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _role(self) -> str | None | bool:
        """None: anonymous; False: an unknown token; else the token's role."""
        auth = self.headers.get("Authorization") or ""
        if not auth:
            return None
        self.state.auth_headers.append(auth)
        token = auth.removeprefix("Bearer ").strip()
        return self.state.tokens.get(token, False)

    def _user(self) -> str | None:
        """The signed-in user's name (None: anonymous or an unknown token)."""
        auth = self.headers.get("Authorization") or ""
        token = auth.removeprefix("Bearer ").strip()
        return self.state.user_of(token) if token in self.state.tokens else None

    def _query(self, name: str) -> str | None:
        values = parse_qs(urlparse(self.path).query).get(name)
        return values[0] if values else None

    def _guard(self, write: bool) -> bool:
        role = self._role()
        if role is False:
            self._error(401, "Invalid credentials in Authorization header")
            return False
        if write and role is None:
            self._error(401, "You must be authenticated to write")
            return False
        if write and role != "write":
            self._error(403, "You don't have the rights to write to this repository")
            return False
        return True

    def _route(self) -> None:
        if self.state.delay:
            import time

            time.sleep(self.state.delay)
        path = unquote(urlparse(self.path).path)
        fault = self.state._fault(path)
        if fault is not None:
            self._body()
            self._error(fault, f"injected {fault}")
            return
        parts = [p for p in path.split("/") if p]
        try:
            if parts[:2] == ["api", "whoami-v2"]:
                return self._whoami()
            if parts[:3] == ["api", "repos", "create"]:
                return self._create()
            if parts[:2] == ["api", "validate-yaml"]:
                self._body()
                return self._send(200, {})
            if len(parts) >= 5 and parts[0] == "api" and parts[1] in _TYPES:
                repo = self._repo(_TYPES[parts[1]], f"{parts[2]}/{parts[3]}")
                if repo is None:
                    return
                op, rest = parts[4], parts[5:]
                if op == "revision":
                    return self._info(repo, "/".join(rest) or "main")
                if op == "tree":
                    rev, rest = _revision(rest)
                    return self._tree(repo, rev, "/".join(rest))
                if op == "preupload":
                    return self._preupload(repo)
                if op == "commit":
                    return self._commit(repo)
                if op == "discussions":
                    return self._discussions(repo, rest)
                if op in ("secrets", "variables"):
                    return self._kv(repo, op)
            if parts[:1] == ["lfs-upload"] and len(parts) == 2:
                return self._lfs_put(parts[1])
            if parts[-4:] == ["info", "lfs", "objects", "batch"]:
                head = parts[:-4]
                rtype = _TYPES.get(head[0], "model")
                name = "/".join(head[1:] if head[0] in _TYPES else head).removesuffix(".git")
                repo = self._repo(rtype, name)
                if repo is None:
                    return
                return self._lfs_batch()
            if len(parts) >= 5 and parts[0] in _TYPES and parts[3] == "resolve":
                repo = self._repo(_TYPES[parts[0]], f"{parts[1]}/{parts[2]}")
                if repo is None:
                    return
                rev, rest = _revision(parts[4:])
                return self._resolve(repo, rev, "/".join(rest))
            self._error(404, f"no route {path}")
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = _route

    # ---- endpoints
    def _whoami(self) -> None:
        role = self._role()
        if not role:
            return self._error(401, "Invalid user token")
        self._send(
            200,
            {
                "type": "user",
                "name": self._user() or "tester",
                "auth": {"type": "access_token", "accessToken": {"role": role}},
            },
        )

    def _create(self) -> None:
        body = json.loads(self._body() or b"{}")
        if not self._guard(write=True):
            return
        org = body.get("organization") or "tester"
        repo_id = f"{org}/{body['name']}"
        rtype = body.get("type") or "model"
        url = f"{self.state.url}/{'' if rtype == 'model' else rtype + 's/'}{repo_id}"
        if (rtype, repo_id) in self.state.repos:
            msg = "You already created this repo"
            return self._send(409, {"error": msg, "url": url}, {"X-Error-Message": msg})
        self.state.create(repo_id, rtype, bool(body.get("private")))
        self._send(200, {"url": url, "name": repo_id})

    def _repo(self, rtype: str, repo_id: str) -> FakeRepo | None:
        role = self._role()
        if role is False:
            self._body()
            self._error(401, "Invalid credentials in Authorization header")
            return None
        repo = self.state.repos.get((rtype, repo_id))
        if repo is None or (repo.private and not role):
            self._body()
            self._error(404, "Repository not found", "RepoNotFound")
            return None
        return repo

    def _info(self, repo: FakeRepo, rev: str) -> None:
        with self.state.lock:
            files = repo.files(rev)
            sha = repo.revision_sha(rev)
        if files is None:
            return self._error(404, "Invalid rev id", "RevisionNotFound")
        self._send(
            200,
            {
                "id": repo.repo_id,
                "_id": repo.repo_id,
                "sha": sha,
                "private": repo.private,
                "siblings": [{"rfilename": p} for p in sorted(files)],
                "tags": [],
                "downloads": 0,
                "likes": 0,
            },
        )

    def _tree(self, repo: FakeRepo, rev: str, prefix: str) -> None:
        query = parse_qs(urlparse(self.path).query)
        recursive = (query.get("recursive") or ["false"])[0].lower() == "true"
        with self.state.lock:
            files = repo.files(rev)
        if files is None:
            return self._error(404, "Invalid rev id", "RevisionNotFound")
        base = prefix.rstrip("/") + "/" if prefix else ""
        out: list[dict[str, Any]] = []
        dirs: set[str] = set()
        for p in sorted(files):
            if not p.startswith(base):
                continue
            rest = p[len(base) :]
            segs = rest.split("/")
            for i in range(1, len(segs)):
                d = base + "/".join(segs[:i])
                if (recursive or i == 1) and d not in dirs:
                    dirs.add(d)
                    out.append({"type": "directory", "oid": ZERO, "size": 0, "path": d})
            if recursive or len(segs) == 1:
                data = files[p]
                entry: dict[str, Any] = {
                    "type": "file",
                    "oid": oid_of(p, data),
                    "size": len(data),
                    "path": p,
                }
                if is_lfs(p):
                    entry["lfs"] = {
                        "oid": hashlib.sha256(data).hexdigest(),
                        "size": len(data),
                        "pointerSize": len(lfs_pointer(data)),
                    }
                out.append(entry)
        if prefix and not out:
            return self._error(404, f"{prefix} does not exist", "EntryNotFound")
        self._send(200, out)

    def _resolve(self, repo: FakeRepo, rev: str, path: str) -> None:
        with self.state.lock:
            files = repo.files(rev)
            sha = repo.revision_sha(rev)
        if files is None:
            return self._error(404, "Invalid rev id", "RevisionNotFound")
        if path not in files:
            return self._error(404, "Entry not found", "EntryNotFound", **{"X-Repo-Commit": sha})
        data = files[path]
        headers = {"X-Repo-Commit": sha, "ETag": f'"{oid_of(path, data)}"'}
        if is_lfs(path):
            headers["X-Linked-Etag"] = f'"{hashlib.sha256(data).hexdigest()}"'
            headers["X-Linked-Size"] = str(len(data))
        self._send(200, raw=data, headers=headers)

    def _preupload(self, repo: FakeRepo) -> None:
        body = json.loads(self._body() or b"{}")
        if not self._guard(write=self._query("create_pr") != "1"):
            return
        if self._query("create_pr") == "1" and self._user() is None:
            return self._error(401, "You must be authenticated to open a pull request")
        files = repo.files() or {}
        out = []
        for f in body.get("files", []):
            path = f["path"]
            lfs = is_lfs(path) and int(f.get("size") or 0) > 0
            old = files.get(path)
            oid = None
            if old is not None:  # what the client compares with its own, to skip no-ops
                oid = hashlib.sha256(old).hexdigest() if lfs else blob_oid(old)
            out.append(
                {
                    "path": path,
                    "uploadMode": "lfs" if lfs else "regular",
                    "shouldIgnore": False,
                    "oid": oid,
                }
            )
        self._send(200, {"files": out})

    def _commit(self, repo: FakeRepo) -> None:
        raw = self._body()
        create_pr = self._query("create_pr") == "1"
        if not self._guard(write=not create_pr):
            return
        if create_pr and self._user() is None:
            return self._error(401, "You must be authenticated to open a pull request")
        lines = [json.loads(line) for line in raw.splitlines() if line.strip()]
        header: dict[str, Any] = next((x["value"] for x in lines if x["key"] == "header"), {})
        if create_pr:
            return self._open_pr(repo, lines, header)
        err: tuple[int, str, str | None] | None = None
        with self.state.lock:
            parent = header.get("parentCommit")
            files = dict(repo.files() or {})
            if parent and parent != repo.head:
                err = (412, "A commit has happened since. Please refresh and try again.", None)
            for item in lines if err is None else []:
                key, value = item["key"], item.get("value") or {}
                if key == "file":
                    files[value["path"]] = base64.b64decode(value["content"])
                elif key == "deletedFile":
                    if value["path"] not in files:
                        err = (404, "A file with this name doesn't exist", "EntryNotFound")
                        break
                    del files[value["path"]]
                elif key == "deletedFolder":
                    pre = value["path"].rstrip("/") + "/"
                    for p in [p for p in files if p.startswith(pre)]:
                        del files[p]
                elif key == "lfsFile":
                    blob = self.state.lfs.get(value.get("oid", ""))
                    if blob is None:
                        err = (400, f"LFS object {value.get('oid')} was never uploaded", None)
                        break
                    files[value["path"]] = blob
            if err is None:
                sha = self.state._sha()
                repo.commits.append((sha, files, header.get("summary", "")))
        if err is not None:
            return self._error(err[0], err[1], err[2])
        self._send(
            200,
            {
                "commitUrl": f"{self.state.url}/{repo.repo_type}s/{repo.repo_id}/commit/{sha}",
                "commitOid": sha,
                "pullRequestUrl": None,
            },
        )

    def _open_pr(self, repo: FakeRepo, lines: list[Any], header: dict[str, Any]) -> None:
        """A commit with create_pr=1: pull request N on refs/pr/N, main untouched."""
        user = self._user() or "tester"
        with self.state.lock:
            parent = header.get("parentCommit")
            base = dict((repo.files(parent) if parent else repo.files()) or {})
            files = dict(base)
            for item in lines:
                key, value = item["key"], item.get("value") or {}
                if key == "file":
                    files[value["path"]] = base64.b64decode(value["content"])
                elif key == "deletedFile":
                    files.pop(value["path"], None)
                elif key == "lfsFile":
                    blob = self.state.lfs.get(value.get("oid", ""))
                    if blob is not None:
                        files[value["path"]] = blob
            num = len(repo.discussions) + 1
            sha = self.state._sha()
            now = _now()
            d = FakeDiscussion(num, header.get("summary", ""), user, True, now, base=base)
            d.commits.append((sha, files))
            if header.get("description"):
                d.events.append(_event("comment", user, _comment_data(header["description"])))
            d.events.append(
                _event("commit", user, {"subject": header.get("summary", ""), "oid": sha})
            )
            repo.discussions[num] = d
        prefix = "" if repo.repo_type == "model" else f"{repo.repo_type}s/"
        self._send(
            200,
            {
                "commitUrl": f"{self.state.url}/{prefix}{repo.repo_id}/commit/{sha}",
                "commitOid": sha,
                "pullRequestUrl": f"{self.state.url}/{prefix}{repo.repo_id}/discussions/{num}",
            },
        )

    def _discussions(self, repo: FakeRepo, rest: list[str]) -> None:
        body = json.loads(self._body() or b"{}") if self.command == "POST" else {}
        if not rest:
            return self._discussion_list(repo)
        if not rest[0].isdigit() or int(rest[0]) not in repo.discussions:
            return self._error(404, "Discussion not found")
        d = repo.discussions[int(rest[0])]
        if len(rest) == 1 and self.command == "GET":
            return self._send(200, self._details(repo, d))
        user = self._user()
        if user is None:
            return self._error(401, "You must be authenticated to take part in a discussion")
        if rest[1:] == ["comment"]:
            text = str(body.get("comment") or "")
            if not text.strip():
                return self._error(400, "A comment cannot be empty")
            with self.state.lock:
                event = _event("comment", user, _comment_data(text))
                d.events.append(event)
            return self._send(200, {"newMessage": event})
        if rest[1:] == ["status"]:
            role = self._role()
            if role != "write" and user != d.author:
                return self._error(403, "Only the author or a maintainer can change the status")
            status = body.get("status")
            if status not in ("open", "closed"):
                return self._error(400, f"invalid status {status!r}")
            with self.state.lock:
                if body.get("comment"):
                    d.events.append(_event("comment", user, _comment_data(body["comment"])))
                event = _event("status-change", user, {"status": status})
                d.events.append(event)
                d.status = status
            return self._send(200, {"newStatus": event})
        self._error(404, f"no route {'/'.join(rest)}")

    def _discussion_list(self, repo: FakeRepo) -> None:
        kind, status = self._query("type") or "all", self._query("status") or "all"
        author, page = self._query("author"), int(self._query("p") or 0)
        with self.state.lock:
            found = [
                d.summary(repo)
                for d in sorted(repo.discussions.values(), key=lambda d: -d.num)
                if (kind == "all" or (kind == "pull_request") == d.is_pr)
                and (status == "all" or d.status == status)
                and (author is None or d.author == author)
            ]
        start = page * PAGE
        self._send(
            200,
            {"discussions": found[start : start + PAGE], "count": len(found), "start": start},
        )

    def _details(self, repo: FakeRepo, d: FakeDiscussion) -> dict[str, Any]:
        with self.state.lock:
            out = d.summary(repo)
            out["events"] = list(d.events)
            if d.is_pr:
                out["changes"] = {"base": "refs/heads/main", "mergeCommitId": None}
                out["filesWithConflicts"] = []
                out["diff"] = "".join(
                    f"diff --git a/{p} b/{p}\n"
                    + ("new file mode 100644\n" if p not in d.base else "")
                    + ("deleted file mode 100644\n" if p not in d.files() else "")
                    for p in d.changed()
                )
        return out

    def _lfs_batch(self) -> None:
        body = json.loads(self._body() or b"{}")
        # any signed-in user may upload (a pull request's files); a commit to main needs write
        if not self._guard(write=False):
            return
        if self._user() is None:
            return self._error(401, "You must be authenticated to upload")
        objects = []
        for obj in body.get("objects", []):
            item: dict[str, Any] = {"oid": obj["oid"], "size": obj["size"]}
            if obj["oid"] not in self.state.lfs:
                item["actions"] = {"upload": {"href": f"{self.state.url}/lfs-upload/{obj['oid']}"}}
            objects.append(item)
        self._send(200, {"transfer": "basic", "objects": objects})

    def _lfs_put(self, oid: str) -> None:
        data = self._body()
        if hashlib.sha256(data).hexdigest() != oid:
            return self._error(400, "the uploaded bytes do not match their oid")
        with self.state.lock:
            self.state.lfs[oid] = data
        self._send(200, {})

    def _kv(self, repo: FakeRepo, what: str) -> None:
        body = json.loads(self._body() or b"{}")
        if not self._guard(write=True):
            return
        target = repo.secrets if what == "secrets" else repo.variables
        if self.command == "DELETE":
            target.pop(body.get("key", ""), None)
        else:
            target[body["key"]] = body.get("value", "")
        self._send(200, {})


def _comment_data(text: str) -> dict[str, Any]:
    return {"edited": False, "hidden": False, "latest": {"raw": text, "html": text}}


def _event(kind: str, user: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": hashlib.sha1(f"{kind}-{user}-{_now()}-{data}".encode()).hexdigest()[:24],
        "type": kind,
        "createdAt": _now(),
        "author": {"name": user},
        "data": data,
    }
