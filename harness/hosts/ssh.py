"""Run commands and move files on a remote host over SSH (Fabric ``Connection``).

The command line sent to the host is built by :func:`remote_command` from an argument list:
every part is quoted with :func:`shlex.quote`, environment names are validated and their values
travel on the command's stdin (:func:`env_stdin`), never on a command line that every user of
the host can read in ``ps`` (passwords such as ``PGPASSWORD`` go this way), and the time
limit is enforced *on the host* by GNU ``timeout`` (which kills the command's whole process
group) as well as locally, so a hung benchmark never outlives its test. paramiko and invoke
exceptions never leave this module: they become :class:`~harness.errors.ExecutorError` (or
:class:`~harness.executor.CommandTimeout`) naming the host and the command.

Host-key checking is on by default (Fabric's own default silently accepts unknown hosts): keys
come from ``~/.ssh/known_hosts`` and the host's ``known_hosts`` file, and an unknown or changed
key is refused with a message saying how to add it — or opt out per host with
``strict_host_key_checking: false``.

Live output (``on_line``): Fabric's reader threads write each chunk into a line splitter that
calls ``on_line`` per complete line, from those threads. A streamed command first reports its
session id on stderr (a marker line, never passed on nor kept in the output: sshd starts each
command as a session leader, so every process it starts shares that id). A callback that raises
makes Fabric close the channel; the executor then kills the whole session on the host
(``pkill -KILL -s <sid>``, which also reaches the group GNU ``timeout`` made) and raises the
callback's exception.
"""

from __future__ import annotations

import io
import logging
import re
import secrets
import shlex
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.errors import ExecutorError, HarnessError, HostUnreachable
from harness.executor import CommandResult, CommandTimeout, Executor, LineCallback
from harness.hosts.inventory import Host

__all__ = ["SSHExecutor", "env_stdin", "remote_command", "watch_link"]

log = logging.getLogger(__name__)

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: GNU timeout's exit codes: 124 = timed out (TERM), 137 = killed after the -k grace period.
_TIMEOUT_CODES = (124, 137)
_KILL_GRACE_S = 5


def remote_command(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    user: str | None = None,
    timeout_s: float | None = None,
) -> str:
    """One shell line that runs ``command`` safely on a POSIX host (pure; unit-tested).

    The line reads the values of ``env`` from its stdin, one line each in ``env``'s order
    (send :func:`env_stdin` first), and exports them; ``runuser`` passes them on."""
    argv = [str(part) for part in command]
    if not argv:
        raise ExecutorError("empty command")
    if user:
        argv = ["runuser", "-u", user, "--", *argv]
    if timeout_s is not None:
        argv = ["timeout", "-k", str(_KILL_GRACE_S), f"{max(timeout_s, 0.1):.3f}", *argv]
    line = shlex.join(argv)
    if cwd is not None:
        line = f"cd {shlex.quote(str(cwd))} && {line}"
    if env:
        _check_env(env)
        reads = " && ".join(f"IFS= read -r {name}" for name in env)
        line = f"{reads} && export {' '.join(env)} && {line}"
    return line


def env_stdin(env: Mapping[str, str] | None) -> str:
    """What the line of :func:`remote_command` reads first on stdin: ``env``'s values."""
    if not env:
        return ""
    _check_env(env)
    return "".join(f"{value}\n" for value in env.values())


def _check_env(env: Mapping[str, str]) -> None:
    bad = [name for name in env if not _ENV_NAME.match(name)]
    if bad:
        raise ExecutorError(f"invalid environment variable name(s): {bad}")
    multiline = [name for name, value in env.items() if "\n" in value or "\0" in value]
    if multiline:
        raise ExecutorError(f"environment value(s) of {multiline} hold a newline or NUL")


