# FactBoard as a Hugging Face Space (Docker SDK; see space/README.md for its front matter).
# Spaces run the container as user 1000 and route traffic to app_port 8501 ($PORT, which the entry
# script and the healthcheck follow: set PORT to serve elsewhere).
FROM python:3.11-slim

RUN useradd --create-home --uid 1000 user
USER user
ENV HOME=/home/user \
    PATH=/home/user/.local/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PORT=8501 \
    FACTBOARD_DATA=/home/user/data/leaderboard_data \
    FACTBOARD_SUBMISSIONS=/home/user/data/submissions \
    HF_HOME=/home/user/.cache/huggingface
WORKDIR /home/user/app

# the app's requirements only (no torch, no LLM SDKs): detectors run on a separate worker
COPY --chown=user requirements.txt .
RUN pip install --no-cache-dir --user -r requirements.txt

COPY --chown=user . .

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s \
    CMD python -c "import os, urllib.request as u; u.urlopen('http://127.0.0.1:%s/_stcore/health' % os.environ.get('PORT', '8501'), timeout=4)" || exit 1
CMD ["bash", "scripts/space_entrypoint.sh"]
