#!/usr/bin/env bash
# The budget-100 ClassyTune sessions on real Hive (HiBench SQL Join) and real HDFS (TestDFSIO
# write) of issue 18, resumable across stops and machines: the session folder lives under
# results/long/<system>/ and is committed as it grows (its work folder, with the cluster's
# data, and its MLflow store are not), so a rerun on a fresh clone continues where the last one
# stopped (resume= replays the finished tests; the tables or files are made again first). The
# default is re-measured after every 10th test. Stop one with
#   pkill -INT -f "harness resume=results/long/<system>"   (or -f "session.name=long-<system>")
#   bash scripts/long_run_hadoop.sh hive      # start or continue the Hive join session
#   bash scripts/long_run_hadoop.sh hdfs      # start or continue the HDFS DFSIO session
# When a session stops, its samples are exported next to the other long runs.
set -uo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
system=${1:?usage: long_run_hadoop.sh hive|hdfs}
case $system in
  # 100k visits of 10k pages (~12 MB): the query's MapReduce jobs run ~1 min at the default.
  hive) workload=join settings=(workload.visits=100000) ;;
  # 4 files of 64 MB written by 4 map tasks.
  hdfs) workload=dfsio settings=(workload.files=4 workload.file_mb=64) ;;
  *) echo "long_run_hadoop.sh: hive or hdfs, not '$system'" >&2; exit 2 ;;
esac
name=long-$system-$workload-classytune-s0
root=results/long/$system
folder=$root/sessions/$name
if [ -f "$folder/session.json" ]; then
  "$py" -m harness resume="$folder" results_dir="$root" session.progress=false
else
  "$py" -m harness tuner=classytune system="$system" workload="$workload" budget=100 seed=0 \
    session.default_every=10 session.name="$name" results_dir="$root" session.progress=false \
    "${settings[@]}"
fi
code=$?
echo "== $system session exited with code $code"
if [ -f "$folder/samples.csv" ]; then
  cp "$folder/samples.csv" "results/long/${system}_${workload}_classytune_s0.csv"
  [ -f "$folder/references.jsonl" ] &&
    cp "$folder/references.jsonl" "results/long/${system}_${workload}_classytune_s0.references.jsonl"
fi
exit $code
