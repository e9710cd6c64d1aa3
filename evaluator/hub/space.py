"""`python -m evaluator space deploy --space OWNER/NAME`: create or update the FactBoard Space.

The Space is a Docker Space (Hugging Face's Streamlit template is Docker with app_port 8501).
What is uploaded: the app and the engine (app.py, views/, explorer/, evaluator/), the published
numbers (leaderboard_data/reported/), the demo's source (leaderboard_data/demo/),
requirements.txt, pyproject.toml, the Dockerfile, .dockerignore, the start-up scripts
(scripts/space_entrypoint.sh, scripts/space_prepare.sh),
and space/README.md as the Space's README.md (its front matter is the Space's configuration).
With --results the Space variable FACTBOARD_HUB_REPO is set; with --set-token the current
$HF_TOKEN becomes the Space secret HF_TOKEN (it is sent to the Hub's secrets endpoint only:
never printed or written). See docs/ARCHITECTURE.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from evaluator.hub.client import HubClient, HubError, config_from_env
from evaluator.store import layout

FILES = (
    "app.py",
    "requirements.txt",
    "pyproject.toml",
    "Dockerfile",
    ".dockerignore",
    "scripts/space_entrypoint.sh",
    "scripts/space_prepare.sh",
)
FOLDERS = (
    "views",
    "explorer",
    "evaluator",
    "leaderboard_data/reported",
    "leaderboard_data/demo",  # the demo's source release: the board when the Hub is down
    ".streamlit",
)
SPACE_README = "space/README.md"


def space_files(repo_root: Path | None = None) -> dict[str, Path]:
    """path in the Space -> local file."""
    root = repo_root or layout.REPO_ROOT
    out: dict[str, Path] = {}
    for f in FILES:
        if (root / f).is_file():
            out[f] = root / f
    for d in FOLDERS:
        base = root / d
        if not base.is_dir():
            continue
        for p in sorted(base.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc",):
                out[p.relative_to(root).as_posix()] = p
    readme = root / SPACE_README
    if not readme.is_file():
        raise HubError(f"{readme} is missing: it carries the Space's configuration")
    out["README.md"] = readme
    return out


def deploy(
    space: str,
    results: str | None = None,
    set_token: bool = False,
    private: bool = False,
    repo_root: Path | None = None,
) -> Iterator[str]:
    cfg = config_from_env(space)
    assert cfg is not None
    if not cfg.token:
        raise HubError("deploying a Space needs a write token in HF_TOKEN")
    client = HubClient(cfg)
    api = client.api
    files = space_files(repo_root)
    client._retrying(
        "create the Space",
        lambda: api.create_repo(
            space, repo_type="space", space_sdk="docker", exist_ok=True, private=private
        ),
    )
    yield f"Space {space}: ready (Docker SDK)"
    from huggingface_hub import CommitOperationAdd

    ops = [CommitOperationAdd(path_in_repo=k, path_or_fileobj=str(v)) for k, v in files.items()]
    info = client._retrying(
        "upload the Space's files",
        lambda: api.create_commit(space, ops, commit_message="Deploy FactBoard", repo_type="space"),
    )
    yield f"uploaded {len(files)} files (commit {str(info.oid)[:10]})"
    if results:
        client._retrying(
            "set FACTBOARD_HUB_REPO",
            lambda: api.add_space_variable(space, "FACTBOARD_HUB_REPO", results),
        )
        yield f"variable FACTBOARD_HUB_REPO = {results}"
    if set_token:
        client._retrying(
            "set the HF_TOKEN secret",
            lambda: api.add_space_secret(space, "HF_TOKEN", cfg.token or ""),
        )
        yield "secret HF_TOKEN set from the current HF_TOKEN"
    else:
        yield "add the secret HF_TOKEN (a write token for the results repo) in the Space settings"
    yield f"{cfg.endpoint}/spaces/{space}"
