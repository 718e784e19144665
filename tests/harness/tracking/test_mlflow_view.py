"""What a session leaves in a real MLflow store for its UI: a classic experiment with the
harness's runs view, readable summary metrics, the best test's run tagged and linked, and
test runs that span the test's real wall-clock time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness import api
from harness.tracking import keys
from harness.tracking.view import (
    CLASSIC_KIND,
    EXPERIMENT_KIND_TAG,
    runs_page,
    runs_view,
    view_tag,
)


def _session(tmp_path: Path, *extra: str) -> tuple[Any, Any]:
    cfg = api.compose(
        [
            "system=synthetic10",
            "tuner=classytune",
            "budget=8",
            f"results_dir={tmp_path}/results",
            f"tracking.uri=sqlite:///{tmp_path}/mlflow.db",
            "session.progress=false",
            "session.name=view",
            *extra,
        ]
    )
    result = api.run(cfg)
    from mlflow.tracking import MlflowClient

    return result, MlflowClient(f"sqlite:///{tmp_path}/mlflow.db")


def _runs(client: Any, kind: str) -> list[Any]:
    experiment = client.get_experiment_by_name("synthetic10/synthetic")
    return [
        r
        for r in client.search_runs([experiment.experiment_id], max_results=1000)
        if r.data.tags.get(keys.TAG_KIND) == kind
    ]


def test_the_experiment_opens_on_a_runs_view_with_the_sessions_columns(tmp_path: Path) -> None:
    result, client = _session(tmp_path)
    experiment = client.get_experiment_by_name("synthetic10/synthetic")
    assert experiment.tags[EXPERIMENT_KIND_TAG] == CLASSIC_KIND
    view = json.loads(experiment.tags[view_tag()])
    columns = view["selectedColumns"]
    for wanted in ("metrics.`best_value`", "metrics.`improvement_pct`", "metrics.`objective`"):
        assert wanted in columns
    knobs = [c for c in columns if c.startswith("params.")]
    assert len(knobs) == 10  # every knob of synthetic10
    assert runs_page(experiment.experiment_id) in result.tracking


def test_improvement_is_also_a_percentage_and_the_best_test_is_linked(tmp_path: Path) -> None:
    result, client = _session(tmp_path)
    (session,) = _runs(client, "session")
    metrics = session.data.metrics
    assert metrics[keys.METRIC_IMPROVEMENT_PCT] == pytest.approx(
        100 * metrics[keys.METRIC_IMPROVEMENT]
    )
    best_run = session.data.tags[keys.TAG_BEST_RUN]
    best = client.get_run(best_run)
    assert best.data.tags[keys.TAG_TRIAL] == str(result.best.trial)
    assert session.data.tags[keys.TAG_BEST_TRIAL] == str(result.best.trial)
    assert best.data.tags[keys.TAG_IS_BEST] == "true"
    assert sum(keys.TAG_IS_BEST in t.data.tags for t in _runs(client, "test")) == 1
    assert best_run in session.data.tags[keys.TAG_NOTE]  # the description links to it


def test_a_test_run_spans_the_tests_own_wall_clock_time(tmp_path: Path) -> None:
    result, client = _session(tmp_path)
    stored = {o.trial: o for o in result.observations}
    for run in _runs(client, "test"):
        obs = stored[int(run.data.tags[keys.TAG_TRIAL])]
        assert run.info.start_time == int(obs.extra["started_at"] * 1000)
        assert run.info.end_time - run.info.start_time == int(obs.duration_s * 1000)


def test_a_resumed_session_moves_the_best_tag_to_its_new_best(tmp_path: Path) -> None:
    first, client = _session(tmp_path)
    overrides = [f"resume={first.directory}", "budget=40", f"results_dir={tmp_path}/results"]
    second = api.run(api.compose(overrides), overrides=overrides)
    assert second.best is not None and first.best is not None
    assert second.best.trial != first.best.trial  # (seed 0: the new best is a later test)
    (session,) = _runs(client, "session")
    flagged = [t for t in _runs(client, "test") if t.data.tags.get(keys.TAG_IS_BEST) == "true"]
    assert [t.data.tags[keys.TAG_TRIAL] for t in flagged] == [str(second.best.trial)]
    assert session.data.tags[keys.TAG_BEST_RUN] == flagged[0].info.run_id


def test_the_view_shows_at_most_thirty_knob_columns() -> None:
    view = json.loads(runs_view([f"k{i}" for i in range(50)]))
    assert sum(c.startswith("params.") for c in view["selectedColumns"]) == 30
