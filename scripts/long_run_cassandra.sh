#!/usr/bin/env bash
# The budget-100 ClassyTune session on real Cassandra 5.0 (issue 17), resumable across stops and
# machines: the session folder lives under results/long/cassandra/ and is committed as it grows
# (only its data copies, logs and MLflow store are not), so a rerun of this script on a fresh
# clone continues where the last one stopped (resume= replays the finished tests; the data set
# is loaded again first). The default is re-measured after every 10th test.
#   bash scripts/long_run_cassandra.sh          # start or continue
# When the session has finished, the samples are exported next to the other long runs.
set -uo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
name=long-cassandra-ycsb_a-classytune-s0
root=results/long/cassandra
folder=$root/sessions/$name
if [ -f "$folder/session.json" ]; then
  "$py" -m harness resume="$folder" results_dir="$root" session.progress=false
else
  # One node, 100k records (~110 MB), 32 client threads, a 10 s warm-up and a 30 s run per test.
  "$py" -m harness tuner=classytune system=cassandra workload=ycsb_a budget=100 seed=0 \
    session.default_every=10 session.name=$name results_dir="$root" session.progress=false \
    workload.recordcount=100000 workload.duration_s=30 workload.warmup_s=10
fi
code=$?
echo "== cassandra session exited with code $code"
if [ -f "$folder/samples.csv" ]; then
  cp "$folder/samples.csv" results/long/cassandra_ycsb_a_classytune_s0.csv
  [ -f "$folder/references.jsonl" ] &&
    cp "$folder/references.jsonl" results/long/cassandra_ycsb_a_classytune_s0.references.jsonl
fi
exit $code
