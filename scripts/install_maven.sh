#!/usr/bin/env bash
# Install a Java server or tool from Maven Central into a folder outside git.
#   bash scripts/install_maven.sh <folder with pom.xml> <install folder>
# The POM pins exact versions; its runtime dependencies go to <install>/lib, and the folder's
# layout/ (our launchers and conf templates: Central has jars, not the tarballs' bin/ and conf/)
# is copied beside them. Java sources of our own under src/ (a tool Central does not serve) are
# compiled against the POM's compile classpath into <install>/lib/<artifactId>-own.jar. <install>/INSTALLED records the POM's digest and every resolved
# artifact, and a rerun with the same POM and layout does nothing. Nothing is downloaded at
# test time: only this script talks to Maven.
set -euo pipefail
src=$(cd "$1" && pwd)
mkdir -p "$(dirname "$2")"
dest="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"  # absolute: mvn -f resolves from the POM
[ -f "$src/pom.xml" ] || { echo "install_maven: no pom.xml in $src" >&2; exit 2; }

digest=$( (cat "$src/pom.xml"; for d in layout src; do if [ -d "$src/$d" ]; then find "$src/$d" -type f | sort | xargs cat; fi; done) \
  | sha256sum | cut -c1-16)
if [ -f "$dest/INSTALLED" ] && head -1 "$dest/INSTALLED" | grep -q "digest $digest"; then
  echo "$dest: up to date ($(sed -n 2p "$dest/INSTALLED"))"
  exit 0
fi

tmp="$dest.tmp.$$"
trap 'rm -rf "$tmp" "$tmp.log"' EXIT
rm -rf "$tmp"
mkdir -p "$tmp/lib"
# Maven's output is kept for a failure only (its quiet mode still prints colour codes).
maven() {
  mvn -B -q -Dstyle.color=never -f "$src/pom.xml" "$@" > "$tmp.log" 2>&1 || {
    cat "$tmp.log" >&2
    echo "install_maven: mvn $1 failed for $src/pom.xml (is Maven Central reachable?)" >&2
    exit 1
  }
}
maven dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp/lib"
[ -d "$src/layout" ] && cp -a "$src/layout/." "$tmp/"
main=$(sed -n 's/.*<artifactId>\(.*\)<\/artifactId>.*/\1/p' "$src/pom.xml" | sed -n 2p)
if [ -d "$src/src" ]; then
  maven dependency:build-classpath -DincludeScope=compile -Dmdep.outputFile="$tmp/compile-classpath"
  mkdir -p "$tmp/classes"
  find "$src/src" -name '*.java' > "$tmp/sources"
  javac --release 17 -nowarn -d "$tmp/classes" -cp "$(cat "$tmp/compile-classpath")" @"$tmp/sources" \
    || { echo "install_maven: javac failed for $src/src" >&2; exit 1; }
  own=$(sed -n 's/.*<artifactId>\(.*\)<\/artifactId>.*/\1/p' "$src/pom.xml" | sed -n 1p)
  jar cf "$tmp/lib/$own-own.jar" -C "$tmp/classes" .
  rm -rf "$tmp/classes" "$tmp/sources" "$tmp/compile-classpath"
fi
# What resolved, for the record (the probe the system READMEs quote).
maven dependency:list -DincludeScope=runtime -DoutputFile="$tmp/resolved.txt"
version=$(ls "$tmp/lib" | sed -n "s/^$main-\(.*\)\.jar$/\1/p" | head -1)
if [ -z "$version" ] && [ -n "${own:-}" ]; then  # only our own sources: name those
  main=$own version=$(sed -n 's/^  <version>\(.*\)<\/version>/\1/p' "$src/pom.xml" | head -1)
fi
{
  echo "digest $digest of $src"
  echo "$main $version, $(ls "$tmp/lib" | wc -l) jars"
  grep -E '^\s+[a-z]' "$tmp/resolved.txt" | sed -e "s/^ *//" -e "s/ -- module.*//" | sort
} > "$tmp/INSTALLED"
rm -f "$tmp/resolved.txt" "$tmp.log"
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
echo "$dest: installed ($(sed -n 2p "$dest/INSTALLED"))"
