# STAND-IN helper for the HiBench stand-in scripts (tests only): reads HiBench's *.conf files
# from $HIBENCH_CONF_FOLDER in name order (later files win), as HiBench's load_config.py does.
# State: $STANDIN_STATE, by default <folder holding the installs>/../state.
STANDIN_STATE=${STANDIN_STATE:-$(cd "$HIBENCH_ROOT/../.." && pwd)/state}
: "${HIBENCH_CONF_FOLDER:?}" "${HADOOP_CONF_DIR:?}"
conf_value() {
  for f in $(ls "$HIBENCH_CONF_FOLDER"/*.conf | sort); do cat "$f"; echo; done |
    awk -v k="$1" '$1 == k { v = $0; sub(/^[^ \t]+[ \t]+/, "", v) } END { print v }'
}
# HDFS is "up" when the Hadoop stand-in registered a NameNode (its libexec/standin-lib.sh).
hdfs_up() {
  for f in "$STANDIN_STATE"/live/namenode-*; do [ -f "$f" ] && return 0; done
  return 1
}
report_dir=$(conf_value hibench.report.dir | sed "s|\${hibench.home}|$HIBENCH_ROOT|")
report="$report_dir/hibench.report"
fmt='%-12s %-10s %-8s %-20s %-20s %-20s %-20s\n'
report_line() {  # type size duration throughput per-node
  mkdir -p "$report_dir"
  [ -f "$report" ] || printf "$fmt" Type Date Time Input_data_size 'Duration(s)' 'Throughput(bytes/s)' Throughput/node > "$report"
  printf "$fmt" "$1" "$(date +%F)" "$(date +%T)" "$2" "$3" "$4" "$5" >> "$report"
}
