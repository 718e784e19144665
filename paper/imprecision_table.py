"""The imprecision-study table of results/REPORT.md, from the MLflow runs of its two sweeps.

Reads experiments ``imprecision`` (classytune_paper) and ``imprecision_best`` (classytune) from
the store, writes results/figures/data/imprecision.csv and prints the markdown table
(mean improvement over seeds [min-max] (seeds) per tuner, system and classifier).

    python -m paper.imprecision_table [sqlite:///results/experiments/mlflow.db]
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
from mlflow.tracking import MlflowClient

OUT = Path("results/figures/data/imprecision.csv")
CLASSIFIERS = ("xgboost", "decision_tree", "logistic")


def load(uri: str) -> pd.DataFrame:
    client = MlflowClient(tracking_uri=uri)
    rows = []
    for name in ("imprecision", "imprecision_best"):
        experiment = client.get_experiment_by_name(name)
        if experiment is None:
            continue
        runs = client.search_runs(
            [experiment.experiment_id],
            max_results=5000,
            filter_string=("tags.`harness.kind` = 'session' and attributes.status = 'FINISHED'"),
        )
        for run in runs:
            # both modes carry the tag 'classytune'; the best mode's config has a strategy
            ranked = run.data.params.get("tuner.strategy") == "ranked"
            rows.append(
                {
                    "tuner": "classytune (ranked best mode)" if ranked else "classytune_paper",
                    "system": run.data.tags["harness.system"],
                    "classifier": run.data.params.get("tuner.classifier"),
                    "seed": run.data.tags["harness.seed"],
                    "improvement": run.data.metrics.get("improvement"),
                }
            )
    return pd.DataFrame(rows).drop_duplicates(["tuner", "system", "classifier", "seed"])


def table(frame: pd.DataFrame) -> str:
    lines = [
        "| tuner | system | XGBoost | decision tree | logistic regression |",
        "|---|---|---|---|---|",
    ]
    for (tuner, system), group in frame.groupby(["tuner", "system"]):
        cells = []
        for name in CLASSIFIERS:
            values = group[group["classifier"] == name]["improvement"] * 100
            cells.append(
                f"{values.mean():+.1f}% [{values.min():.1f}–{values.max():.1f}] ({len(values)})"
            )
        lines.append(f"| {tuner} | {system} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    uri = sys.argv[1] if len(sys.argv) > 1 else "sqlite:///results/experiments/mlflow.db"
    frame = load(uri) if "--from-data" not in sys.argv else pd.read_csv(OUT)
    if "--from-data" not in sys.argv:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(OUT, index=False)
    print(table(frame))


if __name__ == "__main__":
    main()
