#!/usr/bin/env bash
# Budget-100 ClassyTune sessions on the three JVM systems (issue 6), one after the other.
# Each re-measures the default every 10 tests (session.default_every=10) because this 2-core
# machine's load drifts during a session; the summary compares the best with the nearest default.
#   bash scripts/long_runs_jvm.sh [tomcat|mapreduce|spark ...]
set -uo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
systems=("$@")
[ ${#systems[@]} -eq 0 ] && systems=(tomcat mapreduce spark)
for sys in "${systems[@]}"; do
  case $sys in
    tomcat) workload=explore ;;
    mapreduce) workload=wordcount ;;
    spark) workload=pagerank ;;
    *) echo "unknown system $sys" >&2; exit 2 ;;
  esac
  name=long-$sys-$workload-classytune-s0
  if [ -d "results/sessions/$name" ]; then
    "$py" -m harness resume="results/sessions/$name" session.progress=false
  else
    "$py" -m harness tuner=classytune system=$sys workload=$workload budget=100 seed=0 \
      session.default_every=10 session.name=$name session.progress=false
  fi
  echo "== $sys finished with exit code $?"
done
