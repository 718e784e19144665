#!/bin/sh
# ycsb.sh: our launcher for a YCSB 0.17.0 install built by install.sh (YCSB's own bin/ycsb.sh is
# in its tarball, which we do not use). Same command-line shape as YCSB's:
#
#   ycsb.sh load|run cassandra-cql -P <workload file> [-p key=value ...] [-threads N] [-s] ...
#
# It runs YCSB's site.ycsb.Client with our Cassandra binding; every argument after the binding
# is passed to the Client unchanged (no re-splitting, no eval). JAVA_HOME picks the JVM and
# JAVA_OPTS adds JVM options, as with YCSB's script.
set -eu

usage() {
  echo "usage: ycsb.sh load|run cassandra-cql [YCSB Client options]" >&2
  exit 2
}

[ "$#" -ge 2 ] || usage
case "$1" in
  load) phase=-load ;;
  run) phase=-t ;;
  *) usage ;;
esac
case "$2" in
  cassandra-cql) db=org.classytune.ycsb.CassandraCqlClient ;;
  *)
    echo "ycsb.sh: unknown binding '$2': this install supports only cassandra-cql" >&2
    exit 2
    ;;
esac
shift 2

root=$(cd "$(dirname "$0")/.." && pwd -P)
java=java
if [ -n "${JAVA_HOME:-}" ]; then
  java="$JAVA_HOME/bin/java"
fi
# YCSB's own script runs from its install folder, and YCSB opens relative paths (-P
# workloads/workloada, export files) against the working directory: so do we, from any cwd.
cd "$root"
# JAVA_OPTS is split on blanks, as YCSB's script does, but never glob-expanded.
set -f
# slf4j-simple (the driver's logging): warnings and errors only, to stderr.
exec "$java" ${JAVA_OPTS:-} -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -cp "$root/lib/*:$root/cassandra-binding/lib/*" \
  site.ycsb.Client "$phase" -db "$db" "$@"
