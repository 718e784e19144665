#!/bin/sh
# install.sh DEST: builds our YCSB Cassandra binding (pom.xml beside this script) and lays out a
# YCSB 0.17.0 client install in DEST, shaped like YCSB's own distribution:
#
#   DEST/bin/ycsb.sh, DEST/bin/cqlexec.sh    launchers
#   DEST/lib/                                YCSB core, the Cassandra driver, their dependencies
#   DEST/cassandra-binding/lib/              our binding's jar
#   DEST/workloads/workloada                 YCSB's workload A
#   DEST/INSTALLED                           "name version" of what was installed
#
# Everything comes from Maven Central through mvn. DEST is built as DEST.tmp and then swapped in,
# so a rerun replaces an install whole and a failed one leaves the previous install in place.
set -eu

if [ "$#" -ne 1 ]; then
  echo "usage: install.sh DEST" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd -P)
case "$1" in
  /*) dest=$1 ;;
  *) dest=$(pwd -P)/$1 ;; # absolute: mvn resolves relative paths against the POM's folder
esac
dest=${dest%/}
tmp=$dest.tmp
build=$tmp/.build # Maven's build folder: outside the source tree, dropped at the end

rm -rf "$tmp"
mkdir -p "$tmp/bin" "$tmp/lib" "$tmp/cassandra-binding/lib" "$tmp/workloads"
mvn -B -q -f "$here/pom.xml" -Dharness.build.dir="$build" \
  package \
  dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp/lib" \
  dependency:list@installed

jar=$(ls "$build"/harness-ycsb-cassandra-*.jar)
cp "$jar" "$tmp/cassandra-binding/lib/"
cp "$here/bin/ycsb.sh" "$here/bin/cqlexec.sh" "$tmp/bin/"
chmod 755 "$tmp/bin/ycsb.sh" "$tmp/bin/cqlexec.sh"
cp "$here/workloads/workloada" "$tmp/workloads/"

# INSTALLED: our binding, then the direct dependencies as Maven resolved them, one
# "groupId:artifactId version" a line (dependency:list prints "g:a:jar:version:scope ...").
version=${jar##*/harness-ycsb-cassandra-}
{
  echo "org.classytune:harness-ycsb-cassandra ${version%.jar}"
  sed -n 's/^ *\([^: ]*\):\([^: ]*\):jar:\([^: ]*\):.*/\1:\2 \3/p' "$build/dependencies.txt"
} >"$tmp/INSTALLED"
rm -rf "$build"

rm -rf "$dest.old"
if [ -e "$dest" ]; then
  mv "$dest" "$dest.old"
fi
mv "$tmp" "$dest"
rm -rf "$dest.old"
echo "installed YCSB in $dest"
