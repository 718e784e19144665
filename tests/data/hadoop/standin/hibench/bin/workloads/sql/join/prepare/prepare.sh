#!/bin/sh
# STAND-IN for HiBench's sql/join prepare.sh (tests only): needs HDFS "up", records the call.
set -eu
HIBENCH_ROOT=$(cd "$(dirname "$0")/../../../../.." && pwd)
. "$HIBENCH_ROOT/standin-lib.sh"
hdfs_up || { echo "ERROR: HDFS is not running" >&2; exit 1; }
echo "prepare join $(conf_value hibench.scale.profile) $(conf_value hibench.hdfs.master)" >> "$STANDIN_STATE/calls"
echo "start HadoopPrepareJoin bench"
