#!/usr/bin/env bash
# The container's start-up before its server (scripts/space_entrypoint.sh runs it first); runs
# as is on any machine with the requirements.
#
# 1. With $FACTBOARD_HUB_REPO: pull the results repo into the local data root, its runs checked
#    and kept in packs that the board reads in place and that the app writes as run folders in
#    the background (bounded by $FACTBOARD_HUB_BOOT_TIMEOUT seconds, default 120). When the Hub
#    cannot be reached the app still starts, on whatever the local copy has (or the demo),
#    shows a notice and keeps retrying in the background (evaluator/hub/background.py).
# 2. The board's store read once and its snapshot written (explorer/warm.py, bounded by
#    $FACTBOARD_WARM_TIMEOUT seconds, default 300), so the server's first page reads one file
#    instead of every run; without a results repo, or when the first pull left no benchmark and
#    no run, the built-in demo is built first. The store is a cache: when it fails, the first
#    page reads the runs itself.
set -uo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"

if [ -n "${FACTBOARD_HUB_REPO:-}" ]; then
  if ! timeout "${FACTBOARD_HUB_BOOT_TIMEOUT:-120}" "$PY" -m evaluator hub pull --packed; then
    echo "entrypoint: the first pull from ${FACTBOARD_HUB_REPO} failed; starting on the local copy" >&2
  fi
fi
if ! timeout "${FACTBOARD_WARM_TIMEOUT:-300}" "$PY" -m explorer.warm --demo-when-empty; then
  echo "entrypoint: the board's store could not be prepared (or the demo built)" >&2
fi
exit 0
