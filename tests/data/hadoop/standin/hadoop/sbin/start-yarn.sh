#!/bin/sh
# STAND-IN for Hadoop's sbin/start-yarn.sh (tests only): starts nothing. Records the call, writes a
# resourcemanager log where HADOOP_LOG_DIR (from $HADOOP_CONF_DIR/hadoop-env.sh) says, registers
# the ResourceManager and a NodeManager per line of $HADOOP_CONF_DIR/workers.
set -eu
HADOOP_HOME=$(cd "$(dirname "$0")/.." && pwd)
. "$HADOOP_HOME/libexec/standin-lib.sh"
: "${HADOOP_CONF_DIR:?}"
. "$HADOOP_CONF_DIR/hadoop-env.sh"
echo "start-yarn $HADOOP_CONF_DIR" >> "$STANDIN_STATE/calls"
mkdir -p "$HADOOP_LOG_DIR"
log="$HADOOP_LOG_DIR/hadoop-tester-resourcemanager-node1.log"
echo "2024-03-05 10:10:01,512 INFO resourcemanager: STARTUP_MSG: Starting resourcemanager" >> "$log"
if [ -e "$STANDIN_STATE/resourcemanager_fails" ]; then
  echo "2024-03-05 10:10:03,101 ERROR resourcemanager: Failed to start resourcemanager." >> "$log"
  echo "java.net.BindException: Port in use: 0.0.0.0:9870" >> "$log"
  echo "node1: ERROR: Cannot set priority of resourcemanager process 41234" >&2
  exit 1
fi
echo "Starting resourcemanagers on [node1]"
sbin_register resourcemanager nodemanager
