"""FactBoard: `streamlit run app.py`. Page config and navigation only; the pages live in views/.

(The folder is not called pages/: Streamlit would then treat it as an old-style multipage app and
run a deep link to a page without this navigation.)"""

import streamlit as st

from evaluator.hub import background as hub_background
from explorer import ui

st.set_page_config(page_title="FactBoard", page_icon="📋", layout="wide")

# with $FACTBOARD_HUB_REPO: pull the results repo (first run waits for it), push in the background;
# from the first page on, a line says when there is none or it cannot be reached
ui.hub_notice(hub_background.page_notice())


def page(name: str, title: str, icon: str, default: bool = False) -> st.Page:
    return st.Page(f"views/{name}.py", title=title, icon=icon, url_path=name, default=default)


st.navigation(
    {
        "Results": [
            page("home", "Who is best", "📋", default=True),
            page("leaderboard", "Leaderboard", "🏆"),
            page("compare", "Compare", "⚖️"),
            page("across", "Across benchmarks", "🧭"),
        ],
        "Data": [
            page("samples", "Samples", "🔎"),
            page("benchmarks", "Benchmarks", "📚"),
            page("explanations", "Explanations", "💬"),
        ],
        "Contribute": [page("submit", "Submit", "📤"), page("queue", "Queue", "⏳")],
    },
    position="top",
).run()
