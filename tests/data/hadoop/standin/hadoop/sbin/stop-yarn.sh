#!/bin/sh
# STAND-IN for Hadoop's sbin/stop-yarn.sh (tests only): records the call, marks "yarn" down.
set -eu
STANDIN_STATE=${STANDIN_STATE:-$(cd "$(dirname "$0")/../../.." && pwd)/state}
: "${STANDIN_STATE:?}" "${HADOOP_CONF_DIR:?}"
echo "stop-yarn $HADOOP_CONF_DIR" >> "$STANDIN_STATE/calls"
echo "Stopping resourcemanager"
rm -f "$STANDIN_STATE/yarn_up"
