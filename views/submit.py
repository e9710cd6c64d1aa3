"""Submit: upload a prediction file, see it scored with CIs at once, or every problem with it."""

import streamlit as st

from evaluator.core.errors import FactBoardError
from evaluator.submissions import service as submit
from evaluator.submissions import validation as submissions
from explorer import ui

KIND_LABELS = {
    "non-llm": "Non-LLM detector",
    "open-llm": "Open-weights LLM",
    "proprietary-llm": "Proprietary LLM",
}
POLICY_LABELS = {
    "auto": "auto: labels if given, else tune on dev",
    "labels": "labels: use the file's labels",
    "dev": "dev: threshold maximising BAcc on dev",
    "per-domain-dev": "per-domain-dev: one threshold per domain",
    "fixed": "fixed: the threshold below",
}
LAST = "submit.last"
MOD_DONE = "submit.mod_done"

ui.header(
    "📤 Submit predictions",
    "Upload a prediction file: it is checked at once, scored with 95% bootstrap CIs, and added "
    "to the board as a submitted run. Nothing is stored unless the whole file is valid.",
)

names = submit.benchmark_choices()
if not names:
    ui.no_data(
        "No benchmark is ingested yet, so there is nothing to score against. Run "
        "`python -m evaluator demo` or `python -m evaluator ingest NAME --from PATH`."
    )
    st.stop()


def _title(b: str) -> str:
    spec = ui.spec_of(b)
    return spec.title if spec else b


top = st.columns([2, 1, 1])
bench = top[0].selectbox(
    "Benchmark",
    names,
    index=names.index(ui.sticky_benchmark(names, names[0]) or names[0]),
    format_func=_title,
    key="submit.benchmark",
)
ui.remember_benchmark(bench)
spec = ui.spec_of(bench)
splits = list(spec.splits) if spec else ["test"]
split = top[1].selectbox(
    "Split scored",
    splits,
    index=splits.index("test") if "test" in splits else 0,
    key="submit.split",
    help="Rows of other splits may be included: dev rows let FactBoard tune a threshold on scores.",
)
try:
    template = submit.template_csv(bench, split)
except FactBoardError as e:
    template = ""
    st.error(ui.md_escape(e))
top[2].download_button(
    "⬇️ Template (CSV)",
    template,
    f"factboard-{bench}-{split}-template.csv",
    "text/csv",
    on_click="ignore",
    disabled=not template,
    help="The sample ids to predict, with empty label, score and explanation columns.",
)
if spec is not None and spec.synthetic:
    st.info("The demo benchmark is synthetic: use it to try the format, not to rank models.")
with st.expander("File format and limits"):
    st.markdown(submit.FORMAT_HELP)

with st.form("submit.form"):
    a, b = st.columns(2)
    model_name = a.text_input("Model name *", max_chars=200, key="submit.name")
    kind = b.selectbox(
        "Kind",
        list(submissions.SUBMITTABLE_KINDS),
        format_func=KIND_LABELS.get,
        key="submit.kind",
    )
    c, d, e = st.columns([2, 1, 2])
    org = c.text_input("Organisation", max_chars=200, key="submit.org")
    params = d.text_input("Parameters", placeholder="e.g. 7B", max_chars=40, key="submit.params")
    url = e.text_input("URL (paper or code)", max_chars=400, key="submit.url")
    description = st.text_area("Short description", max_chars=1200, key="submit.description")
    email = st.text_input(
        "Contact email",
        max_chars=300,
        key="submit.email",
        help="Kept with the submission so that the maintainers can reach you. Never shown on "
        "the board and never exported.",
    )
    f, g = st.columns([2, 1])
    policy = f.selectbox(
        "How scores become labels",
        list(POLICY_LABELS),
        format_func=POLICY_LABELS.get,
        key="submit.policy",
    )
    threshold = g.number_input(
        "Threshold (fixed)", value=0.5, format="%.6g", key="submit.threshold"
    )
    upload = st.file_uploader(
        "Prediction file (CSV or JSON Lines)",
        max_upload_size=submissions.MAX_MB,
        key="submit.file",
    )
    go = st.form_submit_button("Submit", type="primary")

