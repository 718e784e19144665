"""A single-node Slurm cluster on this machine, started and stopped by the tests (issue #20).

Debian's ``slurm-wlm`` and ``munge``, run from a folder of their own: a fresh munge key and
daemon on a private socket, ``slurmctld`` and ``slurmd`` on free loopback ports with a
``slurm.conf`` that needs no cgroup plugin, no accounting daemon and no systemd. Client
commands (``sbatch``, ``squeue``, ``scancel``, and submitit through them) find the cluster
through the ``SLURM_CONF`` variable that :meth:`SlurmCluster.env` gives. Every daemon is
stopped by :meth:`SlurmCluster.stop`, whatever happened.

By hand:

    python -m tests.slurm up /tmp/slurm     # prints the export line for SLURM_CONF
    python -m tests.slurm down /tmp/slurm
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tests.testbed import stop_pid

DAEMONS = ("munged", "slurmctld", "slurmd")
STATE_FILE = "slurm.json"


def available() -> bool:
    """Whether slurm-wlm and munge are installed and we are root (the daemons need it)."""
    return os.geteuid() == 0 and all(shutil.which(d) for d in (*DAEMONS, "sbatch", "squeue"))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class SlurmCluster:
    """Where the cluster lives and the daemons' pid files."""

    folder: str
    node: str
    pids: dict[str, str] = field(default_factory=dict)

    @property
    def conf(self) -> Path:
        return Path(self.folder) / "slurm.conf"

    def env(self) -> dict[str, str]:
        """The environment a client command needs (this process's, plus SLURM_CONF)."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *command: str, timeout_s: float = 60.0) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(command), env=self.env(), capture_output=True, text=True, timeout=timeout_s
        )

    def wait_idle(self, timeout_s: float = 60.0) -> None:
        """Until the node accepts jobs."""
        deadline = time.monotonic() + timeout_s
        state = ""
        while time.monotonic() < deadline:
            state = self.run("sinfo", "-h", "-N", "-o", "%T").stdout.strip()
            if state in ("idle", "mixed", "allocated"):
                return
            time.sleep(0.5)
        raise RuntimeError(f"slurm node {self.node} not idle within {timeout_s}s: {state!r}")

    def stop(self) -> None:
        """Stop every daemon (slurmd first; SIGKILL what does not go)."""
        for name in reversed(DAEMONS):
            pid_file = Path(self.pids.get(name, ""))
            if not pid_file.is_file():
                continue
            try:
                pid = int(pid_file.read_text().split()[0])
            except (ValueError, IndexError):
                continue
            stop_pid(pid)

    def save(self) -> None:
        (Path(self.folder) / STATE_FILE).write_text(json.dumps(asdict(self)))

    @classmethod
    def load(cls, folder: str | Path) -> SlurmCluster:
        return cls(**json.loads((Path(folder) / STATE_FILE).read_text()))


def start(folder: str | Path, cpus: int = 2, memory_mib: int = 8192) -> SlurmCluster:
    """munged, slurmctld and slurmd for one node (this machine) under ``folder``."""
    base = Path(folder).resolve()
    for sub in ("state", "spool", "munge", "log"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    os.chmod(base / "munge", 0o700)
    node = socket.gethostname().split(".")[0]
    cluster = SlurmCluster(str(base), node)
    key = base / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    socket_path = base / "munge" / "munge.socket"
    cluster.conf.write_text(
        "\n".join(
            [
                "ClusterName=harness",
                f"SlurmctldHost={node}(127.0.0.1)",
                "SlurmUser=root",
                "SlurmdUser=root",
                "AuthType=auth/munge",
                f"AuthInfo=socket={socket_path}",
                "CredType=cred/munge",
                f"StateSaveLocation={base / 'state'}",
                f"SlurmdSpoolDir={base / 'spool'}",
                f"SlurmctldPidFile={base / 'slurmctld.pid'}",
                f"SlurmdPidFile={base / 'slurmd.pid'}",
                f"SlurmctldPort={_free_port()}",
                f"SlurmdPort={_free_port()}",
                f"SlurmctldLogFile={base / 'log' / 'slurmctld.log'}",
                f"SlurmdLogFile={base / 'log' / 'slurmd.log'}",
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "MpiDefault=none",
                "SchedulerType=sched/backfill",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core",
                "ReturnToService=2",
                "JobAcctGatherType=jobacct_gather/none",
                "AccountingStorageType=accounting_storage/none",
                "JobCompType=jobcomp/none",
                "SlurmdTimeout=30",
                "InactiveLimit=0",
                "KillWait=5",
                f"NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mib} "
                "State=UNKNOWN",
                f"PartitionName=harness Nodes={node} Default=YES MaxTime=INFINITE State=UP",
                "",
            ]
        )
    )
    cluster.pids = {
        "munged": str(base / "munge" / "munged.pid"),
        "slurmctld": str(base / "slurmctld.pid"),
        "slurmd": str(base / "slurmd.pid"),
    }
    cluster.save()
    env = cluster.env()
    try:
        subprocess.run(
            [
                "munged",
                "--force",
                f"--key-file={key}",
                f"--socket={socket_path}",
                f"--pid-file={cluster.pids['munged']}",
                f"--log-file={base / 'log' / 'munged.log'}",
                f"--seed-file={base / 'munge' / 'munged.seed'}",
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        subprocess.run(["slurmctld", "-c"], env=env, check=True, capture_output=True)
        subprocess.run(["slurmd", "-N", node], env=env, check=True, capture_output=True)
        cluster.wait_idle()
    except BaseException:
        cluster.stop()
        raise
    return cluster


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="a single-node Slurm cluster for the tests")
    parser.add_argument("what", choices=("up", "down"))
    parser.add_argument("folder")
    args = parser.parse_args(argv)
    if args.what == "up":
        cluster = start(args.folder)
        print(f"export SLURM_CONF={cluster.conf}")
    else:
        SlurmCluster.load(args.folder).stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
