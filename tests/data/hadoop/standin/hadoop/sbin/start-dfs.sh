#!/bin/sh
# STAND-IN for Hadoop's sbin/start-dfs.sh (tests only): starts nothing. Records the call, writes a
# namenode log where HADOOP_LOG_DIR (from $HADOOP_CONF_DIR/hadoop-env.sh) says, registers the
# NameNode and a DataNode per line of $HADOOP_CONF_DIR/workers (see libexec/standin-lib.sh).
set -eu
HADOOP_HOME=$(cd "$(dirname "$0")/.." && pwd)
. "$HADOOP_HOME/libexec/standin-lib.sh"
: "${HADOOP_CONF_DIR:?}"
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
sbin_register namenode datanode
