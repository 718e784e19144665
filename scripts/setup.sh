#!/usr/bin/env bash
# Set up ClassyTune Harness in ./.venv.
#   bash scripts/setup.sh          core install: enough for the embedded SQLite default,
#                                  the synthetic systems and the surrogates (extras: ui, plot,
#                                  remote, drivers, peers, spark, parallel; pyproject.toml)
#   bash scripts/setup.sh --full   every extra, and the real servers (Debian packages, root/sudo;
#                                  Cassandra and YCSB from Maven Central into .installs/),
#                                  Spark, the peer tuners and the test tools (Chromium for
#                                  the MLflow UI test and screenshot; slurm-wlm, slurmdbd + munge
#                                  for the Slurm sweep tests)
set -euo pipefail
cd "$(dirname "$0")/.."
full=false
[ "${1:-}" = "--full" ] && full=true

if $full; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -q
  $sudo_cmd apt-get install -y -q --no-install-recommends \
    postgresql postgresql-client mariadb-server mariadb-client sysbench \
    tomcat10 wrk curl default-jdk-headless maven openssh-server strace iproute2 procps \
    util-linux chromium slurm-wlm slurmdbd munge
fi

python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip
# The locked packages, each checked against its hashes (locks/, made by scripts/lock.sh),
# then this project on top of them; pip check fails when pyproject.toml asks for something
# the lock lacks (regenerate the lock).
lock=locks/core.txt
$full && lock=locks/full.txt
.venv/bin/pip install -q --require-hashes -r "$lock"
.venv/bin/pip install -q --no-deps -e .
.venv/bin/pip check
# --full has every extra (dev, spark, peers, ui, plot, remote, drivers: scripts/lock.sh).
# Not torch: Optuna's GP sampler (tuner=optuna_gp) needs it, but PyPI's Linux wheel pulls
# ~4 GB of CUDA libraries. It stays opt-in (`pip install torch`), and its tests skip here.
if $full; then
  # Java servers and tools that Debian lacks, from Maven Central (pinned POMs; a rerun with
  # unchanged POMs does nothing). HARNESS_INSTALLS moves them out of the clone.
  installs="${HARNESS_INSTALLS:-.installs}"
  bash scripts/install_maven.sh systems/cassandra/java/server "$installs/cassandra"
  bash systems/cassandra/java/ycsb/install.sh "$installs/ycsb"
  # Hadoop 3.4 (HDFS, YARN, MapReduce, TestDFSIO, TeraSort) for system=hdfs and system=hive,
  # Hive 4.1 (HiveQL on MapReduce, metastore on Derby) and our PageRank/KMeans jobs for
  # system=hive.
  bash scripts/install_maven.sh systems/hadoop/java/hadoop "$installs/hadoop"
  bash scripts/install_maven.sh systems/hadoop/java/hive "$installs/hive"
  bash scripts/install_maven.sh systems/hadoop/java/jobs "$installs/hadoop-jobs"
  # Reports catalogue keys this Cassandra renamed or removed (a test fails on them too).
  .venv/bin/python -m systems.cassandra.catalogue_check "$installs/cassandra" || true
fi
echo "ready: .venv/bin/python -m harness --help"
