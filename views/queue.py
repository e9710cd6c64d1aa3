"""Queue: the jobs the worker runs (judge grading, detector runs, reproductions), with progress
and messages; for maintainers (behind FACTBOARD_ADMIN_TOKEN, like moderation) a requeue or
cancel action on a failed or pending job, the approval of a submitted run's reproduction from
its recipe (evaluator.jobs.reproduce_run), and the problems panel: every corrupt file of the
store (evaluator.store.doctor, the same list as `python -m evaluator doctor`)."""

import streamlit as st

from evaluator.core.errors import FactBoardError
from evaluator.core.formatting import plural
from evaluator.jobs import queue, reproduce_run
from evaluator.store import doctor
from evaluator.submissions import moderation, verification
from explorer import queue as J
from explorer import ui

DONE = "queue.admin_done"

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

admin_token: str | None = None
if moderation.moderation_enabled():
    with st.expander("🛠 Maintainers: requeue or cancel jobs, approve reproductions, corrupt files"):
        typed = st.text_input("Maintainer token", type="password", key="queue.admin_token")
        if typed:
            try:
                moderation.check_admin_token(typed)
            except moderation.ModerationError as e:
                st.error(ui.md_escape(e))
            else:
                admin_token = typed
        if admin_token:
            problems = doctor.find_problems()
            if problems:
                st.warning(
                    f"{plural(len(problems), 'corrupt file')} in the store: left out of the "
                    "board and the queue until removed or restored.",
                    icon="🩺",
                )
                st.dataframe(J.problem_rows(problems), hide_index=True, width="stretch")
            else:
                st.success("No corrupt file in the store.", icon="🩺")
            awaiting = verification.awaiting()
            st.markdown("**Submitted runs with a recipe, not reproduced yet**")
            if not awaiting:
                st.caption("None: every submitted recipe has been re-run.")
            else:
                st.dataframe(J.reproduction_rows(awaiting), hide_index=True, width="stretch")
                chosen = st.selectbox(
                    "Run to reproduce", [r.run_id for r in awaiting], key="queue.reproduce_run"
                )
                if st.button("▶️ Approve its reproduction", key="queue.approve"):
                    try:
                        job = reproduce_run.approve(chosen, admin_token)
                    except FactBoardError as e:
                        st.error(ui.md_escape(e))
                    else:
                        st.session_state[DONE] = (
                            f"reproduction of {chosen} queued: job {job.id} is {job.status}"
                        )
                        st.rerun()
if DONE in st.session_state:
    st.success(ui.md_escape(st.session_state.pop(DONE)), icon="✅")

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
    if admin_token and job.status in J.ACTIONABLE:
        b1, b2 = st.columns(2)
        action = None
        if job.status == "failed" and b1.button("↩️ Requeue", key="queue.requeue"):
            action = "requeue"
        if b2.button("✖️ Cancel", key="queue.cancel"):
            action = "cancel"
        if action:
            try:
                moderation.check_admin_token(admin_token)
                changed = (queue.requeue if action == "requeue" else queue.cancel)(job.id)
            except FactBoardError as e:
                st.error(ui.md_escape(e))
            else:
                st.session_state[DONE] = f"{action}: {changed.id} is {changed.status}"
                st.rerun()
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
