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


st.navigation(ui.navigation(), position="top").run()
