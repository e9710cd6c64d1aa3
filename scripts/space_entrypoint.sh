#!/usr/bin/env bash
# The container's entry point (Dockerfile CMD); runs as is on any machine with the requirements.
#
# 1. With $FACTBOARD_HUB_REPO: pull the results repo into the local data root (bounded by
#    $FACTBOARD_HUB_BOOT_TIMEOUT seconds, default 120). When the Hub cannot be reached the app
#    still starts, on whatever the local copy has (or the demo), shows a notice and keeps
#    retrying in the background (evaluator/hub/background.py).
# 2. Without a results repo, or when the first pull left no benchmark: build the demo.
# 3. With FACTBOARD_LOCAL_WORKER=1: a worker in the background (--hub when a repo is set).
# 4. The app: streamlit on 0.0.0.0:$PORT (default 8501; the Dockerfile's healthcheck asks
#    the same port). The published numbers that ship in leaderboard_data/reported/ are on
#    the board whatever $FACTBOARD_DATA is (evaluator/store/layout.py, reported_files).
set -uo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
PORT="${PORT:-8501}"

if [ -n "${FACTBOARD_HUB_REPO:-}" ]; then
  if ! timeout "${FACTBOARD_HUB_BOOT_TIMEOUT:-120}" "$PY" -m evaluator hub pull; then
    echo "entrypoint: the first pull from ${FACTBOARD_HUB_REPO} failed; starting on the local copy" >&2
  fi
fi
if ! "$PY" -c 'from evaluator.store import ingested, runs; import sys; sys.exit(0 if ingested.names() or runs.list_runs().runs else 1)'; then
  "$PY" -m evaluator demo >/dev/null || echo "entrypoint: the demo could not be built" >&2
fi

if [ "${FACTBOARD_LOCAL_WORKER:-0}" = "1" ]; then
  if [ -n "${FACTBOARD_HUB_REPO:-}" ]; then
    "$PY" -m evaluator worker --hub &
  else
    "$PY" -m evaluator worker &
  fi
fi

exec "$PY" -m streamlit run app.py \
  --server.port "$PORT" \
  --server.address "${FACTBOARD_ADDRESS:-0.0.0.0}" \
  --server.headless true \
  --browser.gatherUsageStats false