class SSHExecutor(Executor):
    """An :class:`~harness.executor.Executor` for one inventory host, over one SSH connection
    (opened on first use, reused for every command, reopened once if it dropped)."""

    def __init__(self, host: Host) -> None:
        self.spec = host
        self.host = host.name
        self.address = host.address
        self._connection: Any = None
        self._lock = threading.Lock()  # one command at a time per connection
        self._is_root: bool | None = None

    # -- connection ------------------------------------------------------------------------
    def _connect(self) -> Any:
        if self._connection is not None and self._connection.is_connected:
            return self._connection
        from fabric import Connection
        from paramiko.client import AutoAddPolicy, RejectPolicy

        spec = self.spec
        connect_kwargs: dict[str, Any] = {
            "banner_timeout": spec.connect_timeout_s,
            "auth_timeout": spec.connect_timeout_s,
        }
        if spec.key_file:
            connect_kwargs.update(
                key_filename=str(Path(spec.key_file).expanduser()),
                look_for_keys=False,
                allow_agent=False,
            )
        connection = Connection(
            spec.address,
            user=spec.user,
            port=spec.port,
            connect_timeout=int(max(1, spec.connect_timeout_s)),
            connect_kwargs=connect_kwargs,
        )
        client = connection.client
        if spec.strict_host_key_checking:
            client.set_missing_host_key_policy(RejectPolicy())
            _load_known_hosts(client, spec.known_hosts)
        else:
            log.warning(
                "host %s: host-key checking is OFF (strict_host_key_checking: false)", spec.name
            )
            client.set_missing_host_key_policy(AutoAddPolicy())
        try:
            connection.open()
        except Exception as exc:  # paramiko/socket errors of every kind end here
            raise HostUnreachable(self._connect_message(exc)) from None
        watch_link(connection.transport, spec.link_timeout_s)
        self._connection = connection
        return connection

    def _connect_message(self, exc: BaseException) -> str:
        spec = self.spec
        text = str(exc) or type(exc).__name__
        if "not found in known_hosts" in text:
            hint = (
                f"its host key is unknown: add it with `ssh-keyscan -p {spec.port} "
                f"{spec.address} >> ~/.ssh/known_hosts` (check the fingerprint), set "
                "known_hosts: <file> for this host, or opt out with "
                "strict_host_key_checking: false"
            )
        elif type(exc).__name__ == "BadHostKeyException":
            hint = "its host key CHANGED since it was recorded; refusing (possible spoofing)"
        elif type(exc).__name__ in ("AuthenticationException", "PasswordRequiredException"):
            hint = (
                "authentication failed: check key_file, ~/.ssh/config or the SSH agent "
                "(passwords are not supported)"
            )
        elif isinstance(exc, (socket.timeout, TimeoutError)):
            hint = f"no answer within {spec.connect_timeout_s:g}s"
        else:
            hint = text
        return f"cannot connect to host {spec.name} ({spec.target}): {hint}"

    def check_reachable(self) -> float:
        """Connect and run ``true``; return the round trip in seconds (or raise)."""
        started = time.perf_counter()
        self.run(["true"], timeout_s=self.spec.connect_timeout_s + 20)
        return time.perf_counter() - started

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    # -- Executor ----------------------------------------------------------------------------
    def session_dir(self, local_workdir: Path) -> Path:
        return Path(self.spec.workdir) / Path(local_workdir).name

    def run(
        self,
        command: Sequence[str],
        *,
        timeout_s: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        user: str | None = None,
        check: bool = True,
        input_text: str | None = None,
        on_line: LineCallback | None = None,
    ) -> CommandResult:
        if user is not None and not self._root():
            user = None  # as on the local executor: only root switches users
        line = remote_command(command, env=env, cwd=cwd, user=user, timeout_s=timeout_s)
        argv = tuple(str(part) for part in command)
        started = time.perf_counter()
        stdin = env_stdin(env) + (input_text or "") if env or input_text is not None else None
        streamed = _Streamed(on_line) if on_line is not None else None
        if streamed is not None:
            line = f"echo {_SID_MARK}$$ >&2; {line}"
        try:
            result = self._invoke(line, argv, timeout_s, stdin, streamed)
        except _CallbackStopped as stop:
            self._kill_session(streamed.sid if streamed else None, argv)
            raise stop.inner from None
        duration = time.perf_counter() - started
        if result.exited is None or result.exited < 0:
            # The channel closed without an exit status: the connection was lost while the
            # command ran. Not the configuration's fault, and not safe to rerun blindly.
            self.close()
            raise HostUnreachable(
                f"on {self.host} ({self.spec.target}): the connection was "
                f"lost while `{shlex.join(argv)}` ran"
            )
        stderr = _without_mark(result.stderr) if streamed is not None else result.stderr
        outcome = CommandResult(self.host, argv, result.exited, result.stdout, stderr, duration)
        if timeout_s is not None and result.exited in _TIMEOUT_CODES:
            raise CommandTimeout(
                f"on {self.host}: `{shlex.join(argv)}` exceeded {timeout_s:g}s and was killed",
                result.stdout,
                stderr,
            )
        if check and not outcome.ok:
            raise ExecutorError(outcome.describe())
        return outcome

    def _invoke(
        self,
        line: str,
        argv: tuple[str, ...],
        timeout_s: float | None,
        input_text: str | None,
        streamed: _Streamed | None = None,
    ) -> Any:
        from invoke.exceptions import CommandTimedOut, ThreadException

        # The host enforces timeout_s; the local limit only catches a dead connection.
        local_limit = None if timeout_s is None else timeout_s + _KILL_GRACE_S + 30
        with self._lock:
            for attempt in (1, 2):
                connection = self._connect()
                # a fresh stream per attempt: a retry must send the whole input again
                stream: Any = io.StringIO(input_text) if input_text is not None else False
                try:
                    return connection.run(
                        line,
                        warn=True,
                        in_stream=stream,
                        timeout=local_limit,
                        **_output_streams(streamed),
                    )
                except ThreadException as exc:  # a line callback raised: the channel is closed
                    raise _CallbackStopped(_callback_error(exc)) from None
                except CommandTimedOut:
                    self.close()
                    raise CommandTimeout(
                        f"on {self.host}: `{shlex.join(argv)}` gave no answer "
                        f"within {local_limit:g}s (connection dropped?)"
                    ) from None
                except Exception as exc:
                    self.close()
                    if isinstance(exc, HostUnreachable):
                        raise
                    detail = (
                        f"on {self.host} ({self.spec.target}): `{shlex.join(argv)}` "
                        f"failed: {str(exc) or type(exc).__name__}"
                    )
                    if not _is_transport_error(exc):
                        raise ExecutorError(detail) from None
                    if attempt == 2:
                        raise HostUnreachable(f"{detail} (connection lost twice)") from None
                    log.warning("host %s: connection lost (%s); reconnecting", self.host, exc)
        raise AssertionError("unreachable")

    def _kill_session(self, sid: str | None, argv: tuple[str, ...]) -> None:
        """Kill every process of a stopped command's session on the host."""
        if sid is None or not sid.isdigit() or int(sid) <= 1:
            log.warning(
                "on %s: `%s` was stopped before it reported its session; it ends "
                "at its next write or at its time limit",
                self.host,
                shlex.join(argv),
            )
            return
        try:
            self.run(["pkill", "-KILL", "-s", sid], check=False, timeout_s=10)
        except HarnessError as exc:
            log.warning("on %s: could not kill the stopped command's session: %s", self.host, exc)

    def _root(self) -> bool:
        if self._is_root is None:
            self._is_root = self.run(["id", "-u"]).stdout.strip() == "0"
        return self._is_root

    def write_text(self, path: str | Path, text: str, mode: int = 0o644) -> None:
        target = Path(path)
        temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        with self._lock:
            connection = self._connect()
            try:
                connection.put(io.BytesIO(text.encode()), remote=str(temporary))
            except Exception as exc:
                raise self._file_error(exc, f"cannot write {target}") from None
        self.run(["chmod", f"{mode:o}", str(temporary)])
        self.run(["mv", "-f", str(temporary), str(target)])

    def read_text(self, path: str | Path) -> str:
        buffer = io.BytesIO()
        with self._lock:
            connection = self._connect()
            try:
                connection.get(str(path), local=buffer)
            except Exception as exc:
                raise self._file_error(exc, f"cannot read {path}") from None
        return buffer.getvalue().decode(errors="replace")

    def _file_error(self, exc: BaseException, what: str) -> HarnessError:
        """A missing file is the command's business (ExecutorError); a dead link is not."""
        detail = f"on {self.host}: {what}: {str(exc) or type(exc).__name__}"
        connection = self._connection
        alive = connection is not None and connection.is_connected
        if alive or not _is_transport_error(exc):
            return ExecutorError(detail)
        self.close()
        return HostUnreachable(f"{detail} (connection lost)")

    def exists(self, path: str | Path) -> bool:
        return self.run(["test", "-e", str(path)], check=False).ok

    def free_port(self) -> int:
        probe = "import socket; s = socket.socket(); s.bind(('', 0)); print(s.getsockname()[1])"
        result = self.run(["python3", "-c", probe], check=False, timeout_s=30)
        if not result.ok or not result.stdout.strip().isdigit():
            raise ExecutorError(
                f"on {self.host}: cannot find a free port (python3 is needed "
                f"on the host): {result.stderr.strip()[-200:]}"
            )
        return int(result.stdout.strip())


