"""Queue: the jobs the worker runs (judge grading, detector runs), with progress and messages."""

import streamlit as st

from evaluator.jobs import queue
from explorer import jobs as J
from explorer import ui

ui.header(
    "⏳ Queue",
    "Jobs waiting for the worker, running, done and failed, with their progress and messages. "
    "The worker runs as its own process: `python -m evaluator worker`.",
)

counts = queue.counts()
cols = st.columns(5)
for col, state in zip(cols, queue.STATES, strict=False):
    col.metric(state.capitalize(), counts[state])
if cols[4].button("🔄 Refresh", key="queue.refresh"):
    st.rerun()

status = st.radio("Show", ["all", *queue.STATES], horizontal=True, key="queue.status")
jobs = queue.list_jobs(None if status == "all" else status)
jobs.reverse()  # newest first
if not jobs:
    ui.no_data(
        "No job here. Jobs are queued when a submission with explanations arrives and a judge is "
        "configured (FACTBOARD_JUDGE), or by the evaluator; `python -m evaluator worker` runs them."
    )
    st.stop()

st.dataframe(
    J.job_rows(jobs),
    hide_index=True,
    width="stretch",
    column_config={
        "progress": st.column_config.ProgressColumn("progress", min_value=0.0, max_value=1.0),
        "message": st.column_config.TextColumn("last message", width="large"),
    },
)

pick = st.selectbox("Job details", [j.id for j in jobs], key="queue.pick")
job = next(j for j in jobs if j.id == pick)
left, right = st.columns([3, 2])
with left:
    st.text(f"{job.kind} · {job.status} · attempt {job.attempts} of {job.max_attempts}")
    if job.error:
        st.text(f"Error: {job.error}")
    st.dataframe(
        J.message_rows(job),
        hide_index=True,
        width="stretch",
    )
with right:
    st.caption("Payload")
    st.json(job.payload)
    if job.result:
        st.caption("Result")
        st.json(job.result)
