"""A prompted LLM detector over an ingested benchmark -> ordinary run folder(s).

`python -m evaluator run --llm PROVIDER:MODEL --prompt ID --benchmark B` ends here (and so does
`--repeats N`, which makes N runs of the same configuration and stores their self-agreement,
the mean pairwise Cohen's kappa of TofuEval Table 4, in each run's config.extra).

One request per sample of the prompt's unit: sentence prompts (TofuEval) are asked per summary
sentence and the engine rolls sentence labels up to summaries (a summary is inconsistent if any
sentence is); summary prompts per summary. The reply is parsed into a label (1 consistent,
0 inconsistent) and an explanation; an unparsable reply keeps its raw text with a null label and
is counted; a request that keeps failing is left out of the predictions and counted as failed.
Samples that lack a field the prompt needs (TofuEval without its documents) are left out and
counted too. Replies are cached, so rerunning the same command sends only what is missing.
The steps every run shares (load, select, score, write) are evaluator.runner's; with the `ray`
engine the requests the cache does not answer are sent from Ray tasks, with `concurrency`
requests in flight for the whole cluster (evaluator.distributed.llm), and the run records the
engine.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluator import runner
from evaluator.benchmarks import registry
from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core import metrics as M
from evaluator.core.errors import FactBoardError, ScoringError
from evaluator.core.scoring import Scored, ScoreOptions
from evaluator.core.types import PREDICTION_COLUMNS, Counts, ModelInfo, RunConfig
from evaluator.llm import prompts as P
from evaluator.llm.cache import ResponseCache, default_dir
from evaluator.llm.clients import (
    CLIENT_OPTIONS,
    ChatClient,
    ChatRequest,
    ClientIdentity,
    LLMError,
    make_client,
    public_url,
    split_provider_model,
)
from evaluator.llm.execute import Outcome, RetryPolicy, Tally, price_of, run_batch
from evaluator.llm.parsing import parse_verdict
from evaluator.llm.records import KappaPair, ParseReport, RunExtra, SelfAgreement, Usage
from evaluator.store import runs

# options the runner and judges take besides the client's (CLI: --option KEY=VALUE)
RUN_OPTIONS: dict[str, str] = {
    "max_tokens": "most tokens a reply may have (default: the prompt's, 1024 for most)",
    "cache": "on (default) or off: reuse and store replies in the response cache",
    "cache_dir": "the response cache folder (default $FACTBOARD_LLM_CACHE or "
    "<data root>/.cache/llm)",
    "max_attempts": "attempts per request before it counts as failed (default 6)",
    "retry_base": "backoff base in seconds (default 1; attempt n waits up to base*2^(n-1))",
    "price_in": "USD per million input tokens (overrides the price table)",
    "price_out": "USD per million output tokens (overrides the price table)",
    "kind": "model kind on the board: open-llm or proprietary-llm (default: by provider)",
    "org": "the model's organisation, shown on the board",
    "params": "parameter count as stated, e.g. 70B",
}
ALL_OPTIONS: dict[str, str] = {**CLIENT_OPTIONS, **RUN_OPTIONS}
MAX_ERRORS_KEPT = 20


@dataclass(frozen=True)
class Settings:
    client_options: dict[str, str]
    max_tokens: int | None
    cache: ResponseCache | None
    retry: RetryPolicy
    price: tuple[float, float] | None
    kind: str | None
    org: str | None
    params: str | None


def _number(options: Mapping[str, str], key: str, cast: type, minimum: float) -> Any:
    raw = options.get(key)
    if raw is None:
        return None
    try:
        v = cast(raw)
    except (TypeError, ValueError):
        raise LLMError(f"option {key}={raw!r} is not a {cast.__name__}") from None
    if not math.isfinite(float(v)) or v < minimum:
        raise LLMError(f"option {key}={raw!r} must be at least {minimum:g}")
    return v


def settings(
    provider_model: str,
    options: Mapping[str, Any] | None,
    root: Path | None,
    retry: RetryPolicy | None = None,
) -> Settings:
    """Validate options (unknown keys are refused by name) into Settings."""
    opts = {str(k): str(v) for k, v in (options or {}).items()}
    unknown = sorted(set(opts) - set(ALL_OPTIONS))
    if unknown:
        raise LLMError(f"unknown option {unknown[0]!r}; known: {', '.join(sorted(ALL_OPTIONS))}")
    provider, model = split_provider_model(provider_model)
    cache_flag = opts.get("cache", "on").strip().lower()
    if cache_flag not in ("on", "off"):
        raise LLMError(f"option cache={opts['cache']!r} must be on or off")
    cache = None
    if cache_flag == "on":
        d = Path(opts["cache_dir"]).expanduser() if opts.get("cache_dir") else default_dir(root)
        cache = ResponseCache(d)
    attempts = _number(opts, "max_attempts", int, 1)
    base = _number(opts, "retry_base", float, 0.0)
    if retry is None:
        retry = RetryPolicy()
    if attempts is not None or base is not None:
        retry = RetryPolicy(
            max_attempts=attempts if attempts is not None else retry.max_attempts,
            base=base if base is not None else retry.base,
            cap=retry.cap,
            max_retry_after=retry.max_retry_after,
            sleep=retry.sleep,
            rng=retry.rng,
        )
    pin, pout = _number(opts, "price_in", float, 0.0), _number(opts, "price_out", float, 0.0)
    if (pin is None) != (pout is None):
        raise LLMError("give both price_in and price_out (USD per million tokens), or neither")
    price = (pin, pout) if pin is not None else price_of(provider, model)
    kind = opts.get("kind")
    if kind is not None and kind not in ("open-llm", "proprietary-llm"):
        raise LLMError(f"option kind={kind!r} must be open-llm or proprietary-llm")
    return Settings(
        client_options={k: v for k, v in opts.items() if k in CLIENT_OPTIONS},
        max_tokens=_number(opts, "max_tokens", int, 1),
        cache=cache,
        retry=retry,
        price=price,
        kind=kind,
        org=opts.get("org"),
        params=opts.get("params"),
    )


def default_kind(provider: str) -> str:
    return "open-llm" if provider == "compatible" else "proprietary-llm"


def client_record(client: ChatClient) -> ClientIdentity:
    """What a run stores about the client: provider, model, public base URL; never a key."""
    rec = client.identity().copy()
    url = getattr(client, "base_url", None)
    if url:
        rec["base_url"] = public_url(str(url))
    return rec


def usage_of(outcomes: Sequence[Outcome], price: tuple[float, float] | None) -> Usage:
    sent = [o.response for o in outcomes if o.response is not None and not o.cached]
    cached = [o.response for o in outcomes if o.response is not None and o.cached]
    tin = sum(r.input_tokens or 0 for r in sent)
    tout = sum(r.output_tokens or 0 for r in sent)
    unknown = sum(1 for r in sent if r.input_tokens is None or r.output_tokens is None)
    cost = None
    if price is not None and not unknown:
        cost = round((tin * price[0] + tout * price[1]) / 1e6, 6)
    return {
        "requests": len(outcomes),
        "replies_received": len(sent),
        "replies_from_cache": len(cached),
        "failed": sum(1 for o in outcomes if o.error is not None),
        "input_tokens": tin,
        "output_tokens": tout,
        "replies_without_usage": unknown,
        "cached_input_tokens": sum(r.input_tokens or 0 for r in cached),
        "cached_output_tokens": sum(r.output_tokens or 0 for r in cached),
        "cost_usd": cost,
        "price_usd_per_mtok": list(price) if price else None,
    }


def _select(
    spec: Any, samples: pd.DataFrame, prompt: P.Prompt, splits: list[str], limit: int | None
) -> tuple[pd.DataFrame, dict[str, int]]:
    rows = runner.select_samples(samples, prompt.unit, splits)
    if prompt.given_inconsistent:
        if rows["label"].isna().any():
            raise FactBoardError(
                f"prompt {prompt.id} is given the inconsistent summaries, but {spec.name} has "
                "unlabelled samples"
            )
        rows = rows[rows["label"] == 0]
    if limit is not None:
        rows = rows.groupby("split", sort=False, group_keys=False).head(limit)
    skipped: Counter[str] = Counter()
    keep = np.ones(len(rows), dtype=bool)
    for j, rec in enumerate(_records(rows)):
        miss = P.missing_fields(prompt, rec)
        if miss:
            keep[j] = False
            skipped.update(miss)
    return rows[keep], dict(skipped)


def _records(rows: pd.DataFrame) -> list[dict[str, object]]:
    """Sample rows as mappings (their values are of every column's type)."""
    return [{str(k): v for k, v in r.items()} for r in rows.to_dict("records")]


def _splits(spec: Any, splits: Sequence[str] | None) -> list[str]:
    """The splits asked for, else test when there is a dev split (labels need no tuning)."""
    asked = runner.requested_splits(spec, splits)
    if asked:
        return asked
    return ["test"] if "dev" in spec.splits and "test" in spec.splits else list(spec.splits)


def predictions_from(
    rows: pd.DataFrame, outcomes: Sequence[Outcome], prompt: P.Prompt
) -> tuple[pd.DataFrame, ParseReport]:
    """Prediction rows for the replies (failed requests are left out) and the parse report."""
    out = []
    problems: list[dict[str, str]] = []
    errors: list[dict[str, str]] = []
    n_unparsable = 0
    for sid, o in zip(rows["sample_id"].tolist(), outcomes, strict=True):
        if o.response is None:
            if len(errors) < MAX_ERRORS_KEPT:
                errors.append({"sample_id": str(sid), "error": str(o.error)})
            continue
        v = parse_verdict(prompt.output, o.response.text)
        if not v.parsed:
            n_unparsable += 1
            if len(problems) < MAX_ERRORS_KEPT:
                problems.append({"sample_id": str(sid), "problem": str(v.problem)})
        out.append(
            {
                "sample_id": str(sid),
                "score": math.nan,
                "label": v.label,
                "explanation": v.explanation if prompt.explains else None,
                "raw_output": o.response.text,
            }
        )
    preds = pd.DataFrame(out, columns=list(PREDICTION_COLUMNS))
    preds["label"] = preds["label"].astype("Int8")
    failed = sum(1 for o in outcomes if o.response is None)
    report: ParseReport = {
        "replies": len(out),
        "unparsable": n_unparsable,
        "unparsable_examples": problems,
        "failed": failed,
        "failed_examples": errors,
    }
    return preds, report


def self_agreement(preds: Sequence[pd.DataFrame]) -> SelfAgreement:
    """Mean pairwise Cohen's kappa of repeated runs over the samples every run labelled."""
    labelled = [p.dropna(subset=["label"]).set_index("sample_id")["label"] for p in preds]
    common = sorted(set.intersection(*(set(s.index) for s in labelled)))
    out: SelfAgreement = {
        "runs": len(preds),
        "n": len(common),
        "measure": "cohen_kappa",
        "mean_pairwise_cohen_kappa": None,
    }
    if len(common) == 0:
        return out
    series = [[int(s[i]) for i in common] for s in labelled]
    k = M.mean_pairwise_cohen_kappa(series)
    out["mean_pairwise_cohen_kappa"] = k if math.isfinite(k) else None
    pairs: list[KappaPair] = []
    for a in range(len(series)):
        for b in range(a + 1, len(series)):
            kab = M.cohen_kappa(series[a], series[b])
            pairs.append({"a": a + 1, "b": b + 1, "kappa": kab if math.isfinite(kab) else None})
    out["pairs"] = pairs
    return out


def prompt_help(benchmark: str | None = None) -> str:
    lines = []
    for p in P.detector_prompts():
        mark = " (designed for this benchmark)" if benchmark and benchmark in p.benchmarks else ""
        lines.append(f"{p.id} [{p.unit}]: {p.title}{mark}")
    return "; ".join(lines)


def _detector_prompt(spec: BenchmarkSpec, benchmark: str, prompt_id: str | None) -> P.Prompt:
    """The detector prompt `prompt_id`, refused with what to use instead where it does not
    fit the benchmark (its task, or the unit it asks about)."""
    if not prompt_id:
        raise FactBoardError(f"--prompt is required for --llm; prompts: {prompt_help(benchmark)}")
    prompt = P.get(prompt_id)
    if prompt.kind != "detector":
        raise FactBoardError(
            f"prompt {prompt_id} is a {prompt.kind} prompt; detector prompts: "
            f"{prompt_help(benchmark)}"
        )
    if spec.task not in ("detection", "detection+explanation"):
        raise FactBoardError(
            f"{benchmark} is a {spec.task} benchmark; a prompted detector gives labels for "
            "detection benchmarks"
        )
    if prompt.unit not in spec.units:
        raise FactBoardError(
            f"prompt {prompt_id} asks about one {prompt.unit} at a time; {benchmark} has units "
            f"{', '.join(spec.units)}"
        )
    return prompt


def _check_run(repeats: int, concurrency: int, limit: int | None, temperature: float) -> None:
    if repeats < 1:
        raise FactBoardError(f"repeats must be at least 1, got {repeats}")
    if concurrency < 1:
        raise FactBoardError(f"concurrency must be at least 1, got {concurrency}")
    runner.check_limit(limit)
    if not math.isfinite(temperature) or temperature < 0:
        raise FactBoardError(f"temperature must be a finite number >= 0, got {temperature}")


def run_llm(
    provider_model: str,
    benchmark: str,
    *,
    prompt_id: str | None,
    temperature: float = 0.0,
    repeats: int = 1,
    concurrency: int = 8,
    splits: Sequence[str] | None = None,
    limit: int | None = None,
    model_name: str | None = None,
    options: Mapping[str, Any] | None = None,
    progress: bool = False,
    root: Path | None = None,
    retry: RetryPolicy | None = None,
    engine: runner.Engine | None = None,
) -> list[Path]:
    """Run a prompted LLM detector; one run folder per repeat (returned in order).

    engine: where the requests are sent from (default: this process)."""
    engine = (engine or runner.Engine()).check()
    spec = registry.get(benchmark)
    prompt = _detector_prompt(spec, benchmark, prompt_id)
    _check_run(repeats, concurrency, limit, temperature)
    cfg = settings(provider_model, options, root, retry)
    provider, model = split_provider_model(provider_model)
    client = make_client(provider_model, cfg.client_options)

    inputs = runner.load_inputs(benchmark, root)
    use_splits = _splits(spec, splits)
    rows, skipped = _prompted_rows(spec, inputs.samples, prompt, use_splits, limit)
    texts = [P.render_detector(prompt, r) for r in _records(rows)]
    max_tokens = cfg.max_tokens or prompt.max_tokens
    requests = [
        ChatRequest(user=t, temperature=temperature, max_tokens=max_tokens, repeat=r)
        for r in range(repeats)
        for t in texts
    ]
    outcomes, tally = run_batch(
        client,
        requests,
        cache=cfg.cache,
        concurrency=concurrency,
        retry=cfg.retry,
        price=cfg.price,
        progress=progress,
        desc=f"{model} {prompt_id} on {benchmark}",
        engine=engine,
        client_spec=(provider_model, cfg.client_options),
    )
    n = len(texts)
    per_repeat = [outcomes[r * n : (r + 1) * n] for r in range(repeats)]
    parsed = [predictions_from(rows, outs, prompt) for outs in per_repeat]
    agreement = self_agreement([p for p, _ in parsed]) if repeats > 1 else None

    info = ModelInfo(
        name=(model_name or f"{model} ({prompt_id})")[:120],
        kind=(cfg.kind or default_kind(provider)),  # type: ignore[arg-type]
        org=cfg.org,
        params=cfg.params,
    )
    names = _repeat_names(model_name or f"{model} ({prompt_id})", repeats)
    run_ids = [runs.new_run_id(benchmark, nm) for nm in names]
    written: list[Path] = []
    for r, ((preds, report), outs) in enumerate(zip(parsed, per_repeat, strict=True)):
        _check_usable(model, r, preds, report)
        extra = _run_extra(
            prompt, client, engine, cfg, outs, report, r, repeats, limit, skipped, concurrency
        )
        if agreement is not None:
            shared = agreement.copy()
            shared["run_ids"] = run_ids
            extra["self_agreement"] = shared
        config = RunConfig(
            llm=f"{provider}:{model}",
            prompt_id=prompt.id,
            temperature=temperature,
            extra=dict(extra),
        )
        opts = ScoreOptions(
            policy="labels", splits=tuple(use_splits), labels_given=prompt.given_inconsistent
        )
        try:
            path = runner.score_and_write(
                inputs,
                preds,
                info.model_copy(update={"name": names[r][:120]}),
                config,
                opts,
                root,
                run_id=run_ids[r],
                adjust=_reply_counts(report),
            )
        except ScoringError as e:
            raise FactBoardError(f"repeat {r + 1} cannot be scored: {e}") from None
        written.append(path)
    if progress:
        _print_summary(tally, parsed, skipped, agreement, written)
    return written


def _prompted_rows(
    spec: BenchmarkSpec,
    samples: pd.DataFrame,
    prompt: P.Prompt,
    splits: list[str],
    limit: int | None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The rows the prompt is asked about, and those left out for missing fields; none is an
    error that says why."""
    rows, skipped = _select(spec, samples, prompt, splits, limit)
    if rows.empty:
        why = f" (left out for missing fields: {skipped})" if skipped else ""
        raise FactBoardError(
            f"no {prompt.unit} of {spec.name} in split(s) {', '.join(splits)} can be "
            f"prompted with {prompt.id}{why}"
        )
    return rows, skipped


def _repeat_names(name: str, repeats: int) -> list[str]:
    """The board name of each repeat's run ("NAME run 2/3"; NAME alone for one run)."""
    return [name if repeats == 1 else f"{name} run {r + 1}/{repeats}" for r in range(repeats)]


def _check_usable(model: str, r: int, preds: pd.DataFrame, report: ParseReport) -> None:
    """A repeat with no usable label writes nothing and says why."""
    if preds.empty or preds["label"].isna().all():
        example = (report["failed_examples"] or report["unparsable_examples"] or [{}])[0]
        raise FactBoardError(
            f"{model} gave no usable label in repeat {r + 1}: {report['failed']} request(s) "
            f"failed and {report['unparsable']} repl(ies) were unparsable (e.g. {example}); "
            "nothing was written (replies received are cached)"
        )


def _run_extra(
    prompt: P.Prompt,
    client: Any,
    engine: runner.Engine,
    cfg: Any,
    outcomes: Sequence[Outcome],
    report: ParseReport,
    repeat: int,
    repeats: int,
    limit: int | None,
    skipped: dict[str, int],
    concurrency: int,
) -> RunExtra:
    """What one repeat's run records beside its model and prompt (config.extra)."""
    extra: RunExtra = {
        "prompt": prompt.record(),
        "client": client_record(client),
        "unit": prompt.unit,
        "max_tokens": cfg.max_tokens or prompt.max_tokens,
        "concurrency": concurrency,
        "engine": engine.record(),
        "repeat": repeat + 1,
        "repeats": repeats,
        "limit": limit,
        "usage": usage_of(outcomes, cfg.price),
        "parse": report,
        "samples_prompted": len(outcomes),
        "left_out_missing_fields": skipped,
        "served_models": sorted(
            {str(o.response.model) for o in outcomes if o.response and o.response.model}
        ),
    }
    if prompt.given_inconsistent:
        extra["labels_given"] = (
            "E|D: the model was told every summary is inconsistent; the labels are not its "
            "predictions, and only its explanations (ES) measure it"
        )
    return extra


def _reply_counts(report: ParseReport) -> Callable[[Scored], None]:
    """Counts that say what the replies were: a row with neither label nor score is a reply
    received and stored but unparsable (the scorer alone would count it as missing); failed
    requests have no row."""

    def adjust(scored: Scored) -> None:
        c = scored.counts
        scored.counts = Counts(
            n=c.n,
            predicted=c.predicted,
            missing=c.n - c.predicted - report["unparsable"],
            unparsable=report["unparsable"],
            failed=report["failed"],
        )

    return adjust


def _print_summary(
    tally: Tally,
    parsed: list[tuple[pd.DataFrame, ParseReport]],
    skipped: dict[str, int],
    agreement: SelfAgreement | None,
    written: list[Path],
) -> None:
    err = sys.stderr
    print(
        f"requests: {tally.total} ({tally.cached} from cache, {tally.sent} sent, "
        f"{tally.retries} retries); {tally.postfix()}",
        file=err,
    )
    for r, (_, rep) in enumerate(parsed):
        print(
            f"  repeat {r + 1}: {rep['replies']} replies, {rep['unparsable']} unparsable, "
            f"{rep['failed']} failed -> {written[r].name}",
            file=err,
        )
    if skipped:
        print(f"  left out for missing fields: {skipped}", file=err)
    if agreement is not None:
        k = agreement["mean_pairwise_cohen_kappa"]
        ks = f"{k:.3f}" if k is not None else "undefined"
        print(
            f"  self-agreement: mean pairwise Cohen's kappa {ks} over {agreement['n']} samples",
            file=err,
        )
