"""Scale-out: the same detector and LLM code run on a Ray cluster (`--engine ray`).

- `blocks.py`: the blocks of samples both engines score (one detector call per block) and their
  checkpoints, so a run interrupted as a whole resumes at the first unfinished block;
- `cluster.py`: connecting to Ray (`--ray-address`), with a clear error naming an address that
  cannot be reached;
- `detectors.py`: the Ray Data pipeline for reference detectors (one detector per actor);
- `limiter.py` and `llm.py`: LLM requests spread over Ray tasks, with one concurrency limit and
  one Retry-After pause per provider for the whole cluster.

Nothing here imports Ray at module level: the app and the local engine never need it
(requirements-ray.txt installs it). See docs/ARCHITECTURE.md and README, "Scale-out on Ray".
"""
