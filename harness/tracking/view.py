"""How the MLflow UI opens a harness experiment: on its runs table, with the harness's columns.

MLflow 3's UI opens an experiment on its GenAI pages (traces, tokens, an assistant) unless told
otherwise, and its runs table shows no params or metrics until columns are added by hand. Two
things the UI itself reads fix that without touching the user's browser:

* the experiment tag ``mlflow.experimentKind`` set to a classic kind (the UI's own selector
  writes the same tag), and the page link carries ``workflowType=machine_learning``;
* a *shared view* (what the UI's "share" writes: an experiment tag
  ``mlflow.sharedViewState.<key>`` holding the table's state as JSON), opened by the link's
  ``viewStateShareKey``, selects the session columns (best value, improvement in %) and the
  test columns (objective, knobs, status), newest session first. (Which rows are expanded is
  the browser's own state, which a shared view does not carry: a session's tests open with its
  ``+``.)

The link is what :meth:`harness.tracking.mlflow_tracker.MlflowTracker.where` prints and the README
shows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from harness.tracking import keys

__all__ = [
    "CLASSIC_KIND",
    "EXPERIMENT_KIND_TAG",
    "VIEW_KEY",
    "best_run_note",
    "runs_page",
    "runs_view",
    "view_tag",
]

EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
CLASSIC_KIND = "custom_model_development"  # "Model training" in the UI's kind selector
VIEW_KEY = "harness-runs"
_VIEW_TAG_PREFIX = "mlflow.sharedViewState."
#: knob columns beyond this many make the table unreadable; the rest are one click away
MAX_KNOB_COLUMNS = 30

# The UI draws metric columns first, then params, then tags; the first screen (1600 px, with
# the assistant panel open) holds about a dozen columns, so the session gets three metrics,
# a test one, and the knobs follow.
_METRIC_COLUMNS = (
    keys.METRIC_BEST,
    keys.METRIC_IMPROVEMENT_PCT,
    keys.METRIC_IMPROVEMENT_CONFIRMED_PCT,
    keys.METRIC_OBJECTIVE,
)
_TAG_COLUMNS = (keys.TAG_TUNER, keys.TAG_STATUS)


def view_tag() -> str:
    """The experiment tag that holds the harness's runs view."""
    return f"{_VIEW_TAG_PREFIX}{VIEW_KEY}"


def _column(kind: str, name: str) -> str:
    # the UI's own column ids: metrics.`name`, params.`name`, tags.`name`
    return f"{kind}.`{name}`"


def runs_view(knobs: Sequence[str]) -> str:
    """The runs table's state as the UI stores a shared view: selected columns, newest first."""
    columns = [
        *(_column("metrics", m) for m in _METRIC_COLUMNS),
        *(_column("params", k) for k in list(knobs)[:MAX_KNOB_COLUMNS]),
        *(_column("tags", t) for t in _TAG_COLUMNS),
    ]
    state = {
        "selectedColumns": columns,
        "orderByKey": "attributes.start_time",
        "orderByAsc": False,
    }
    return json.dumps(state, sort_keys=True)


def runs_page(experiment_id: str) -> str:
    """The UI route (after ``http://host:port/``) of an experiment's runs table in that view."""
    return (
        f"#/experiments/{experiment_id}/runs"
        f"?viewStateShareKey={VIEW_KEY}&workflowType=machine_learning"
    )


def best_run_note(experiment_id: str, run_id: str, trial: int, value: float | None) -> str:
    """The session run's description (markdown): which test was best, linked to its run."""
    shown = "" if value is None else f" ({keys.METRIC_OBJECTIVE} {value:.6g})"
    return (
        f"Best test: trial {trial}{shown}, "
        f"[run {run_id[:8]}](#/experiments/{experiment_id}/runs/{run_id}). "
        f"Its configuration: the `{keys.PREFIX_BEST}*` tags and `{keys.ARTIFACT_BEST_CONFIG}`."
    )
