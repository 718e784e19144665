#!/bin/sh
# STAND-IN for HiBench's micro/dfsioe hadoop/run-write.sh (tests only; the hyphenated name of
# some HiBench releases): appends a HadoopDfsioe-write report line and a TestDFSIOEnh result
# block in the real format (exec time from $STANDIN_STATE/dfsio_exec_s, default 80).
set -eu
HIBENCH_ROOT=$(cd "$(dirname "$0")/../../../../.." && pwd)
. "$HIBENCH_ROOT/standin-lib.sh"
echo "run dfsioe-write" >> "$STANDIN_STATE/calls"
folder="$report_dir/dfsioe/hadoop"
mkdir -p "$folder"
exec_s=$(cat "$STANDIN_STATE/dfsio_exec_s" 2>/dev/null || echo 80)
cat >> "$folder/result_write.txt" <<RESULT
----- TestDFSIO ----- : write
           Date & time: Tue Mar 05 10:51:12 UTC 2024
       Number of files: 16
Total MBytes processed: 4096
     Throughput mb/sec: 6.913232104121475
Average IO rate mb/sec: 7.0421442985534668
 IO rate std deviation: 0.9127441534018211
    Test exec time sec: $exec_s

-- Extended Metrics --   : write
Result file name         : $folder/throughput_write.csv
Sampling overhead        : 0.51%
Reference Start Time     : 1709635872004
0,16,16,16,0
Average of Aggregated Throughput : 101.84519071391547 mb/sec
              Standard Deviation : 41.62908118231404 mb/sec
   Time spots Counted in Average : .111. 

-- Result Analyse -- : 9s
RESULT
report_line HadoopDfsioe-write 4294967296 88.127 48735976 16245325
