#!/bin/sh
# STAND-IN for HiBench's micro/dfsioe prepare.sh (tests only).
set -eu
HIBENCH_ROOT=$(cd "$(dirname "$0")/../../../../.." && pwd)
. "$HIBENCH_ROOT/standin-lib.sh"
hdfs_up || { echo "ERROR: HDFS is not running" >&2; exit 1; }
echo "prepare dfsioe $(conf_value hibench.scale.profile)" >> "$STANDIN_STATE/calls"
