#!/bin/sh
# cqlexec.sh: runs CQL statements against Cassandra, in place of cqlsh (not on Maven Central):
#
#   cqlexec.sh <host> <port> <timeout_s> "<statement>; <statement>; ..."
#
# One output line per statement that succeeded; exit 0 if all did, else 1 with the error on
# stderr (a wrong argument count included). See org.classytune.ycsb.CqlExec.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd -P)
java=java
if [ -n "${JAVA_HOME:-}" ]; then
  java="$JAVA_HOME/bin/java"
fi
# slf4j-simple (the driver's logging): warnings and errors only, to stderr.
exec "$java" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -cp "$root/lib/*:$root/cassandra-binding/lib/*" \
  org.classytune.ycsb.CqlExec "$@"
