"""The server's launcher (explorer/serve.py): the pages' modules loaded before streamlit's own
command line runs `app.py` in the same process, with the options given."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_launcher_loads_the_pages_modules_then_runs_streamlit_on_the_app() -> None:
    probe = (
        "import sys\n"
        "from streamlit.web import cli\n"
        "from explorer import serve\n"
        "def fake(*a, **k):\n"
        "    print(sys.argv[1:] == ['run', str(serve.APP), '--server.port', '9'])\n"
        "    print(all(m in sys.modules for m in serve.PRELOAD))\n"
        "    print('explorer.ui' in sys.modules and 'evaluator.hub.sync' in sys.modules)\n"
        "    return 0\n"
        "cli.main = fake\n"
        "sys.exit(serve.main(['--server.port', '9']))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "True"], out.stdout + out.stderr
    assert (REPO / "app.py").samefile(
        subprocess.run(
            [sys.executable, "-c", "from explorer import serve; print(serve.APP)"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout.strip()
    )
