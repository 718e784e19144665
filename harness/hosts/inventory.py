"""Host inventories: which machines a session drives, over SSH, and in which role.

An inventory is a list of hosts, each with an address, SSH settings and roles: ``sut`` (runs the
system under tune; the first SUT host is the master / seed node) and ``load`` (runs the
benchmark client). Inventories live in ``conf/hosts/<name>.yaml`` and are chosen with
``hosts=<name>``; ``hosts=none`` (the default) runs everything on this machine.

Credentials never appear here: authentication comes from ``~/.ssh/config``, the SSH agent or a
key *file* named by path, so nothing secret reaches the configs logged to MLflow. Every value
that later enters a shell command on a host (address, user, paths) is validated here.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.errors import ConfigError

__all__ = ["CONNECTIONS", "ROLES", "Host", "Inventory"]

ROLES = ("sut", "load")
CONNECTIONS = ("ssh", "local")
# RFC 1123 host names and IPv4/IPv6 literals; nothing a shell would interpret.
_ADDRESS = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.\-:]*[A-Za-z0-9])?$")
_USER = re.compile(r"^[a-z_][a-z0-9_.\-]*$")
_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")
_PATH = re.compile(r"^/[A-Za-z0-9_./\-]*$")
_SECRET_KEYS = {"password", "passphrase", "pkey", "secret", "token"}


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Host:
    """One machine of an inventory and how to reach it."""

    name: str
    address: str
    port: int = 22
    user: str | None = None
    #: A private key file; None = ~/.ssh/config, the agent and the default key files.
    key_file: str | None = None
    roles: tuple[str, ...] = ("sut",)
    #: Where sessions keep their instances on this host (created on demand).
    workdir: str = "/tmp/harness"
    #: Host-key checking against known_hosts (on by default; opt out explicitly).
    strict_host_key_checking: bool = True
    #: An extra known_hosts file, besides ~/.ssh/known_hosts.
    known_hosts: str | None = None
    connect_timeout_s: float = 10.0
    #: An open connection whose host has not answered for this long is dead: the command in
    #: flight ends as ``HostUnreachable`` (session ABORTED, finished tests kept) instead of
    #: waiting out TCP retransmission (~15 min). Keep it above the link's worst stall.
    link_timeout_s: float = 20.0
    #: ``ssh`` (the host is reached over SSH) or ``local``: the host is this machine, serving on
    #: its own loopback address (a local ring: 127.0.0.2, 127.0.0.3, ...; nothing is reached).
    connection: str = "ssh"
    #: The share of this host a session may give the system (MiB, CPUs), when less than the
    #: host has: other work runs there, or the budget is meant to match another machine.
    #: Memory-derived knob ranges, the objective's ``ram_*``/``cores`` and the expert rules use
    #: it. None = what the host reports (control-group limits applied). Never above that.
    ram_mib: int | None = None
    cores: int | None = None

    def __post_init__(self) -> None:
        where = f"host {self.name!r}"
        if not _NAME.match(self.name):
            raise ConfigError(f"{where}: a host name may hold letters, digits, '_', '.', '-'")
        if not _ADDRESS.match(self.address):
            raise ConfigError(f"{where}: address {self.address!r} is not a host name or IP")
        if not 0 < self.port < 65536:
            raise ConfigError(f"{where}: port {self.port} is outside 1-65535")
        if self.user is not None and not _USER.match(self.user):
            raise ConfigError(f"{where}: user {self.user!r} is not a valid account name")
        if not _PATH.match(self.workdir):
            raise ConfigError(
                f"{where}: workdir {self.workdir!r} must be an absolute path "
                "of letters, digits, '_', '.', '-', '/'"
            )
        unknown = set(self.roles) - set(ROLES)
        if unknown or not self.roles:
            raise ConfigError(
                f"{where}: roles {list(self.roles)} — each must be one of {', '.join(ROLES)}"
            )
        self._check_limits(where)
        if self.connection not in CONNECTIONS:
            raise ConfigError(
                f"{where}: connection {self.connection!r} — use one of {', '.join(CONNECTIONS)}"
            )
        if self.connection == "local" and not _is_loopback(self.address):
            raise ConfigError(
                f"{where}: a local host serves on a loopback address (127.x.y.z), "
                f"not {self.address!r}"
            )

    def _check_limits(self, where: str) -> None:
        """Timeouts that can expire sensibly, and resource limits that are whole numbers."""
        if self.connect_timeout_s <= 0:
            raise ConfigError(f"{where}: connect_timeout_s must be positive")
        if self.link_timeout_s < 4:
            raise ConfigError(f"{where}: link_timeout_s must be at least 4 (seconds)")
        for limit in ("ram_mib", "cores"):
            value = getattr(self, limit)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ConfigError(f"{where}: {limit} must be a whole number of at least 1")

    @property
    def target(self) -> str:
        """``user@address:port`` for messages."""
        user = f"{self.user}@" if self.user else ""
        return f"{user}{self.address}:{self.port}"

    @classmethod
    def from_mapping(cls, entry: Mapping[str, Any], defaults: Mapping[str, Any]) -> Host:
        merged = {**defaults, **entry}
        secrets = _SECRET_KEYS & {k.lower() for k in merged}
        if secrets:
            raise ConfigError(
                f"host {merged.get('name', '?')!r}: {', '.join(sorted(secrets))} "
                "may not be set in an inventory (it would be logged); use "
                "~/.ssh/config, the SSH agent or key_file"
            )
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(merged) - known
        if unknown:
            raise ConfigError(
                f"host {merged.get('name', '?')!r}: unknown setting(s) "
                f"{', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}"
            )
        if "name" not in merged or "address" not in merged:
            raise ConfigError(f"every host needs a name and an address, got {dict(entry)}")
        roles = merged.get("roles", ("sut",))
        if isinstance(roles, str):
            roles = (roles,)
        return cls(**{**merged, "roles": tuple(roles), "port": int(merged.get("port", 22))})


@dataclass(frozen=True)
class Inventory:
    """The hosts of one session: SUT hosts in start order and (at most) one load host."""

    name: str
    hosts: tuple[Host, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        names = [h.name for h in self.hosts]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ConfigError(
                f"inventory {self.name!r}: host name(s) used twice: {', '.join(duplicates)}"
            )
        if self.hosts and not self.sut:
            raise ConfigError(f"inventory {self.name!r}: no host has the role 'sut'")
        if len([h for h in self.hosts if "load" in h.roles]) > 1:
            raise ConfigError(
                f"inventory {self.name!r}: more than one host has the role 'load'; give it to one"
            )

    @property
    def remote(self) -> bool:
        return bool(self.hosts)

    @property
    def sut(self) -> tuple[Host, ...]:
        return tuple(h for h in self.hosts if "sut" in h.roles)

    @property
    def load(self) -> Host | None:
        """The load generator, or None (the benchmark client then runs on the first SUT
        host, or in the harness process for Python clients)."""
        return next((h for h in self.hosts if "load" in h.roles), None)

    @classmethod
    def from_config(
        cls,
        name: str,
        hosts: Sequence[Mapping[str, Any]],
        defaults: Mapping[str, Any] | None = None,
    ) -> Inventory:
        return cls(name, tuple(Host.from_mapping(h, defaults or {}) for h in hosts))
