#!/usr/bin/env bash
# The container's entry point (Dockerfile CMD); runs as is on any machine with the requirements.
#
# 1. scripts/space_prepare.sh: the results repo pulled (with $FACTBOARD_HUB_REPO), the demo
#    built when there is nothing else to show, the board's store read once so that the first
#    page is as quick as any other.
# 2. With FACTBOARD_LOCAL_WORKER=1: a worker in the background (--hub when a repo is set).
# 3. The app: streamlit on 0.0.0.0:$PORT (default 8501; the Dockerfile's healthcheck asks
#    the same port). The published numbers that ship in leaderboard_data/reported/ are on
#    the board whatever $FACTBOARD_DATA is (evaluator/store/layout.py, reported_files).
set -uo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
PORT="${PORT:-8501}"

bash scripts/space_prepare.sh

if [ "${FACTBOARD_LOCAL_WORKER:-0}" = "1" ]; then
  if [ -n "${FACTBOARD_HUB_REPO:-}" ]; then
    "$PY" -m evaluator worker --hub &
  else
    "$PY" -m evaluator worker &
  fi
fi

exec "$PY" -m explorer.serve \
  --server.port "$PORT" \
  --server.address "${FACTBOARD_ADDRESS:-0.0.0.0}" \
  --server.headless true \
  --browser.gatherUsageStats false
