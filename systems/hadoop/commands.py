"""Pure builders of the Hadoop and HiBench command lines (argument lists, never shell strings).

Every path is checked by :func:`~systems.hadoop.render.check_path` and every name by a strict
pattern before it enters a command, so neither a host name, a path nor a workload name can
carry shell syntax — locally the argv goes to the OS as is, remotely the SSH executor quotes
each part. The daemons are driven through the standard scripts: ``sbin/start-dfs.sh`` and
``start-yarn.sh`` on the master (they ssh to the hosts in ``$HADOOP_CONF_DIR/workers``), and
health through ``hdfs dfsadmin`` and ``yarn node``.
"""

from __future__ import annotations

import re

from harness.errors import ConfigError
from systems.hadoop.render import check_path

__all__ = [
    "SCALE_PROFILES",
    "dfsadmin_report",
    "format_namenode",
    "hadoop_env",
    "hibench_prepare",
    "hibench_run",
    "safemode_wait",
    "sbin",
    "start_commands",
    "stop_commands",
    "yarn_node_list",
]

SBIN_SCRIPTS = ("start-dfs.sh", "start-yarn.sh", "stop-dfs.sh", "stop-yarn.sh")
#: HiBench's data scale profiles (conf/hibench.conf: hibench.scale.profile).
SCALE_PROFILES = ("tiny", "small", "large", "huge", "gigantic", "bigdata")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_SCRIPT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\.sh$")


def hadoop_env(conf_dir: str, java_home: str | None = None) -> dict[str, str]:
    """Environment of every Hadoop command: our configuration folder (and JAVA_HOME)."""
    env = {"HADOOP_CONF_DIR": check_path(conf_dir, "conf_dir")}
    if java_home:
        env["JAVA_HOME"] = check_path(java_home, "system.adapter.java_home")
    return env


def sbin(hadoop_home: str, script: str) -> list[str]:
    """One of the standard start/stop scripts (run on the master with HADOOP_CONF_DIR)."""
    if script not in SBIN_SCRIPTS:
        raise ValueError(f"not a Hadoop sbin script we run: {script!r}")
    return [f"{check_path(hadoop_home, 'system.adapter.hadoop_home')}/sbin/{script}"]


def start_commands(hadoop_home: str) -> list[list[str]]:
    """HDFS first (YARN's NodeManagers localize job files from it), then YARN."""
    return [sbin(hadoop_home, "start-dfs.sh"), sbin(hadoop_home, "start-yarn.sh")]


def stop_commands(hadoop_home: str) -> list[list[str]]:
    """The reverse of :func:`start_commands`."""
    return [sbin(hadoop_home, "stop-yarn.sh"), sbin(hadoop_home, "stop-dfs.sh")]


def _tool(hadoop_home: str, tool: str, conf_dir: str, *args: str) -> list[str]:
    home = check_path(hadoop_home, "system.adapter.hadoop_home")
    return [f"{home}/bin/{tool}", "--config", check_path(conf_dir, "conf_dir"), *args]


def safemode_wait(hadoop_home: str, conf_dir: str) -> list[str]:
    """Blocks until the NameNode leaves safe mode (prints ``Safe mode is OFF``)."""
    return _tool(hadoop_home, "hdfs", conf_dir, "dfsadmin", "-safemode", "wait")


def dfsadmin_report(hadoop_home: str, conf_dir: str) -> list[str]:
    """Capacity and the live/dead DataNodes (parsed by parse.parse_dfsadmin_report)."""
    return _tool(hadoop_home, "hdfs", conf_dir, "dfsadmin", "-report")


def format_namenode(hadoop_home: str, conf_dir: str) -> list[str]:
    """Format a new NameNode; ``-nonInteractive`` refuses to touch an existing one."""
    return _tool(hadoop_home, "hdfs", conf_dir, "namenode", "-format", "-nonInteractive")


def yarn_node_list(hadoop_home: str, conf_dir: str) -> list[str]:
    """Every NodeManager with its state (``-all``: unhealthy and lost ones too)."""
    return _tool(hadoop_home, "yarn", conf_dir, "node", "-list", "-all")


def yarn_node_status(hadoop_home: str, conf_dir: str, node_id: str) -> list[str]:
    """One NodeManager's report (its ``Health-Report`` says why it is UNHEALTHY)."""
    if not re.fullmatch(r"[A-Za-z0-9.-]+:\d+", node_id):
        raise ValueError(f"not a YARN node id: {node_id!r}")
    return _tool(hadoop_home, "yarn", conf_dir, "node", "-status", node_id)


def _check_name(value: str, what: str) -> str:
    if not isinstance(value, str) or not _NAME.match(value):
        raise ConfigError(
            f"{what} {value!r} must be lower-case letters, digits and '_' "
            "(a HiBench folder name such as sql, join, micro, dfsioe)"
        )
    return value


def _workload_dir(hibench_home: str, category: str, name: str) -> str:
    home = check_path(hibench_home, "system.adapter.hibench_home")
    return (
        f"{home}/bin/workloads/{_check_name(category, 'HiBench category')}/"
        f"{_check_name(name, 'HiBench workload')}"
    )


def hibench_prepare(hibench_home: str, category: str, name: str) -> list[str]:
    """``bin/workloads/<category>/<name>/prepare/prepare.sh``: generates the input on HDFS."""
    return [f"{_workload_dir(hibench_home, category, name)}/prepare/prepare.sh"]


def hibench_run(hibench_home: str, category: str, name: str, script: str = "run.sh") -> list[str]:
    """``bin/workloads/<category>/<name>/hadoop/<script>``: one measured run."""
    if not _SCRIPT.match(script):
        raise ConfigError(f"HiBench script {script!r} must be a plain file name ending in .sh")
    return [f"{_workload_dir(hibench_home, category, name)}/hadoop/{script}"]
