#!/bin/sh
# STAND-IN for Hadoop's sbin/stop-dfs.sh (tests only): records the call, marks "dfs" down.
set -eu
STANDIN_STATE=${STANDIN_STATE:-$(cd "$(dirname "$0")/../../.." && pwd)/state}
: "${STANDIN_STATE:?}" "${HADOOP_CONF_DIR:?}"
echo "stop-dfs $HADOOP_CONF_DIR" >> "$STANDIN_STATE/calls"
echo "Stopping namenodes"
rm -f "$STANDIN_STATE/dfs_up"
