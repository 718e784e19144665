"""Test hosts on this machine: Linux network namespaces with their own address and sshd.

Each host is a network namespace joined by a veth pair to a bridge in the root namespace, with
an address in the benchmarking range 198.18.0.0/15 (RFC 2544: never routed on the Internet)
and its own OpenSSH server on port 22 of that address. The harness, in the root namespace,
reaches a host over the bridge exactly as it would reach a machine on a LAN: through its SSH
executor, with host-key checking on (every host's key is written to a known_hosts file), and
the hosts reach each other the same way. Namespaces isolate the network only: the hosts share
this machine's files, processes and CPUs, so each one gets its own work folder.

Each testbed takes a free /24 of that range (198.18.x.0/24, then 198.19.x.0/24), so two
testbeds never share addresses. Faults a real network has: :meth:`TestHost.cut` takes the
host's link down (and :meth:`TestHost.mend` brings it back); :meth:`TestHost.slow` limits its
bandwidth (``tc tbf``) and :meth:`TestHost.delay` adds latency (``tc netem``, when the kernel
has it: this machine's does not).

Nothing else on the machine is touched: every namespace, interface and bridge carries the
testbed's own prefix (``ct`` + 4 hex digits), and :meth:`Testbed.down` removes them and stops
every process left in a namespace, whatever happened. When namespaces are not permitted (no
root, a container without CAP_NET_ADMIN), :func:`start` falls back to loopback addresses
(127.0.3.x) with one sshd per address and says so (``Testbed.mode == "loopback"``); the link
faults are then not available.

By hand:

    python -m tests.helpers.testbed up 3 /tmp/tb      # prints an inventory for hosts=, keeps state
    python -m tests.helpers.testbed down /tmp/tb      # removes everything it made
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

SSHD = "/usr/sbin/sshd"
LOOPBACK_NETWORK = "127.0.3"
STATE_FILE = "testbed.json"


def _ip(
    *args: str, netns: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    command = ["ip", *(["-n", netns] if netns else []), *args]
    return subprocess.run(command, check=check, capture_output=True, text=True)


def namespaces_permitted() -> bool:
    """Whether this process may create network namespaces (tried, then removed)."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return False
    probe = f"ctprobe{os.getpid() % 10000}"
    made = _ip("netns", "add", probe, check=False).returncode == 0
    if made:
        _ip("netns", "del", probe, check=False)
    return made


