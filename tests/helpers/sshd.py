"""A private OpenSSH server on 127.0.0.1 for the remote-execution tests.

It follows the recipe that was seen to work on these machines: host and client ed25519 keys in a
temporary folder, key authentication only, ``UsePAM no`` and ``StrictModes no`` (the keys live
under /tmp, which StrictModes refuses), ``/run/sshd`` created for privilege separation. The
fixture also writes a known_hosts file holding the server's host key, so the tests run with
host-key checking ON, as users do.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.testbed import read_pid_file

SSHD = "/usr/sbin/sshd"


@dataclass(frozen=True)
class PrivateSSHD:
    """How to reach the private sshd."""

    port: int
    key_file: Path
    known_hosts: Path
    folder: Path
    pid: int

    def host(self, name: str = "sut1", **overrides: object) -> dict[str, object]:
        """An inventory entry for this server."""
        return {
            "name": name,
            "address": "127.0.0.1",
            "port": self.port,
            "user": "root",
            "key_file": str(self.key_file),
            "known_hosts": str(self.known_hosts),
            "workdir": str(self.folder / "remote-work"),
            **overrides,
        }

    def env(self) -> dict[str, str]:
        """Environment for ``hosts=loopback`` on the command line."""
        return {
            "HARNESS_SSH_PORT": str(self.port),
            "HARNESS_SSH_KEY": str(self.key_file),
            "HARNESS_SSH_KNOWN_HOSTS": str(self.known_hosts),
        }


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_listening(port: int, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"sshd did not listen on 127.0.0.1:{port} within {timeout_s}s")


@pytest.fixture(scope="session")
def private_sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateSSHD]:
    if not Path(SSHD).exists() or shutil.which("ssh-keygen") is None:
        pytest.skip("openssh-server is not installed (apt-get install openssh-server)")
    if os.geteuid() != 0:
        pytest.skip("the private sshd logs in as root; run the tests as root")
    folder = tmp_path_factory.mktemp("sshd")
    os.chmod(folder, 0o755)
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    for key in ("host_ed25519", "client_ed25519"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / key)], check=True
        )
    keys = folder / "authorized_keys"
    keys.mkdir()
    shutil.copy(folder / "client_ed25519.pub", keys / "root")
    port = _free_port()
    config = folder / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {folder / 'host_ed25519'}\n"
        f"PidFile {folder / 'sshd.pid'}\nAuthorizedKeysFile {keys}/%u\n"
        "PubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PermitRootLogin prohibit-password\nUsePAM no\nStrictModes no\n"
        "Subsystem sftp internal-sftp\nMaxSessions 50\nMaxStartups 50\n"
    )
    subprocess.run([SSHD, "-t", "-f", str(config)], check=True)
    subprocess.run([SSHD, "-f", str(config), "-E", str(folder / "sshd.log")], check=True)
    _wait_listening(port)
    host_key = (folder / "host_ed25519.pub").read_text().split()
    known_hosts = folder / "known_hosts"
    known_hosts.write_text(f"[127.0.0.1]:{port} {host_key[0]} {host_key[1]}\n")
    pid = read_pid_file(folder / "sshd.pid")
    try:
        yield PrivateSSHD(port, folder / "client_ed25519", known_hosts, folder, pid)
    finally:
        subprocess.run(["kill", str(pid)], check=False)