def watch_link(transport: Any, dead_after_s: float) -> None:
    """Make a dead link fail the connection within about ``dead_after_s`` seconds.

    A command that prints nothing (a benchmark, a restart) leaves the connection idle, and
    TCP alone notices a cut link only after ~15 minutes of retransmission, so the session
    would hang. SSH keepalives every quarter of the limit give the connection something to
    acknowledge; ``TCP_USER_TIMEOUT`` makes the kernel drop it when nothing is acknowledged
    for ``dead_after_s``, and TCP keepalive probes do the same below SSH. paramiko then
    closes the channel, and :meth:`SSHExecutor.run` raises ``HostUnreachable``.
    """
    interval = max(1, int(dead_after_s // 4))
    transport.set_keepalive(interval)
    sock = getattr(transport, "sock", None)
    if not isinstance(sock, socket.socket):  # a proxy channel: SSH keepalives only
        return
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for option, value in (
        ("TCP_KEEPIDLE", interval),
        ("TCP_KEEPINTVL", interval),
        ("TCP_KEEPCNT", 3),
        ("TCP_USER_TIMEOUT", int(dead_after_s * 1000)),  # milliseconds
    ):
        if hasattr(socket, option):  # Linux; other kernels keep their defaults
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, option), value)


def _is_transport_error(exc: BaseException) -> bool:
    name = type(exc).__name__
    return isinstance(exc, (EOFError, ConnectionError, OSError)) or name in (
        "SSHException",
        "ChannelException",
    )


