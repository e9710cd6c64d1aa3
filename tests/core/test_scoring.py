"""scoring.score: per-slice results against sklearn/scipy recomputed on the same subsets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn import metrics as skm

from evaluator.benchmarks.registry import BenchmarkSpec, LoadedBenchmark, SliceSpec
from evaluator.core import metrics as M
from evaluator.core.errors import ScoringError
from evaluator.core.scoring import ScoreOptions, score


def _spec(**kw: object) -> BenchmarkSpec:
    base: dict[str, object] = dict(
        name="toy",
        title="Toy",
        task="detection",
        units=("summary",),
        splits=("dev", "test"),
        slices=(
            SliceSpec("domain", "domain"),
            SliceSpec("edit_type", "error_types", multi=True, with_consistent=True),
            SliceSpec("topic_type", "attributes.topic_type"),
        ),
        primary_metric="balanced_accuracy",
        license="-",
        citation="-",
        source="-",
        description="-",
        loader=lambda *a, **k: LoadedBenchmark([]),
        overall="mean_over_domains",
        domains=("a", "b", "c", "d"),
    )
    base.update(kw)
    return BenchmarkSpec(**base)  # type: ignore[arg-type]


def _samples(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    label = rng.integers(0, 2, n)
    types = [
        []
        if lab == 1
        else list(rng.choice(["ent", "neg", "ant"], rng.integers(1, 3), replace=False))
        for lab in label
    ]
    return pd.DataFrame(
        {
            "benchmark": "toy",
            "sample_id": [f"s{i:04d}" for i in range(n)],
            "split": np.where(np.arange(n) % 4 == 0, "dev", "test"),
            "unit": "summary",
            "summary_id": None,
            "domain": rng.choice(["a", "b", "c"], n),
            "doc_id": None,
            "document": "doc",
            "summary": "summ",
            "seed_summary": None,
            "label": label.astype("int8"),
            "human_score": rng.random(n),
            "error_types": types,
            "reference_explanation": None,
            "attributes": [
                json.dumps({"topic_type": t}) for t in rng.choice(["main", "marginal"], n)
            ],
        }
    )


def _res(scored, metric, kind="overall", value="", unit="summary"):
    hits = [
        r
        for r in scored.results
        if r.metric == metric
        and r.slice_kind == kind
        and r.slice_value == value
        and r.unit == unit
        and r.grader is None
    ]
    assert len(hits) == 1, (metric, kind, value, [(r.metric, r.slice_kind) for r in hits])
    return hits[0]


def test_label_predictions_match_sklearn_on_every_slice() -> None:
    s = _samples()
    rng = np.random.default_rng(1)
    pred = pd.DataFrame(
        {
            "sample_id": s["sample_id"],
            "label": np.where(rng.random(len(s)) < 0.7, s["label"], 1 - s["label"]),
        }
    )
    out = score(_spec(), s, pred, ScoreOptions(resamples=200))
    assert out.threshold.policy == "labels"
    test = s[s["split"] == "test"].merge(pred, on="sample_id", suffixes=("", "_p"))
    y, p = test["label"].to_numpy(), test["label_p"].to_numpy()
    per_dom = []
    for d in ["a", "b", "c"]:
        m = (test["domain"] == d).to_numpy()
        per_dom.append(skm.balanced_accuracy_score(y[m], p[m]))
        r = _res(out, "balanced_accuracy", "domain", d)
        assert r.value == pytest.approx(per_dom[-1])
        assert r.n == m.sum()
        assert r.ci_low <= r.value <= r.ci_high
    overall = _res(out, "balanced_accuracy")
    assert overall.value == pytest.approx(np.mean(per_dom))  # SummEdits "Overall"
    assert overall.aggregation == "mean_over_domains"
    assert overall.coverage == ["a", "b", "c"]
    # edit type slice: every consistent sample plus the inconsistent ones with that type
    for t in ["ent", "neg", "ant"]:
        m = ((test["label"] == 1) | test["error_types"].map(lambda v, t=t: t in v)).to_numpy()
        assert _res(out, "balanced_accuracy", "edit_type", t).value == pytest.approx(
            skm.balanced_accuracy_score(y[m], p[m])
        )
    for tt in ["main", "marginal"]:
        m = test["attributes"].str.contains(f'"{tt}"').to_numpy()
        assert _res(out, "accuracy", "topic_type", tt).value == pytest.approx(
            skm.accuracy_score(y[m], p[m])
        )
    assert out.counts.n == len(test) and out.counts.missing == 0


def test_scores_use_a_dev_tuned_threshold_applied_to_test() -> None:
    s = _samples()
    rng = np.random.default_rng(2)
    pred = pd.DataFrame(
        {"sample_id": s["sample_id"], "score": s["label"] * 0.8 + rng.normal(size=len(s))}
    )
    out = score(_spec(), s, pred, ScoreOptions(resamples=200))
    j = s.merge(pred, on="sample_id")
    dev, test = j[j["split"] == "dev"], j[j["split"] == "test"]
    t = M.best_threshold(dev["label"], dev["score"])
    assert out.threshold.policy == "dev" and out.threshold.tuned_on == "dev"
    assert out.threshold.threshold == pytest.approx(t.value)
    assert out.threshold.tuned_value == pytest.approx(t.balanced_accuracy)
    yhat = (test["score"] >= t.value).astype(int)
    for d in ["a", "b"]:
        m = test["domain"] == d
        assert _res(out, "balanced_accuracy", "domain", d).value == pytest.approx(
            skm.balanced_accuracy_score(test["label"][m], yhat[m])
        )
        assert _res(out, "roc_auc", "domain", d).value == pytest.approx(
            skm.roc_auc_score(test["label"][m], test["score"][m])
        )


def test_per_domain_and_fixed_threshold_policies() -> None:
    s = _samples()
    rng = np.random.default_rng(3)
    pred = pd.DataFrame(
        {"sample_id": s["sample_id"], "score": s["label"] + rng.normal(size=len(s))}
    )
    per = score(_spec(), s, pred, ScoreOptions(policy="per-domain-dev", resamples=50))
    assert per.threshold.policy == "per-domain-dev"
    assert set(per.threshold.per_domain) == {"a", "b", "c"}
    # the stored tuned value is the dev BAcc of the per-domain thresholds, all domains together
    dev = s.merge(pred, on="sample_id").query("split == 'dev'")
    dev_pred = [
        int(sc >= per.threshold.per_domain[d]) for sc, d in zip(dev.score, dev.domain, strict=True)
    ]
    assert per.threshold.tuned_value == pytest.approx(
        skm.balanced_accuracy_score(dev["label"], dev_pred)
    )
    fixed = score(_spec(), s, pred, ScoreOptions(policy="fixed", threshold=0.5, resamples=50))
    test = s.merge(pred, on="sample_id").query("split == 'test'")
    assert _res(fixed, "accuracy", "domain", "a").value == pytest.approx(
        skm.accuracy_score(
            test[test.domain == "a"]["label"],
            (test[test.domain == "a"]["score"] >= 0.5).astype(int),
        )
    )


def test_same_seed_same_cis_other_seed_other_cis() -> None:
    s = _samples()
    pred = pd.DataFrame({"sample_id": s["sample_id"], "label": 1 - s["label"] % 2})
    pred.loc[::3, "label"] = 1
    a = score(_spec(), s, pred, ScoreOptions(resamples=300, seed=5)).results
    b = score(_spec(), s, pred, ScoreOptions(resamples=300, seed=5)).results
    c = score(_spec(), s, pred, ScoreOptions(resamples=300, seed=6)).results
    assert a == b
    assert [r.ci_low for r in a] != [r.ci_low for r in c]


def test_missing_and_bad_predictions() -> None:
    s = _samples()
    test_ids = s.loc[s["split"] == "test", "sample_id"]
    part = pd.DataFrame({"sample_id": test_ids.iloc[:100], "label": 1})
    part.loc[:9, "label"] = 0
    out = score(_spec(), s, part, ScoreOptions(resamples=50))
    assert out.counts.missing == len(test_ids) - 100 and out.counts.predicted == 100
    with pytest.raises(ScoringError, match="not in benchmark toy, e.g. 'nope'"):
        score(_spec(), s, pd.DataFrame({"sample_id": ["nope"], "label": [1]}))
    with pytest.raises(ScoringError, match="non-finite score for sample_id 's0000'"):
        score(_spec(), s, pd.DataFrame({"sample_id": ["s0000"], "score": [np.inf]}))
    with pytest.raises(ScoringError, match="duplicate sample_id"):
        score(_spec(), s, pd.DataFrame({"sample_id": ["s0001", "s0001"], "label": [1, 0]}))
    with pytest.raises(ScoringError, match="no dev sample of toy has a score"):
        score(_spec(), s, pd.DataFrame({"sample_id": test_ids, "score": 0.3}))
    with pytest.raises(ScoringError, match="unknown split 'valid'"):
        score(_spec(), s, part, ScoreOptions(splits=("valid",)))
    with pytest.raises(ScoringError, match="unknown threshold policy"):
        ScoreOptions(policy="magic")
    with pytest.raises(ScoringError, match="label 3"):
        score(_spec(), s, pd.DataFrame({"sample_id": ["s0001"], "label": [3]}))


def test_sentence_predictions_roll_up_to_summaries() -> None:
    rows = []
    rng = np.random.default_rng(4)
    for k in range(60):
        n_sent = int(rng.integers(1, 4))
        labs = rng.integers(0, 2, n_sent)
        sid = f"sum{k}"
        for j, lab in enumerate(labs):
            rows.append(
                dict(
                    sample_id=f"{sid}.{j}",
                    unit="sentence",
                    summary_id=sid,
                    label=int(lab),
                    split="test",
                    error_types=[] if lab else ["X"],
                )
            )
        rows.append(
            dict(
                sample_id=sid,
                unit="summary",
                summary_id=None,
                label=int(labs.min()),
                split="test",
                error_types=[],
            )
        )
    s = pd.DataFrame(rows).assign(
        benchmark="toy",
        domain="d1",
        doc_id=None,
        document=None,
        summary="x",
        seed_summary=None,
        human_score=None,
        reference_explanation=None,
        attributes="{}",
    )
    spec = _spec(
        units=("sentence", "summary"),
        splits=("test",),
        overall="pooled",
        slices=(SliceSpec("error_type", "error_types", multi=True, single_only=True),),
    )
    sent = s[s["unit"] == "sentence"]
    pred = pd.DataFrame(
        {
            "sample_id": sent["sample_id"],
            "label": np.where(rng.random(len(sent)) < 0.75, sent["label"], 1 - sent["label"]),
        }
    )
    out = score(spec, s, pred, ScoreOptions(resamples=100))
    j = sent.merge(pred, on="sample_id", suffixes=("", "_p"))
    assert _res(out, "balanced_accuracy", unit="sentence").value == pytest.approx(
        skm.balanced_accuracy_score(j["label"], j["label_p"])
    )
    roll = j.groupby("summary_id").agg(y=("label", "min"), p=("label_p", "min"))
    assert _res(out, "balanced_accuracy", unit="summary").value == pytest.approx(
        skm.balanced_accuracy_score(roll["y"], roll["p"])
    )
    assert _res(out, "balanced_accuracy", unit="summary").n == 60
    # an only-inconsistent slice reports recall (TofuEval error types)
    x = j[j["label"] == 0]
    assert _res(out, "recall", "error_type", "X", unit="sentence").value == pytest.approx(
        (x["label_p"] == 0).mean()
    )
    with pytest.raises(ScoringError, match="mix units"):
        score(spec, s, pd.DataFrame({"sample_id": ["sum0", "sum1.0"], "label": [1, 1]}))


def test_detection_and_explanation_scores() -> None:
    s = _samples(400).assign(split="test")
    spec = _spec(
        task="detection+explanation",
        splits=("test",),
        overall="pooled",
        slices=(SliceSpec("domain", "domain"),),
    )
    rng = np.random.default_rng(6)
    pred = pd.DataFrame(
        {
            "sample_id": s["sample_id"],
            "label": np.where(rng.random(len(s)) < 0.7, s["label"], 1 - s["label"]),
        }
    )
    j = s.merge(pred, on="sample_id", suffixes=("", "_p"))
    flagged = j[(j["label"] == 0) & (j["label_p"] == 0)]
    grade = rng.choice([0.0, 0.5, 1.0], len(flagged))
    grades = pd.DataFrame(
        {"sample_id": flagged["sample_id"], "judge": "gpt-4o", "protocol": "EvalV4", "grade": grade}
    )
    out = score(spec, s, pred, ScoreOptions(resamples=100), grades)
    inc = j[j["label"] == 0]
    ds = (inc["label_p"] == 0).mean()
    es = grade.mean()
    assert _res(out, "detection_score").value == pytest.approx(ds)
    assert _res(out, "detection_accuracy").value == pytest.approx((j.label == j.label_p).mean())
    ges = [r for r in out.results if r.metric == "explanation_score" and r.slice_kind == "overall"]
    gjs = [r for r in out.results if r.metric == "joint_score" and r.slice_kind == "overall"]
    assert ges[0].grader == "gpt-4o/EvalV4" and ges[0].value == pytest.approx(es)
    assert gjs[0].value == pytest.approx(ds * es)  # D&E: JS = DS x ES (SummExecEdit Table 2)
    assert ges[0].n == len(flagged)


def test_correlation_benchmark() -> None:
    s = _samples(300).assign(split="test")
    s["attributes"] = [json.dumps({"system": f"m{i % 4}"}) for i in range(len(s))]
    spec = _spec(
        task="correlation",
        splits=("test",),
        overall="pooled",
        primary_metric="pearson",
        slices=(SliceSpec("domain", "domain"),),
        correlation_control="attributes.system",
    )
    rng = np.random.default_rng(8)
    pred = pd.DataFrame(
        {
            "sample_id": s["sample_id"],
            "score": s["human_score"] + rng.normal(scale=0.5, size=len(s)),
        }
    )
    out = score(spec, s, pred, ScoreOptions(resamples=100))
    x, h = pred["score"].to_numpy(), s["human_score"].to_numpy()
    assert _res(out, "pearson").value == pytest.approx(stats.pearsonr(x, h)[0])
    assert _res(out, "spearman").value == pytest.approx(stats.spearmanr(x, h)[0])
    assert _res(out, "kendall_tau").value == pytest.approx(stats.kendalltau(x, h)[0])
    system = [json.loads(a)["system"] for a in s["attributes"]]
    assert _res(out, "partial_pearson").value == pytest.approx(M.partial_correlation(x, h, system))
    m = (s["domain"] == "b").to_numpy()
    assert _res(out, "kendall_tau", "domain", "b").value == pytest.approx(
        stats.kendalltau(x[m], h[m])[0]
    )
    assert out.threshold.policy == "none"


def test_rows_without_a_usable_value_are_unparsable_not_missing_nor_wrong() -> None:
    s = _samples()
    test = s[s["split"] == "test"]
    pred = pd.DataFrame({"sample_id": test["sample_id"], "label": test["label"]})
    pred["label"] = pred["label"].astype("Int8")
    pred.iloc[:7, pred.columns.get_loc("label")] = pd.NA  # e.g. LLM replies that did not parse
    out = score(_spec(), s, pred, ScoreOptions(resamples=50))
    assert out.counts.unparsable == 7 and out.counts.missing == 0
    assert out.counts.predicted == len(test) - 7
    assert _res(out, "accuracy", "domain", "a").value == 1.0  # the 7 are not scored as wrong
    assert _res(out, "balanced_accuracy").n == len(test) - 7


def test_labels_given_runs_report_only_explanation_metrics() -> None:
    """E|D: the model was told each summary is inconsistent; its labels measure nothing."""
    s = _samples(200).assign(split="test")
    spec = _spec(
        task="detection+explanation",
        splits=("test",),
        overall="pooled",
        slices=(SliceSpec("domain", "domain"),),
    )
    inc = s[s["label"] == 0]
    pred = pd.DataFrame({"sample_id": inc["sample_id"], "label": 0, "score": 0.1})
    grades = pd.DataFrame(
        {
            "sample_id": inc["sample_id"],
            "judge": "j",
            "protocol": "EvalV4",
            "grade": np.resize([1.0, 0.5, 0.0], len(inc)),
        }
    )
    out = score(spec, s, pred, ScoreOptions(resamples=50, labels_given=True), grades)
    assert {r.metric for r in out.results} == {"explanation_score", "joint_score"}
    es = [r for r in out.results if r.metric == "explanation_score" and r.slice_kind == "overall"]
    assert es[0].value == pytest.approx(grades["grade"].mean())
    normal = score(spec, s, pred, ScoreOptions(resamples=50), grades)
    assert {"detection_score", "detection_accuracy"} <= {r.metric for r in normal.results}


# --------------------------------------------------------------------------------------------
# every metric the scorer emits is a registered vocabulary metric

# where each registered benchmark's release lies in ../shared/benchmarks (demo: generated)
SHARED_SOURCE = {
    "factcc_explanations": "summedits",
    "faithbench": "faithbench",
    "frank": "frank",
    "llm_aggrefact": "llm_aggrefact",
    "longeval_pubmed": "longsciverify",
    "longsciverify": "longsciverify",
    "qags": "qags",
    "summedits": "summedits",
    "summexecedit": "summexecedit",
    "tofueval": "tofueval",
}


def _synthetic_runs(
    spec: BenchmarkSpec, samples: pd.DataFrame
) -> list[tuple[pd.DataFrame, ScoreOptions, pd.DataFrame | None]]:
    """Predictions (and grades) that exercise every metric the benchmark's task can emit."""
    unit = "sentence" if "sentence" in spec.units else spec.units[0]
    s = samples[samples["unit"] == unit]
    rng = np.random.default_rng(0)
    ids = s["sample_id"].to_numpy()
    opts = ScoreOptions(resamples=20)
    if spec.task == "correlation":
        human = s["human_score"].astype(float).fillna(0).to_numpy()
        return [
            (
                pd.DataFrame({"sample_id": ids, "score": human + rng.normal(0, 1, len(s))}),
                opts,
                None,
            )
        ]
    gold = s["label"].astype(float).fillna(1).to_numpy()
    pred = np.where(rng.random(len(s)) < 0.75, gold, 1 - gold).astype(int)
    grades = pd.concat(
        [
            pd.DataFrame(
                {
                    "sample_id": ids,
                    "judge": judge,
                    "protocol": protocol,
                    "grade": rng.choice([0.0, 0.5, 1.0], len(s)),
                    "rationale": rng.choice(["intrinsic", "extrinsic"], len(s)),
                }
            )
            for judge, protocol in (("people", "human"), ("gpt-4o", "EvalV4"))
        ],
        ignore_index=True,
    )
    if spec.task == "explanation-grading":
        return [(pd.DataFrame({"sample_id": ids, "explanation": "because"}), opts, grades)]
    scores = pd.DataFrame({"sample_id": ids, "score": pred + rng.normal(0, 0.3, len(s))})
    fixed = ScoreOptions(policy="fixed", threshold=0.5, resamples=20)
    return [
        (pd.DataFrame({"sample_id": ids, "label": pred}), opts, grades),
        (scores, opts if "dev" in spec.splits and spec.fixed_threshold is None else fixed, None),
    ]