if go:
    if upload is None:
        st.session_state.pop(LAST, None)
        st.error("Choose a prediction file to upload.")
    else:
        meta = submit.SubmissionMeta(
            benchmark=bench,
            model_name=model_name,
            kind=kind,
            org=org or None,
            params=params or None,
            url=url or None,
            description=description or None,
            email=email or None,
            split=split,
            threshold_policy=policy,
            threshold=float(threshold) if policy == "fixed" else None,
        )
        with st.spinner("Checking and scoring…"):
            st.session_state[LAST] = submit.submit(upload.getvalue(), upload.name, meta)

res = st.session_state.get(LAST)
if res is not None:
    if res.ok and res.record is not None:
        rec = res.record
        st.success(f"Scored and added to the board as run `{rec.run_id}`.", icon="✅")
        st.text(f"Model: {rec.model.name}  ·  {rec.benchmark}  ·  split {', '.join(rec.splits)}")
        st.text(f"Threshold: {submit.threshold_text(rec)}")
        c = rec.counts
        st.text(
            f"Samples: {c.n}  ·  predicted {c.predicted}  ·  missing {c.missing}  ·  "
            f"unusable {c.unparsable}"
        )
        number = st.column_config.NumberColumn(format="%.4f")
        cols = {"value": number, "ci_low": number, "ci_high": number}
        st.dataframe(
            submit.results_frame(rec), hide_index=True, width="stretch", column_config=cols
        )
        with st.expander("Every slice"):
            st.dataframe(
                submit.results_frame(rec, overall_only=False),
                hide_index=True,
                width="stretch",
                column_config=cols,
            )
        for w in res.warnings:
            st.info(ui.md_escape(w), icon="ℹ️")
    elif res.status == "rejected":
        st.error(
            f"{len(res.problems)} problem(s) with submission {res.submission_id}: nothing was "
            "added to the board. Fix them all and upload again.",
            icon="🚫",
        )
        st.code("\n".join(res.problems), language=None, wrap_lines=True)
    else:
        for w in res.warnings:
            st.warning(ui.md_escape(w), icon="⏳")

# maintainers --------------------------------------------------------------------------------
st.divider()
with st.expander("Maintainers: moderate submitted runs"):
    if not submit.moderation_enabled():
        st.caption("Moderation is off: set FACTBOARD_ADMIN_TOKEN where the app runs to enable it.")
    else:
        token = st.text_input("Maintainer token", type="password", key="submit.admin_token")
        ok = False
        if token:
            try:
                submit.check_admin_token(token)
                ok = True
            except submit.ModerationError as e:
                st.error(ui.md_escape(e))
        if ok:
            if MOD_DONE in st.session_state:
                st.success(st.session_state.pop(MOD_DONE), icon="✅")
            subs = submit.submitted_runs()
            if not subs:
                st.caption("No submitted run.")
            else:
                st.dataframe(
                    [
                        {
                            "run_id": r.run_id,
                            "model": r.model.name,
                            "benchmark": r.benchmark,
                            "created": r.created_at,
                            "hidden": r.hidden,
                        }
                        for r in subs
                    ],
                    hide_index=True,
                    width="stretch",
                )
                m1, m2 = st.columns([3, 2])
                pick = m1.selectbox("Run", [r.run_id for r in subs], key="submit.mod_run")
                action = m2.radio(
                    "Action", ["hide", "show", "delete"], horizontal=True, key="submit.mod_action"
                )
                sure = action != "delete" or st.checkbox(
                    "Delete this run and its files for good", key="submit.mod_sure"
                )
                if st.button("Apply", disabled=not sure, key="submit.mod_apply"):
                    try:
                        changed = submit.moderate(action, pick, token)
                    except FactBoardError as e:
                        st.error(ui.md_escape(e))
                    else:
                        st.session_state[MOD_DONE] = f"{action}: {', '.join(changed)}"
                        st.rerun()
