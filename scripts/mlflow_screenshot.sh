#!/usr/bin/env bash
# The README's MLflow screenshot (docs/images/mlflow_runs.png): two budget-30 sessions on the
# Tomcat surrogate (ClassyTune and BestConfig) into a fresh store, then the runs page the
# session summary links to, rendered by headless Chromium (python -m harness.tracking.ui_snapshot).
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
out=${1:-docs/images/mlflow_runs.png}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for tuner in bestconfig classytune; do
  "$py" -m harness tuner=$tuner system=surrogate_tomcat budget=30 results_dir="$tmp" \
    tracking.uri="sqlite:///$tmp/mlflow.db" session.progress=false > /dev/null
done
"$py" -m harness.tracking.ui_snapshot "sqlite:///$tmp/mlflow.db" --experiment 1 --png "$out"
