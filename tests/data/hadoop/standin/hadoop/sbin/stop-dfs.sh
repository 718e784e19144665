#!/bin/sh
# STAND-IN for Hadoop's sbin/stop-dfs.sh (tests only): records the call, unregisters HDFS.
set -eu
HADOOP_HOME=$(cd "$(dirname "$0")/.." && pwd)
. "$HADOOP_HOME/libexec/standin-lib.sh"
: "${HADOOP_CONF_DIR:?}"
echo "stop-dfs $HADOOP_CONF_DIR" >> "$STANDIN_STATE/calls"
echo "Stopping namenodes"
rm -f "$LIVE"/namenode-* "$LIVE"/datanode-*