@dataclass(frozen=True)
class TestHost:
    """One test host: where it is and how the harness logs in."""

    __test__ = False  # a helper, not a test class

    name: str
    address: str
    port: int
    netns: str  # "" in loopback mode
    veth: str  # the root namespace's end of the host's link ("" in loopback mode)
    folder: str
    key_file: str
    known_hosts: str
    sshd_pid: int

    def host(self, **overrides: object) -> dict[str, object]:
        """The host's inventory entry (``conf/hosts`` format)."""
        return {
            "name": self.name,
            "address": self.address,
            "port": self.port,
            "user": "root",
            "key_file": self.key_file,
            "known_hosts": self.known_hosts,
            "workdir": str(Path(self.folder) / "work"),
            **overrides,
        }

    def run(self, *command: str, timeout_s: float = 60.0) -> subprocess.CompletedProcess[str]:
        """Run a command *on* the host (inside its namespace), not through SSH."""
        prefix = ["ip", "netns", "exec", self.netns] if self.netns else []
        return subprocess.run(
            [*prefix, *command], capture_output=True, text=True, timeout=timeout_s, check=False
        )

    def cut(self) -> None:
        """Take the host's link down: it stops answering, as a pulled cable would."""
        self._need_link("cut")
        _ip("link", "set", self.veth, "down")

    def mend(self) -> None:
        """Bring the host's link back up."""
        self._need_link("mend")
        _ip("link", "set", self.veth, "up")

    def delay(self, ms: float) -> None:
        """Delay every packet to the host by ``ms`` milliseconds (``tc netem``)."""
        self._qdisc("netem", "delay", f"{ms}ms")

    def slow(self, rate: str = "1mbit") -> None:
        """Limit the traffic to the host to ``rate`` (``tc tbf``)."""
        self._qdisc("tbf", "rate", rate, "burst", "32kbit", "latency", "400ms")

    def normal(self) -> None:
        """Remove a delay or a limit."""
        self._need_link("normal")
        for prefix, device in self._ends():
            subprocess.run(
                [*prefix, "tc", "qdisc", "del", "dev", device, "root"], capture_output=True
            )

    def _ends(self) -> list[tuple[list[str], str]]:
        """Both ends of the link: the root namespace's veth and the host's eth0 (a qdisc
        shapes what leaves a device, so each direction needs its own)."""
        return [([], self.veth), (["ip", "netns", "exec", self.netns], "eth0")]

    def _qdisc(self, *spec: str) -> None:
        self._need_link(spec[0])
        for prefix, device in self._ends():
            done = subprocess.run(
                [*prefix, "tc", "qdisc", "replace", "dev", device, "root", *spec],
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                raise RuntimeError(f"tc {spec[0]} on {self.name}: {done.stderr.strip()}")

    def limit(self, memory_bytes: int, cpus: int) -> None:
        """Give the host a smaller machine: its sshd (and so every session and process started
        through it) moves into a control group of its own with this memory limit and CPU
        quota, as a container or a VM of that size would have."""
        for folder, files in _cgroup_files(self.netns or self.name, memory_bytes, cpus).items():
            folder.mkdir(exist_ok=True)
            for name, value in files.items():
                (folder / name).write_text(value)
            (folder / "cgroup.procs").write_text(str(self.sshd_pid))

    def _need_link(self, what: str) -> None:
        if not self.veth:
            raise RuntimeError(f"{what}: the loopback testbed has no link to change")


@dataclass
class Testbed:
    """The hosts of one testbed and what :meth:`down` must remove."""

    __test__ = False

    prefix: str
    mode: str  # "netns" or "loopback"
    folder: str
    hosts: list[TestHost] = field(default_factory=list)
    bridge: str = ""
    network: str = ""  # the first three octets of the testbed's /24

    def inventory(self, name: str = "testbed", load: int | None = None) -> dict[str, object]:
        """A host inventory: every host a SUT, or host ``load`` (an index) the load host."""
        entries = []
        for index, test_host in enumerate(self.hosts):
            roles = ["load"] if index == load else ["sut"]
            entries.append({**test_host.host(), "roles": roles})
        return {"name": name, "hosts": entries}

    def save(self) -> Path:
        path = Path(self.folder) / STATE_FILE
        path.write_text(json.dumps(asdict(self), indent=1))
        return path

    @classmethod
    def load(cls, folder: str | Path) -> Testbed:
        data = json.loads((Path(folder) / STATE_FILE).read_text())
        data["hosts"] = [TestHost(**h) for h in data["hosts"]]
        return cls(**data)

    def down(self) -> list[str]:
        """Stop every process in the hosts and remove every namespace and link whose name
        carries the testbed's prefix (also those of a host half made when a start failed);
        returns what could not be removed (empty when all went)."""
        for test_host in self.hosts:
            stop_pid(test_host.sshd_pid)
        for netns in _names(self.prefix, "netns", "list"):
            for pid in _ip("netns", "pids", netns, check=False).stdout.split():
                stop_pid(int(pid))
            _ip("netns", "del", netns, check=False)
        for link in _names(self.prefix, "-o", "link", "show"):
            _ip("link", "del", link, check=False)
        _remove_cgroups(self.prefix)
        return _names(self.prefix, "netns", "list") + _names(self.prefix, "-o", "link", "show")


def _cgroup_files(name: str, memory_bytes: int, cpus: int) -> dict[Path, dict[str, str]]:
    """The control-group folders of a limited host and what to write in them: cgroup v1's
    memory and cpu hierarchies when mounted, else cgroup v2's unified one."""
    root = Path("/sys/fs/cgroup")
    period = 100_000
    if (root / "memory").is_dir() and (root / "cpu").is_dir():
        return {
            root / "memory" / name: {"memory.limit_in_bytes": str(memory_bytes)},
            root / "cpu" / name: {
                "cpu.cfs_period_us": str(period),
                "cpu.cfs_quota_us": str(cpus * period),
            },
        }
    return {root / name: {"memory.max": str(memory_bytes), "cpu.max": f"{cpus * period} {period}"}}


def _remove_cgroups(prefix: str) -> None:
    root = Path("/sys/fs/cgroup")
    for folder in [*root.glob(f"{prefix}*"), *root.glob(f"*/{prefix}*")]:
        with contextlib.suppress(OSError):
            folder.rmdir()  # empty once its processes are gone


def _names(prefix: str, *listing: str) -> list[str]:
    """Names of namespaces (``netns list``) or links (``-o link show``) with the prefix."""
    out = _ip(*listing, check=False).stdout.splitlines()
    if listing[0] == "-o":  # "7: ctab12v1@if2: <...>"
        names = [line.split(": ")[1].split("@")[0] for line in out if ": " in line]
    else:  # "ctab12h1 (id: 0)"
        names = [line.split()[0] for line in out if line.strip()]
    return [name for name in names if name.startswith(prefix)]


@contextlib.contextmanager
def _machine_lock() -> Iterator[None]:
    """An exclusive lock shared by every process of this machine (an flock on /run/lock)."""
    with open("/run/lock/harness-testbed.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _free_network() -> str:
    """A /24 of 198.18.0.0/15 that no address of this machine is in (root namespace)."""
    used = _ip("-4", "-o", "addr", "show", check=False).stdout
    for second in (18, 19):
        for third in range(256):
            network = f"198.{second}.{third}"
            if f" {network}." not in used:
                return network
    raise RuntimeError("every /24 of 198.18.0.0/15 is in use on this machine")


class Peers:
    """Polls ``ss`` on a host while a session runs: the remote addresses of its established
    TCP connections, except SSH's (the harness driving the host); and ``ps``, for a password
    on any command line (the namespaces share one process table)."""

    def __init__(self, test_host: TestHost) -> None:
        self.host = test_host
        self.seen: set[str] = set()
        self.exposed: set[str] = set()
        #: Every command line seen in ``ps`` while watching (the namespaces share one table).
        self.commands: set[str] = set()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self.done.is_set():
            listing = self.host.run("ss", "-tnH", "state", "established").stdout
            for line in listing.splitlines():
                local, peer = line.split()[-2:]
                if not local.endswith(":22"):
                    # a Java server's sockets show IPv4-mapped IPv6: [::ffff:198.18.0.11]
                    address = peer.rsplit(":", 1)[0].strip("[]").removeprefix("::ffff:")
                    self.seen.add(address)
            # -ww: whole command lines (piped, ps cuts them at 80 columns otherwise)
            for args in subprocess.run(
                ["ps", "-ww", "-eo", "args"], capture_output=True, text=True
            ).stdout.splitlines():
                self.commands.add(args)
                if "PASSWORD=" in args.upper() or '"password"' in args:
                    self.exposed.add(args[:300])
            time.sleep(0.2)

    def __enter__(self) -> Peers:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join(timeout=10)


def read_pid_file(path: Path, timeout_s: float = 10.0) -> int:
    """The pid a daemon wrote to `path`, waiting for it.

    A daemon creates its pid file and writes the number a moment later, so an empty file is a
    file still being written, not an error (CI once read one empty).
    """
    deadline = time.monotonic() + timeout_s
    while True:
        with contextlib.suppress(FileNotFoundError, ValueError, IndexError):
            return int(path.read_text().split()[0])
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path} held no pid within {timeout_s:.0f} s")
        time.sleep(0.05)


def stop_pid(pid: int) -> None:
    """SIGTERM, then SIGKILL after 2.5 s; a process already gone is fine."""
    try:
        os.kill(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _wait_listening(test_host: TestHost, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            probe.settimeout(1.0)
            if probe.connect_ex((test_host.address, test_host.port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"sshd of {test_host.name} did not listen on {test_host.address}")


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
        check=True,
        capture_output=True,
    )


def _free_port(address: str) -> int:
    with socket.socket() as probe:
        probe.bind((address, 0))
        return int(probe.getsockname()[1])


def start(n: int, folder: str | Path, allow_netns: bool = True) -> Testbed:
    """Create ``n`` hosts (names ``h1``..``hn``) under ``folder``; namespaces when permitted,
    else loopback addresses. On any failure everything made so far is removed again."""
    if not 1 <= n <= 200:
        raise ValueError(f"a testbed has 1 to 200 hosts, not {n}")
    base = Path(folder)
    base.mkdir(parents=True, exist_ok=True)
    os.chmod(base, 0o755)
    mode = "netns" if allow_netns and namespaces_permitted() else "loopback"
    bed = Testbed(prefix=f"ct{secrets.token_hex(2)}", mode=mode, folder=str(base))
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    _keygen(base / "client_ed25519")
    keys = base / "authorized_keys"
    keys.mkdir(exist_ok=True)
    shutil.copy(base / "client_ed25519.pub", keys / "root")
    known_hosts = base / "known_hosts"
    known_hosts.write_text("")
    try:
        if mode == "netns":
            # Two testbeds started at once (pytest-xdist workers) must not pick the same /24.
            with _machine_lock():
                bed.bridge, bed.network = f"{bed.prefix}br", _free_network()
                _ip("link", "add", bed.bridge, "type", "bridge")
                _ip("addr", "add", f"{bed.network}.1/24", "dev", bed.bridge)
            _ip("link", "set", bed.bridge, "up")
        for index in range(1, n + 1):
            bed.hosts.append(_make_host(bed, index, keys, known_hosts))
            bed.save()
    except BaseException:
        bed.down()
        raise
    return bed


def _make_host(bed: Testbed, index: int, keys: Path, known_hosts: Path) -> TestHost:
    name = f"h{index}"
    folder = Path(bed.folder) / name
    (folder / "work").mkdir(parents=True, exist_ok=True)
    _keygen(folder / "host_ed25519")
    netns = veth = ""
    if bed.mode == "netns":
        netns, veth = f"{bed.prefix}{name}", f"{bed.prefix}v{index}"
        address, port = f"{bed.network}.{9 + index}", 22
        _ip("netns", "add", netns)
        _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", netns)
        _ip("link", "set", veth, "master", bed.bridge)
        _ip("link", "set", veth, "up")
        _ip("link", "set", "lo", "up", netns=netns)
        _ip("addr", "add", f"{address}/24", "dev", "eth0", netns=netns)
        _ip("link", "set", "eth0", "up", netns=netns)
        _ip("route", "add", "default", "via", f"{bed.network}.1", netns=netns)
    else:
        address = f"{LOOPBACK_NETWORK}.{9 + index}"
        port = _free_port(address)
    config = folder / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress {address}\nHostKey {folder / 'host_ed25519'}\n"
        f"PidFile {folder / 'sshd.pid'}\nAuthorizedKeysFile {keys}/%u\n"
        "PubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PermitRootLogin prohibit-password\nUsePAM no\nStrictModes no\n"
        "Subsystem sftp internal-sftp\nMaxSessions 50\nMaxStartups 50\n"
    )
    # nsenter, not `ip netns exec`: that one also remounts /sys for the namespace, which hides
    # /sys/fs/cgroup from the host's sessions (they could not read their own limits).
    prefix = ["nsenter", f"--net=/run/netns/{netns}"] if netns else []
    subprocess.run([SSHD, "-t", "-f", str(config)], check=True, capture_output=True)
    subprocess.run(
        [*prefix, SSHD, "-f", str(config), "-E", str(folder / "sshd.log")],
        check=True,
        capture_output=True,
    )
    pid = read_pid_file(folder / "sshd.pid")
    kind, key = (folder / "host_ed25519.pub").read_text().split()[:2]
    where = address if port == 22 else f"[{address}]:{port}"
    with known_hosts.open("a") as handle:
        handle.write(f"{where} {kind} {key}\n")
    test_host = TestHost(
        name,
        address,
        port,
        netns,
        veth,
        str(folder),
        str(Path(bed.folder) / "client_ed25519"),
        str(known_hosts),
        pid,
    )
    _wait_listening(test_host)
    return test_host


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="test hosts in network namespaces")
    sub = parser.add_subparsers(dest="what", required=True)
    up = sub.add_parser("up", help="create N hosts; print their inventory")
    up.add_argument("n", type=int)
    up.add_argument("folder")
    down = sub.add_parser("down", help="remove a testbed made by up")
    down.add_argument("folder")
    args = parser.parse_args(argv)
    if args.what == "up":
        bed = start(args.n, args.folder)
        import yaml

        print(f"# testbed {bed.prefix} ({bed.mode}); remove it with:")
        print(f"#   python -m tests.helpers.testbed down {args.folder}")
        print(yaml.safe_dump(bed.inventory(), sort_keys=False))
        return 0
    left = Testbed.load(args.folder).down()
    if left:
        print("could not remove: " + ", ".join(left), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
