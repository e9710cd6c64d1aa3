"""`python -m explorer.serve [streamlit run options]`: the app's server, as the container starts it
(scripts/space_entrypoint.sh), with the modules its pages import loaded before its first visitor.

`streamlit run app.py` imports what a page uses (pandas, DuckDB, Arrow, Altair, the read side,
the engine's records, the Hub's sync) on the first script run, while the first visitor of a
freshly started Space waits: seconds on a small machine. This imports them first, then runs
streamlit's own command line (`streamlit run app.py ...`) in this same process, where the first
script run finds them loaded.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app.py"

# what app.py and the pages import (the first page is any of them: a shared link)
PRELOAD = (
    "altair",
    "evaluator.hub.background",
    "evaluator.hub.sync",
    "explorer.ui",
    "explorer.widgets",
    "explorer.sections",
    "explorer.board_sections",
    "explorer.leaderboard",
    "explorer.charts",
    "explorer.home",
    "explorer.across",
    "explorer.samples",
)


def main(argv: list[str] | None = None) -> int:
    for name in PRELOAD:
        importlib.import_module(name)
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    return int(cli.main() or 0)


if __name__ == "__main__":
    sys.exit(main())
