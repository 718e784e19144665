"""Remote execution logic without a network: command lines, inventories, adapter hand-over."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest
from omegaconf import DictConfig

from harness.errors import ConfigError, ExecutorError
from harness.executor import LocalExecutor
from harness.hosts.cluster import Cluster
from harness.hosts.connect import adapter_kwargs, check_placement
from harness.hosts.inventory import Host, Inventory
from harness.hosts.ssh import env_stdin, remote_command, watch_link
from harness.space import Config
from harness.system import System

HOSTILE = [
    "; rm -rf /tmp/x",
    "$(touch /tmp/pwned)",
    "`id`",
    "a b",
    "it's",
    '"q"',
    "*",
    "\\",
    "x\ny",
    "&& echo no",
    "|cat",
    "$HOME",
    "",
]


def _via_shell(line: str) -> list[str]:
    """What a POSIX shell passes to the program: python prints its argv, one per line."""
    out = subprocess.run(["sh", "-c", line], capture_output=True, text=True, check=True)
    return out.stdout.split("\0")[:-1]


def test_remote_command_passes_every_value_as_one_literal_argument() -> None:
    printer = ["python3", "-c", "import sys; print(*sys.argv[1:], sep='\\0', end='\\0')"]
    line = remote_command([*printer, *HOSTILE])
    assert _via_shell(line) == HOSTILE


def test_remote_command_env_cwd_user_and_timeout_wrap_in_that_order(tmp_path) -> None:
    line = remote_command(
        ["pwd"], env={"A": "x y"}, cwd=tmp_path / "it's", user="postgres", timeout_s=7
    )
    assert line == (
        f"IFS= read -r A && export A && cd '{tmp_path}/it'\"'\"'s' && "
        "timeout -k 5 7.000 runuser -u postgres -- pwd"
    )
    assert "x y" not in line  # values travel on stdin, not on the command line


def test_environment_values_never_reach_a_command_line() -> None:
    env = {"PGPASSWORD": "s3cr3t $(id) 'q'", "B": " lead and trail "}
    line = remote_command(["sh", "-c", 'printf "%s|%s|" "$PGPASSWORD" "$B"; cat'], env=env)
    assert "s3cr3t" not in line
    stdin = env_stdin(env) + "after the values\n"
    done = subprocess.run(["sh", "-c", line], input=stdin, capture_output=True, text=True)
    assert done.stdout == "s3cr3t $(id) 'q'| lead and trail |after the values\n"
    with pytest.raises(ExecutorError, match="newline"):
        env_stdin({"A": "two\nlines"})


def test_remote_command_refuses_bad_environment_names() -> None:
    with pytest.raises(ExecutorError, match="environment variable"):
        remote_command(["true"], env={"A;rm": "1"})
    with pytest.raises(ExecutorError, match="empty"):
        remote_command([])


def test_remote_command_runs_locally_with_env_and_cwd(tmp_path) -> None:
    env = {"V": "$(id)"}
    line = remote_command(
        ["sh", "-c", 'printf "%s|%s" "$PWD" "$V"'], env=env, cwd=tmp_path, timeout_s=5
    )
    out = subprocess.run(
        ["sh", "-c", line], input=env_stdin(env), capture_output=True, text=True, check=True
    ).stdout
    assert out == f"{tmp_path}|$(id)"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("address", "10.0.0.1; rm -rf /", "not a host name"),
        ("address", "$(id)", "not a host name"),
        ("port", 70000, "outside"),
        ("user", "root; id", "account name"),
        ("workdir", "relative/path", "absolute path"),
        ("workdir", "/tmp/$(id)", "absolute path"),
        ("roles", ["sut", "db"], "roles"),
        ("link_timeout_s", 1, "link_timeout_s must be at least 4"),
        ("ram_mib", 0, "ram_mib must be a whole number"),
        ("ram_mib", "8G", "ram_mib must be a whole number"),
        ("cores", True, "cores must be a whole number"),
        ("cores", 1.5, "cores must be a whole number"),
    ],
)
def test_host_validation_names_the_bad_value(field: str, value: object, message: str) -> None:
    entry = {"name": "n1", "address": "127.0.0.1", field: value}
    with pytest.raises(ConfigError, match=message):
        Host.from_mapping(entry, {})


def test_a_declared_share_narrows_the_machine_and_never_widens_it() -> None:
    from harness.hosts.machine import Machine

    host = Machine(ram_bytes=8 * 2**30, cores=4)
    assert host.within(2048, 2, "host 'n1'") == Machine(ram_bytes=2 * 2**30, cores=2)
    assert host.within(None, None, "host 'n1'") == host
    assert host.within(None, 1, "host 'n1'") == Machine(ram_bytes=8 * 2**30, cores=1)
    with pytest.raises(ConfigError, match=r"host 'n1': ram_mib 9000 is more .*8192 MiB"):
        host.within(9000, None, "host 'n1'")
    with pytest.raises(ConfigError, match=r"host 'n1': cores 8 is more than the host has \(4\)"):
        host.within(None, 8, "host 'n1'")


def test_watch_link_sets_keepalives_and_the_tcp_user_timeout() -> None:
    import socket

    class Transport:  # paramiko's Transport, as far as watch_link touches it
        def __init__(self) -> None:
            self.sock = socket.socket()
            self.keepalive = 0

        def set_keepalive(self, interval: int) -> None:
            self.keepalive = interval

    transport = Transport()
    try:
        watch_link(transport, 20.0)
        sock = transport.sock
        assert transport.keepalive == 5
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 5
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == 20000
    finally:
        transport.sock.close()


@pytest.mark.parametrize("secret", ["password", "passphrase", "Password"])
def test_inventory_refuses_credentials(secret: str) -> None:
    with pytest.raises(ConfigError, match="may not be set in an inventory"):
        Host.from_mapping({"name": "n1", "address": "h1", secret: "hunter2"}, {})


def test_inventory_roles_defaults_and_errors() -> None:
    inventory = Inventory.from_config(
        "lab",
        [
            {"name": "a", "address": "10.0.0.1"},
            {"name": "b", "address": "10.0.0.2"},
            {"name": "gen", "address": "10.0.0.9", "roles": "load"},
        ],
        {"user": "tuner", "port": 2200},
    )
    assert [h.name for h in inventory.sut] == ["a", "b"]
    assert inventory.load is not None and inventory.load.name == "gen"
    assert inventory.sut[0].target == "tuner@10.0.0.1:2200"
    assert inventory.sut[0].strict_host_key_checking is True
    with pytest.raises(ConfigError, match="used twice"):
        Inventory.from_config("x", [{"name": "a", "address": "h"}] * 2)
    with pytest.raises(ConfigError, match="no host has the role 'sut'"):
        Inventory.from_config("x", [{"name": "a", "address": "h", "roles": ["load"]}])
    with pytest.raises(ConfigError, match="unknown setting"):
        Inventory.from_config("x", [{"name": "a", "address": "h", "adress": "typo"}])


def test_adapter_handover_by_declared_placement() -> None:
    cluster = Cluster.local()
    assert adapter_kwargs("postgres", "systems.postgres.PostgresSystem", cluster) == {
        "executor": cluster.master
    }
    assert adapter_kwargs("cassandra", "systems.cassandra.CassandraSystem", cluster) == {
        "cluster": cluster
    }
    with pytest.raises(ConfigError, match="declares placement 'local'") as info:
        adapter_kwargs("synthetic10", "systems.synthetic.SyntheticSystem", cluster, "lab")
    assert "inventory 'lab'" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ConfigError, match="declares placement 'local'"):  # before connecting
        check_placement("sqlite", "systems.sqlite.SQLiteSystem", "lab")
    assert check_placement("hive", "systems.hadoop.HiveHadoopSystem") == "cluster"
    with pytest.raises(ConfigError, match="cannot load adapter"):
        adapter_kwargs("nope", "systems.nope.Nope", cluster)
    with pytest.raises(ConfigError, match="not a System adapter"):
        adapter_kwargs("path", "pathlib.Path", cluster)


class _Undeclared(System):
    """An adapter that takes an executor but declares nothing: it is not handed one."""

    def __init__(self, executor: object = None) -> None:
        self.executor = executor

    def apply(self, config: Config) -> None:
        pass


def test_a_constructor_keyword_alone_does_not_make_an_adapter_remote() -> None:
    target = f"{__name__}._Undeclared"
    with pytest.raises(ConfigError, match="declares placement 'local'"):
        adapter_kwargs("undeclared", target, Cluster.local())


def test_cluster_writes_every_node_and_runs_in_order(tmp_path) -> None:
    nodes = (LocalExecutor(), LocalExecutor(), LocalExecutor())
    cluster = Cluster(nodes, nodes[0])
    cluster.write_all(tmp_path / "f.conf", "k = v\n")
    assert (tmp_path / "f.conf").read_text() == "k = v\n"
    order = tmp_path / "order"
    for reverse in (False, True):
        results = cluster.run_all(
            ["sh", "-c", 'echo "$0" >> "$1"', str(reverse), str(order)], reverse=reverse
        )
        assert len(results) == 3 and all(r.ok for r in results)
    assert order.read_text().split() == ["False"] * 3 + ["True"] * 3
    with pytest.raises(ConfigError):
        Cluster((), nodes[0])


def test_hosts_group_composes(compose_cfg: Callable[..., DictConfig]) -> None:
    cfg = compose_cfg()
    assert cfg.hosts.name == "none" and list(cfg.hosts.hosts) == []
    cfg = compose_cfg("hosts=example_cluster")
    inventory = Inventory.from_config(cfg.hosts.name, cfg.hosts.hosts, cfg.hosts.common)
    assert len(inventory.sut) == 3 and inventory.load is not None
    cfg = compose_cfg("hosts=loopback")
    assert Inventory.from_config(cfg.hosts.name, cfg.hosts.hosts, cfg.hosts.common).sut
