#!/usr/bin/env bash
# Install everything the tests need, then lint, type-check and run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1 HF_HUB_OFFLINE=1
python3 -m pip install --quiet -r requirements-dev.txt
# Real-browser tests drive Debian's Chromium (Playwright cannot download a browser here).
if [ ! -x /usr/bin/chromium ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium >/dev/null
fi
# The LaTeX export is compiled with pdflatex and booktabs (TeX Live's LaTeX base and recommended
# packages without their recommends: about 150 MB installed).
if ! command -v pdflatex >/dev/null || ! kpsewhich booktabs.sty >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends texlive-latex-base \
    texlive-latex-recommended >/dev/null
fi
python3 -m ruff check .
python3 -m ruff format --check .
python3 -m mypy
python3 -m pytest -n 2 -q -p no:cacheprovider "$@"
