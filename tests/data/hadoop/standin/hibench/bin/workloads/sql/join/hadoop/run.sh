#!/bin/sh
# STAND-IN for HiBench's sql/join hadoop/run.sh (tests only): checks the environment the
# adapter passes (our Hadoop and Hive conf folders), then plays a Hive join: prints Hive-like
# output and appends a HadoopJoin line to hibench.report. Switch files in $STANDIN_STATE:
# join_exit (exit with that code, bench.log written), join_hive_fails (Hive's FAILED: line, exit
# 0 and a report line anyway, as real HiBench), join_no_report, join_duration.
set -eu
HIBENCH_ROOT=$(cd "$(dirname "$0")/../../../../.." && pwd)
. "$HIBENCH_ROOT/standin-lib.sh"
: "${HIVE_CONF_DIR:?}"
[ -f "$HADOOP_CONF_DIR/mapred-site.xml" ] || { echo "no mapred-site.xml in $HADOOP_CONF_DIR" >&2; exit 3; }
[ -f "$HIVE_CONF_DIR/hive-site.xml" ] || { echo "no hive-site.xml in $HIVE_CONF_DIR" >&2; exit 3; }
echo "join conf $HADOOP_CONF_DIR $(conf_value hibench.hadoop.configure.dir)" >> "$STANDIN_STATE/calls"
echo "run join $(conf_value hibench.scale.profile) maps=$(conf_value hibench.default.map.parallelism) reduces=$(conf_value hibench.default.shuffle.parallelism)" >> "$STANDIN_STATE/calls"
folder="$report_dir/join/hadoop"
mkdir -p "$folder"
echo "start HadoopJoin bench"
if [ -e "$STANDIN_STATE/join_exit" ]; then
  printf 'Exception in thread "main" java.io.IOException: Cannot initialize Cluster.\n\tat org.apache.hadoop.mapreduce.Cluster.initialize(Cluster.java:116)\n' > "$folder/bench.log"
  exit "$(cat "$STANDIN_STATE/join_exit")"
fi
echo "Total jobs = 2"
if [ -e "$STANDIN_STATE/join_hive_fails" ]; then
  echo "Ended Job = job_1709634000000_0004 with errors"
  echo "FAILED: Execution Error, return code 2 from org.apache.hadoop.hive.ql.exec.mr.MapRedTask"
fi
if [ ! -e "$STANDIN_STATE/join_no_report" ]; then
  duration=$(cat "$STANDIN_STATE/join_duration" 2>/dev/null || echo 58.417)
  report_line HadoopJoin 1922108460 "$duration" 32903168 10967722
fi
echo "finish HadoopJoin bench"
