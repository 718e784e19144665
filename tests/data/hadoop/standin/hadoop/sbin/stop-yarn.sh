#!/bin/sh
# STAND-IN for Hadoop's sbin/stop-yarn.sh (tests only): records the call, unregisters YARN.
set -eu
HADOOP_HOME=$(cd "$(dirname "$0")/.." && pwd)
. "$HADOOP_HOME/libexec/standin-lib.sh"
: "${HADOOP_CONF_DIR:?}"
echo "stop-yarn $HADOOP_CONF_DIR" >> "$STANDIN_STATE/calls"
echo "Stopping resourcemanager"
rm -f "$LIVE"/resourcemanager-* "$LIVE"/nodemanager-*
