"""A single-node Slurm cluster on this machine, started and stopped by the tests (issue #20).

Debian's ``slurm-wlm``, ``slurmdbd`` and ``munge``, run from a folder of their own: a fresh munge
key and daemon on a private socket, ``slurmctld`` and ``slurmd`` on free loopback ports with a
``slurm.conf`` that needs no cgroup plugin and no systemd. Where ``slurmdbd`` and MariaDB are
installed, job accounting runs too, as on any real cluster: a private MariaDB (its own data
folder, socket and loopback port; root by socket only, the ``slurm`` user by a fresh password)
behind ``slurmdbd``, so ``sacct`` reports each job's state (COMPLETED, CANCELLED, FAILED,
NODE_FAIL) and submitit sees a job that died without a result instead of waiting forever. Client
commands (``sbatch``, ``squeue``, ``scancel``, and submitit through them) find the cluster
through the ``SLURM_CONF`` variable that :meth:`SlurmCluster.env` gives. Every daemon is
stopped by :meth:`SlurmCluster.stop`, whatever happened.

By hand:

    python -m tests.helpers.slurm up /tmp/slurm     # prints the export line for SLURM_CONF
    python -m tests.helpers.slurm down /tmp/slurm
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

from tests.helpers.testbed import stop_pid

DAEMONS = ("munged", "slurmctld", "slurmd")
#: The accounting daemons, started between munged and slurmctld when installed.
ACCOUNTING = ("mariadbd", "slurmdbd")
#: Stop order: the node first, the database last.
STOP_ORDER = ("slurmd", "slurmctld", "slurmdbd", "mariadbd", "munged")
STATE_FILE = "slurm.json"


def available() -> bool:
    """Whether slurm-wlm and munge are installed and we are root (the daemons need it)."""
    return os.geteuid() == 0 and all(shutil.which(d) for d in (*DAEMONS, "sbatch", "squeue"))


def accounting_available() -> bool:
    """Whether slurmdbd and MariaDB are installed (``sacct`` can then report job states)."""
    return all(shutil.which(d) for d in (*ACCOUNTING, "mariadb-install-db", "mariadb", "sacctmgr"))


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
    accounting: bool = False

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
        for name in STOP_ORDER:
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


def _accounting_conf(cluster: SlurmCluster, socket_path: Path) -> tuple[list[str], int, int]:
    """slurmdbd.conf next to slurm.conf (where slurmdbd looks), readable by root only; the
    slurm.conf lines that point at it, and the database's and slurmdbd's ports."""
    base = Path(cluster.folder)
    db_port, dbd_port = _free_port(), _free_port()
    password = os.urandom(18).hex()
    (base / "db.password").write_text(password)
    os.chmod(base / "db.password", 0o600)
    dbd_conf = base / "slurmdbd.conf"
    dbd_conf.touch(mode=0o600)
    dbd_conf.write_text(
        "\n".join(
            [
                "AuthType=auth/munge",
                f"AuthInfo=socket={socket_path}",
                "DbdHost=localhost",
                "DbdAddr=127.0.0.1",
                f"DbdPort={dbd_port}",
                "SlurmUser=root",
                f"PidFile={base / 'slurmdbd.pid'}",
                f"LogFile={base / 'log' / 'slurmdbd.log'}",
                "StorageType=accounting_storage/mysql",
                "StorageHost=127.0.0.1",
                f"StoragePort={db_port}",
                "StorageUser=slurm",
                f"StoragePass={password}",
                "StorageLoc=slurm_acct_db",
                "",
            ]
        )
    )
    lines = [
        "AccountingStorageType=accounting_storage/slurmdbd",
        "AccountingStorageHost=127.0.0.1",
        f"AccountingStoragePort={dbd_port}",
        # for slurmdbd, the "password" is the munge socket to sign with (ours is private)
        f"AccountingStoragePass={socket_path}",
    ]
    return lines, db_port, dbd_port


def _start_database(cluster: SlurmCluster, port: int) -> None:
    """A private MariaDB for slurmdbd: root by socket only, user ``slurm`` by password."""
    base = Path(cluster.folder)
    data, sock = base / "db", base / "db.sock"
    subprocess.run(
        [
            "mariadb-install-db",
            "--no-defaults",
            f"--datadir={data}",
            "--user=root",
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    subprocess.Popen(
        [
            "mariadbd",
            "--no-defaults",
            f"--datadir={data}",
            f"--socket={sock}",
            f"--port={port}",
            "--bind-address=127.0.0.1",
            f"--pid-file={cluster.pids['mariadbd']}",
            f"--log-error={base / 'log' / 'mariadb.log'}",
            "--user=root",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # outlives nothing it should not: stop() ends it
    )
    password = (base / "db.password").read_text()
    deadline = time.monotonic() + 60
    while True:
        done = subprocess.run(
            [
                "mariadb",
                "--no-defaults",
                f"--socket={sock}",
                "-u",
                "root",
            ],
            # on stdin, not the command line: `ps` would show the password
            input=f"CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '{password}';\n"
            "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';\n",
            capture_output=True,
            text=True,
        )
        if done.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the accounting database did not start: {done.stderr.strip()}")
        time.sleep(0.3)


def _wait_port(port: int, what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {timeout_s:g}s")


def start(
    folder: str | Path, cpus: int = 2, memory_mib: int = 8192, accounting: bool | None = None
) -> SlurmCluster:
    """munged, slurmctld and slurmd for one node (this machine) under ``folder``, and job
    accounting (MariaDB + slurmdbd) when installed (``accounting=None``) or asked for."""
    base = Path(folder).resolve()
    for sub in ("state", "spool", "munge", "log"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    os.chmod(base / "munge", 0o700)
    node = socket.gethostname().split(".")[0]
    if accounting is None:
        accounting = accounting_available()
    cluster = SlurmCluster(str(base), node, accounting=accounting)
    key = base / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    socket_path = base / "munge" / "munge.socket"
    storage = ["AccountingStorageType=accounting_storage/none"]
    db_port = dbd_port = 0
    if accounting:
        storage, db_port, dbd_port = _accounting_conf(cluster, socket_path)
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
                *storage,
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
    if accounting:
        cluster.pids["mariadbd"] = str(base / "mariadb.pid")
        cluster.pids["slurmdbd"] = str(base / "slurmdbd.pid")
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
        if accounting:
            _start_database(cluster, db_port)
            subprocess.run(["slurmdbd"], env=env, check=True, capture_output=True)
            _wait_port(dbd_port, "slurmdbd")
            subprocess.run(  # the cluster is known to accounting before its controller starts
                ["sacctmgr", "-i", "add", "cluster", "harness"], env=env, capture_output=True
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
