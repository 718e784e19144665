# STAND-IN helper of the Hadoop stand-in scripts (tests only), sourced with HADOOP_HOME set.
# State: $STANDIN_STATE, by default the `state` folder next to the folder holding the installs.
# $STANDIN_STATE/live has one file per "running" daemon, <daemon>-<node>, holding its pid (a
# `sleep` started by `--daemon start`) or "sbin" (registered by the sbin scripts, no process);
# the health commands answer from it. Every pid started is also appended to daemon_pids.
STANDIN_STATE=${STANDIN_STATE:-$(cd "$HADOOP_HOME/../.." && pwd)/state}
LIVE="$STANDIN_STATE/live"
mkdir -p "$LIVE"

alive() {  # <file holding a pid or "sbin">
  [ -f "$1" ] || return 1
  pid=$(cat "$1")
  [ "$pid" = sbin ] && return 0
  [ -n "$pid" ] && kill -0 "$pid" 2> /dev/null
}

live_nodes() {  # <daemon>: the nodes it runs on, one a line
  for f in "$LIVE/$1"-*; do
    name=${f##*/}
    if alive "$f"; then echo "${name#"$1"-}"; fi
  done
}

prop() {  # <name> <site file>: the value the adapter rendered into $HADOOP_CONF_DIR
  sed -n "s|.*<name>$1</name><value>\([^<]*\)</value>.*|\1|p" "$HADOOP_CONF_DIR/$2"
}

# The node a configuration folder belongs to: <data_root>/<node address>/conf.
conf_node() { basename "$(dirname "$HADOOP_CONF_DIR")"; }

daemon_control() {  # <tool> <start|stop|status> <daemon>: Hadoop 3's `--daemon`
  tool=$1 action=$2 daemon=$3
  case "$tool:$daemon" in
    hdfs:namenode | hdfs:datanode | yarn:resourcemanager | yarn:nodemanager) ;;
    *) echo "stand-in $tool: '$daemon' is not a daemon" >&2; exit 1 ;;
  esac
  # shellcheck disable=SC1091
  . "$HADOOP_CONF_DIR/hadoop-env.sh"
  : "${HADOOP_LOG_DIR:?hadoop-env.sh sets no HADOOP_LOG_DIR}" "${HADOOP_PID_DIR:?no HADOOP_PID_DIR}"
  node=$(conf_node)
  pid_file="$HADOOP_PID_DIR/hadoop-$(id -un)-$daemon.pid"
  log="$HADOOP_LOG_DIR/hadoop-$(id -un)-$daemon-$node.log"
  case $action in
    status)
      if alive "$pid_file"; then echo "$daemon is running as process $(cat "$pid_file")."; exit 0; fi
      echo "$daemon is stopped."
      exit 1 ;;
    stop)
      echo "$tool --daemon stop $daemon $node" >> "$STANDIN_STATE/calls"
      if alive "$pid_file"; then kill "$(cat "$pid_file")"; else echo "no $daemon to stop"; fi
      rm -f "$pid_file" "$LIVE/$daemon-$node"
      exit 0 ;;
    start) ;;
    *) echo "usage: $tool --daemon start|stop|status <daemon>" >&2; exit 1 ;;
  esac
  case $daemon in  # where the node's site files say it serves
    datanode) at=" $(prop dfs.datanode.address hdfs-site.xml)" ;;
    nodemanager) at=" $(prop yarn.nodemanager.address yarn-site.xml)" ;;
    *) at="" ;;
  esac
  echo "$tool --daemon start $daemon $node$at" >> "$STANDIN_STATE/calls"
  if alive "$pid_file"; then
    echo "$daemon is running as process $(cat "$pid_file").  Stop it first and ensure $pid_file file is empty before retry." >&2
    exit 1
  fi
  mkdir -p "$HADOOP_LOG_DIR" "$HADOOP_PID_DIR"
  echo "2024-03-05 10:10:01,512 INFO $daemon: STARTUP_MSG: Starting $daemon" >> "$log"
  problem=""
  # Switch <daemon>_fails: empty fails the daemon on every node, else on the node it names.
  if [ -e "$STANDIN_STATE/${daemon}_fails" ]; then
    only=$(cat "$STANDIN_STATE/${daemon}_fails")
    if [ -z "$only" ] || [ "$only" = "$node" ]; then
      problem="java.net.BindException: Port in use: 0.0.0.0:9870"
    fi
  fi
  if [ "$daemon" = namenode ]; then
    dir=$(prop dfs.namenode.name.dir hdfs-site.xml)
    [ -f "${dir#file://}/current/VERSION" ] || problem="java.io.IOException: NameNode is not formatted."
  fi
  if [ -n "$problem" ]; then
    echo "2024-03-05 10:10:03,101 ERROR $daemon: Failed to start $daemon." >> "$log"
    echo "$problem" >> "$log"
    echo "ERROR: $daemon failed to start; tail of $log:" >&2
    tail -n 2 "$log" >&2
    exit 1
  fi
  STANDIN_DAEMON="$STANDIN_STATE" sleep 600 < /dev/null > /dev/null 2>&1 &
  echo $! > "$pid_file"
  echo $! >> "$STANDIN_STATE/daemon_pids"
  echo $! > "$LIVE/$daemon-$node"
  exit 0
}

sbin_register() {  # <master daemon> <worker daemon>: what start-dfs.sh / start-yarn.sh start
  echo sbin > "$LIVE/$1-$(conf_node)"
  while read -r worker; do
    [ -n "$worker" ] && echo sbin > "$LIVE/$2-$worker"
  done < "$HADOOP_CONF_DIR/workers"
  return 0
}
