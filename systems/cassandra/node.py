"""File operations on one Cassandra node (through its executor): check the install, create the
private base folder, read the pid file and the logs."""

from __future__ import annotations

from harness.errors import ConfigError, ExecutorError
from harness.executor import Executor, tail
from systems.cassandra.commands import NodePaths
from systems.ports import busy_ports, check_free  # re-exported: the node checks of this module

__all__ = [
    "JVM_GC_FILES",
    "REQUIRED",
    "busy_ports",
    "check_free",
    "check_install",
    "logs_tail",
    "logs_text",
    "prepare_base",
    "read_pid",
]

#: The collector's options file of each Java line Cassandra ships one for (5.0: 11 and 17).
JVM_GC_FILES = ("jvm17-server.options", "jvm11-server.options")
REQUIRED = ("bin/cassandra", "bin/nodetool", "conf/jvm-server.options", "lib")
_FIX = (
    "run `bash scripts/setup.sh --full` (it installs Cassandra 5.0 from Maven Central into "
    ".installs/cassandra), copy that folder to the same path on every SUT host, or point "
    "system.adapter.install_dir=<folder with bin/cassandra> at such an install"
)


def check_install(node: Executor, install_dir: str, java_home: str | None) -> None:
    """ConfigError naming the host and the missing path when the node's install is incomplete."""
    for relative in REQUIRED:
        path = f"{install_dir}/{relative}"
        if not node.exists(path):
            raise ConfigError(
                f"Cassandra not found on host {node.host}: {path} is missing; {_FIX}"
            )
    if not any(node.exists(f"{install_dir}/conf/{name}") for name in JVM_GC_FILES):
        raise ConfigError(
            f"host {node.host}: {install_dir}/conf has neither "
            f"{' nor '.join(JVM_GC_FILES)} (the collector options file of a Cassandra 5.0 "
            "install); reinstall it with `bash scripts/setup.sh --full`"
        )
    java = f"{java_home}/bin/java" if java_home else None
    if (java and not node.exists(java)) or (not java and node.which("java") is None):
        raise ConfigError(
            f"java not found on host {node.host}: install a JDK 17 "
            "or set system.adapter.java_home=<JDK folder>"
        )


def prepare_base(node: Executor, install_dir: str, paths: NodePaths) -> dict[str, str]:
    """Create the node's base folder with a copy of the install's conf; return the install's
    JVM option files (name → text), which every test renders anew."""
    node.run(["mkdir", "-p", paths.conf, paths.logs, *paths.state_dirs()])
    node.run(["cp", "-a", f"{install_dir}/conf/.", paths.conf])
    originals = {"jvm-server.options": node.read_text(f"{install_dir}/conf/jvm-server.options")}
    for name in JVM_GC_FILES:
        if node.exists(f"{install_dir}/conf/{name}"):
            originals[name] = node.read_text(f"{install_dir}/conf/{name}")
    return originals


def read_pid(node: Executor, paths: NodePaths) -> int | None:
    """The PID in the node's pid file, if any (read, not trusted)."""
    if not node.exists(paths.pid_file):
        return None
    text = node.read_text(paths.pid_file).strip()
    return int(text) if text.isdigit() else None


def logs_text(node: Executor, paths: NodePaths) -> str:
    """The node's launcher output and system.log (what exists of them)."""
    texts = []
    for path in (paths.stdout_log, paths.system_log):
        try:
            if node.exists(path):
                texts.append(node.read_text(path))
        except ExecutorError:
            pass
    return "\n".join(texts)


def logs_tail(node: Executor, paths: NodePaths, lines: int = 40) -> str:
    """The last lines of the node's launcher output and system.log, each with its path."""
    parts = []
    for label, path in (("stdout.log", paths.stdout_log), ("system.log", paths.system_log)):
        try:
            text = node.read_text(path) if node.exists(path) else "(missing)"
        except ExecutorError as exc:
            text = f"(unreadable: {exc})"
        parts.append(f"== {node.host}:{path} ({label})\n{tail(text, lines)}")
    return "\n".join(parts)