def _frank_like_samples(n: int = 240) -> pd.DataFrame:
    """Summaries in FRANK's canonical form: two datasets, five systems, error types, human
    scores (what its slices and the partial correlations read)."""
    rng = np.random.default_rng(5)
    errors = ["RelE", "EntE", "CircE", "OutE", "GramE"]
    return pd.DataFrame(
        {
            "benchmark": "frank",
            "sample_id": [f"f{i:04d}" for i in range(n)],
            "split": np.where(np.arange(n) % 4 == 0, "dev", "test"),
            "unit": "summary",
            "summary_id": None,
            "domain": rng.choice(["cnndm", "xsum"], n),
            "doc_id": [f"d{i // 5}" for i in range(n)],
            "document": None,
            "summary": "a summary",
            "seed_summary": None,
            "label": None,
            "human_score": rng.random(n),
            "error_types": [list(rng.choice(errors, int(rng.integers(0, 3)))) for _ in range(n)],
            "reference_explanation": None,
            "attributes": [json.dumps({"system": f"s{i % 5}"}) for i in range(n)],
        }
    )


def test_every_metric_the_scorer_emits_is_registered(
    shared_benchmarks: Path, tmp_path: Path
) -> None:
    from evaluator.benchmarks import registry
    from evaluator.core import vocabulary as V
    from evaluator.ingest import demo, pipeline
    from evaluator.store import ingested
    from tests.support import llm_data
    from tests.support.llm_aggrefact_data import write_release

    assert set(SHARED_SOURCE) == set(registry.names()) - {"demo"}, (
        "a registered benchmark is missing from SHARED_SOURCE: say where its release lies"
    )
    root = tmp_path / "leaderboard_data"
    (root / "benchmarks").mkdir(parents=True)
    for _ in demo.build_demo(root=root):
        pass
    for name, folder in SHARED_SOURCE.items():
        if name == "summexecedit":  # its release is not in ../shared: a file in its format
            llm_data.ingest_summexecedit(tmp_path, root)
        elif name == "llm_aggrefact":  # likewise (hub only): files in its layout
            pipeline.ingest(name, write_release(tmp_path / "llm_aggrefact"), root=root)
        elif name != "frank":
            pipeline.ingest(name, shared_benchmarks / folder, root=root)
    registered = set(V.metric_names())
    tasks = set()
    seen: set[str] = set()
    for spec in registry.specs():
        samples = (
            _frank_like_samples()  # FRANK's ingest rebuilds its documents (over a minute)
            if spec.name == "frank"
            else ingested.load_samples(spec.name, root)
        )
        for preds, opts, grades in _synthetic_runs(spec, samples):
            emitted = {r.metric for r in score(spec, samples, preds, opts, grades).results}
            assert emitted, spec.name
            seen |= emitted
            assert emitted <= registered, f"{spec.name} emits unregistered {emitted - registered}"
            for m in emitted:
                assert spec.task in V.metric(m).tasks, (
                    f"{spec.name} ({spec.task}) emits {m}, registered for {V.metric(m).tasks}"
                )
        tasks.add(spec.task)
    assert tasks == set(V.TASKS)
    # the runs above reach the scorer's less common metrics too
    assert {
        "partial_pearson",
        "partial_spearman",
        "kendall_tau",
        "roc_auc",
        "recall",
        "detection_score",
        "joint_score",
        "explanation_share",
    } <= seen
