#!/bin/sh
# STAND-IN for Hadoop's sbin/start-dfs.sh (tests only): starts nothing. Records the call, writes a
# namenode log where HADOOP_LOG_DIR (from $HADOOP_CONF_DIR/hadoop-env.sh) says, marks "dfs" up.
set -eu
STANDIN_STATE=${STANDIN_STATE:-$(cd "$(dirname "$0")/../../.." && pwd)/state}
: "${STANDIN_STATE:?}" "${HADOOP_CONF_DIR:?}"
. "$HADOOP_CONF_DIR/hadoop-env.sh"
echo "start-dfs $HADOOP_CONF_DIR" >> "$STANDIN_STATE/calls"
mkdir -p "$HADOOP_LOG_DIR"
log="$HADOOP_LOG_DIR/hadoop-tester-namenode-node1.log"
echo "2024-03-05 10:10:01,512 INFO namenode: STARTUP_MSG: Starting namenode" >> "$log"
if [ -e "$STANDIN_STATE/namenode_fails" ]; then
  echo "2024-03-05 10:10:03,101 ERROR namenode: Failed to start namenode." >> "$log"
  echo "java.net.BindException: Port in use: 0.0.0.0:9870" >> "$log"
  echo "node1: ERROR: Cannot set priority of namenode process 41234" >&2
  exit 1
fi
echo "Starting namenodes on [node1]"
touch "$STANDIN_STATE/dfs_up"
