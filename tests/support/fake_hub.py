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
class FakeRepo:
    repo_id: str
    repo_type: str
    commits: list[tuple[str, dict[str, bytes], str]] = field(default_factory=list)
    secrets: dict[str, str] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)
    private: bool = False

    @property
    def head(self) -> str:
        return self.commits[-1][0]

    def files(self, rev: str = "main") -> dict[str, bytes] | None:
        if rev in ("main", self.head):
            return self.commits[-1][1]
        for sha, files, _ in self.commits:
            if sha == rev:
                return files
        return None


class FakeHub:
    """The server's state and its controls; `start()` binds 127.0.0.1 on a free port."""

    def __init__(self, tokens: dict[str, str] | None = None):
        # token -> "write" | "read"
        self.tokens = dict(tokens or {})
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
                    return self._tree(repo, rest[0], "/".join(rest[1:]))
                if op == "preupload":
                    return self._preupload(repo)
                if op == "commit":
                    return self._commit(repo)
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
                return self._resolve(repo, parts[4], "/".join(parts[5:]))
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
                "name": "tester",
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
            sha = repo.head if rev == "main" else rev
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
            head = repo.head
        if files is None:
            return self._error(404, "Invalid rev id", "RevisionNotFound")
        sha = head if rev == "main" else rev
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
        if not self._guard(write=True):
            return
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
        if not self._guard(write=True):
            return
        lines = [json.loads(line) for line in raw.splitlines() if line.strip()]
        header = next((x["value"] for x in lines if x["key"] == "header"), {})
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

    def _lfs_batch(self) -> None:
        body = json.loads(self._body() or b"{}")
        if not self._guard(write=True):
            return
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
