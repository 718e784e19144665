"""The MLflow UI, opened in headless Chromium on the link a session prints, shows the runs
table with the session's params and metrics on its first page (not MLflow 3's GenAI pages)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from harness import api
from harness.tracking.ui_snapshot import CHROMIUM, render, serve_ui

pytestmark = pytest.mark.skipif(
    not CHROMIUM, reason="no chromium: apt-get install chromium (scripts/setup.sh --full)"
)


def test_the_printed_link_opens_the_runs_table_with_params_and_metrics(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/mlflow.db"
    cfg = api.compose(
        [
            "system=synthetic10",
            "tuner=lhs",
            "budget=6",
            f"results_dir={tmp_path}/results",
            f"tracking.uri={store}",
            "session.progress=false",
            "session.name=ui-check",
        ]
    )
    result = api.run(cfg)
    page = re.search(r"http://127\.0\.0\.1:5000/(\S+)\)", result.tracking)
    assert page, result.tracking  # the summary tells where to look
    with serve_ui(store, tmp_path / "ui.log") as base:
        dom = render(f"{base}/{page.group(1)}")
    left = subprocess.run(["pgrep", "-f", "harness-chromium-"], capture_output=True, text=True)
    assert left.stdout == "", "a browser process outlived render()"
    columns = set(re.findall(r'col-id="([^"]+)"', dom))
    for wanted in (
        "metrics.`best_value`",
        "metrics.`improvement_pct`",
        "metrics.`objective`",
        "params.`buffer_pool_mb`",  # the first knob: on the first screen too
    ):
        assert wanted in columns, "\n".join(sorted(columns))
    assert "ui-check" in dom  # the session's run is a row of that table
    assert "Model training" in dom and "Token Usage" not in dom  # not the GenAI overview