def _load_known_hosts(client: Any, extra: str | None) -> None:
    default = Path("~/.ssh/known_hosts").expanduser()
    if default.exists():
        client.load_host_keys(str(default))
    if extra:
        path = Path(extra).expanduser()
        if not path.exists():
            raise ExecutorError(f"known_hosts file {path} does not exist")
        client.load_host_keys(str(path))


#: The start of the line a streamed command prints first: its session id on the host.
_SID_MARK = "__harness_session_id__="


class _CallbackStopped(Exception):
    """A line callback raised ``inner`` (the command must be killed, then ``inner`` raised)."""

    def __init__(self, inner: BaseException) -> None:
        super().__init__(str(inner))
        self.inner = inner


class _Streamed:
    """A streamed command's line callback, and the session id it reported."""

    def __init__(self, on_line: LineCallback) -> None:
        self.on_line = on_line
        self.sid: str | None = None

    def line(self, text: str) -> None:
        if self.sid is None and text.startswith(_SID_MARK):
            self.sid = text[len(_SID_MARK) :].strip()
            return
        self.on_line(text)


class _LineSplitter(io.TextIOBase):
    """A stream Fabric writes a command's output into: calls ``on_line`` per whole line."""

    def __init__(self, on_line: LineCallback) -> None:
        super().__init__()
        self._on_line = on_line
        self._partial = ""

    def write(self, text: str) -> int:
        *lines, self._partial = (self._partial + text).split("\n")
        for whole in lines:
            self._on_line(whole)
        return len(text)


def _output_streams(streamed: _Streamed | None) -> dict[str, Any]:
    """Fabric's output options: hidden, or written line by line into the callback."""
    if streamed is None:
        return {"hide": True}
    return {
        "hide": False,
        "out_stream": _LineSplitter(streamed.line),
        "err_stream": _LineSplitter(streamed.line),
    }


def _without_mark(stderr: str) -> str:
    """A streamed command's stderr without the session-id line it began with."""
    first, _, rest = stderr.partition("\n")
    return rest if first.startswith(_SID_MARK) else stderr


def _callback_error(exc: Exception) -> BaseException:
    """The exception a line callback raised inside Fabric's reader thread."""
    wrapped = getattr(exc, "exceptions", ())
    inner = [w.value for w in wrapped if isinstance(getattr(w, "value", None), BaseException)]
    return inner[0] if inner else ExecutorError(f"reading a command's output failed: {exc}")
