"""Submit: upload a prediction file, see it scored with CIs at once, or every problem with it."""

import streamlit as st

from evaluator.core.errors import FactBoardError
from evaluator.core.vocabulary import kind_label
from evaluator.submissions import recipes
from evaluator.submissions import service as submit
from evaluator.submissions import validation as submissions
from explorer import sections, ui, widgets
from explorer import submit as S

LAST = "submit.last"

ui.header(
    "📤 Submit predictions",
    "Upload a prediction file: it is checked at once, scored with 95% bootstrap CIs, and added "
    "to the board as a submitted run. Nothing is stored unless the whole file is valid.",
)

names = submit.benchmark_choices()
if not names:
    ui.no_data(
        "No benchmark's samples are on this board yet, so there is nothing to score a file "
        "against. The maintainers add benchmarks (README, 'Ingest')."
    )
    st.stop()


top = st.columns([2, 1, 1])
bench = widgets.benchmark_picker(names, "submit", container=top[0], in_url=False)
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
    template = S.template_csv(bench, splits, split)
except FactBoardError as e:
    template = ""
    st.error(ui.md_escape(e))
top[2].download_button(
    "⬇️ Template (CSV)",
    template,
    f"factboard-{bench}-{'-'.join(S.template_splits(splits, split))}-template.csv",
    "text/csv",
    on_click="ignore",
    disabled=not template,
    help="The sample ids to predict (dev ids first, where the benchmark has a dev split: a "
    "scores-only detector needs dev scores for its threshold), with empty label, score and "
    "explanation columns.",
)
fixed = spec.fixed_threshold if spec else None
st.markdown(S.how_to_text(splits, fixed))
if spec is not None and spec.synthetic:
    st.info("The demo benchmark is synthetic: use it to try the format, not to rank models.")
with st.expander("File format and limits"):
    st.markdown(submissions.FORMAT_HELP)

with st.form("submit.form"):
    who = st.columns(2)
    model_name = who[0].text_input("Model name *", max_chars=200, key="submit.name")
    kind = who[1].selectbox(
        "Kind",
        list(submissions.SUBMITTABLE_KINDS),
        format_func=kind_label,
        key="submit.kind",
    )
    about = st.columns([2, 1, 2])
    org = about[0].text_input("Organisation", max_chars=200, key="submit.org")
    params = about[1].text_input(
        "Parameters", placeholder="e.g. 7B", max_chars=40, key="submit.params"
    )
    url = about[2].text_input("URL (paper or code)", max_chars=400, key="submit.url")
    description = st.text_area("Short description", max_chars=1200, key="submit.description")
    email = st.text_input(
        "Contact email",
        max_chars=300,
        key="submit.email",
        help="Kept with the submission so that the maintainers can reach you. Never shown on "
        "the board and never exported.",
    )
    how = st.columns([2, 1])
    policy = how[0].selectbox(
        "How scores become labels",
        ["auto", "labels", "dev", "per-domain-dev", "fixed"],
        format_func=lambda p: S.policy_label(p, fixed),
        key="submit.policy",
        help="A file with only scores needs a cut-off: a score at or above it counts as "
        "consistent. Automatic picks the one that works best on the file's dev rows.",
    )
    threshold = how[1].number_input(
        "Threshold (fixed)", value=0.5, format="%.6g", key="submit.threshold"
    )
    st.markdown(
        "**How the predictions were made** (optional): with a recipe, FactBoard can re-run "
        "them and mark the run *reproduced*; without one it is *self-reported*."
    )
    rk = st.columns([1, 2, 2, 1])
    recipe_kind = rk[0].selectbox(
        "Recipe",
        ["none", *recipes.KINDS],
        format_func=lambda k: "no recipe" if k == "none" else recipes.KIND_WORDS[k],
        key="submit.recipe_kind",
    )
    r_detector = rk[1].text_input(
        "Detector (or the package's entry point)",
        max_chars=100,
        key="submit.recipe_detector",
        placeholder="e.g. summac-zs",
    )
    r_checkpoint = rk[2].text_input(
        "Checkpoint (a public Hub model id)", max_chars=200, key="submit.recipe_checkpoint"
    )
    r_revision = rk[3].text_input(
        "Revision", max_chars=100, key="submit.recipe_revision", help="a commit hash or tag"
    )
    rl = st.columns([2, 2, 1, 2, 1])
    r_llm = rl[0].text_input(
        "LLM (provider:model)", max_chars=200, key="submit.recipe_llm", placeholder="openai:gpt-4o"
    )
    r_prompt = rl[1].text_input("Prompt id", max_chars=100, key="submit.recipe_prompt")
    r_temperature = rl[2].number_input(
        "Temperature", value=0.0, min_value=0.0, max_value=2.0, key="submit.recipe_temperature"
    )
    r_package = rl[3].text_input("Package", max_chars=100, key="submit.recipe_package")
    r_version = rl[4].text_input("Version", max_chars=64, key="submit.recipe_version")
    r_options = st.text_area(
        "Detector options (KEY=VALUE, one a line)", max_chars=2000, key="submit.recipe_options"
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
            threshold_policy=policy or "auto",
            threshold=float(threshold) if policy == "fixed" else None,
            recipe=recipes.from_form(
                recipe_kind,
                {
                    "detector": r_detector,
                    "checkpoint": r_checkpoint,
                    "revision": r_revision,
                    "options": r_options,
                    "llm": r_llm,
                    "prompt": r_prompt,
                    "temperature": float(r_temperature),
                    "package": r_package,
                    "version": r_version,
                },
            ),
        )
        with st.spinner("Checking and scoring…"):
            data = upload.getvalue()
            try:
                res = submit.submit(data, upload.name, meta, submitter=ui.submitter_key())
            except submit.StorageError as e:  # a full disk: nothing was kept
                st.session_state.pop(LAST, None)
                st.error(f"Your file was not saved: {e}")
                st.stop()
            note = (
                S.wrong_benchmark_note(
                    data, upload.name, bench, res.problems, widgets.benchmark_title
                )
                if res.status == "rejected"
                else None
            )
            st.session_state[LAST] = (res, note)

last = st.session_state.get(LAST)
if last is not None:
    sections.submission_result(*last)

st.divider()
with st.expander("Maintainers: moderate submitted runs"):
    sections.moderation_panel()
