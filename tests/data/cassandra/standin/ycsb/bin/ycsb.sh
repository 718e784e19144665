#!/bin/sh
# STAND-IN for YCSB's bin/ycsb.sh (tests only; see ../../README.md): records its arguments and
# prints the canned result file out-<phase>.txt of the stand-in install.
here=$(cd "$(dirname "$0")/.." && pwd)
echo "$@" >> "$here/args-$1.txt"
cat "$here/out-$1.txt"
