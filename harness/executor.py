"""Executors run commands and move files on one host; adapters never call subprocess directly.

Commands are argument lists, never shell strings built by concatenation: the local executor
passes them to the OS as is, and a remote executor joins them with :func:`shlex.join`, so a knob
value or a path can never inject shell syntax. Every failure leaves this module as a
:class:`~harness.errors.ExecutorError` (or :class:`CommandTimeout`) naming host, command and the
tail of its output.

A caller that wants a command's output while it runs passes ``on_line``: it is called with each
line (stdout and stderr, each line without its newline, in arrival order) in the caller's own
thread, and the full output is still returned at the end. A callback that raises stops the
command: the executor kills its whole process group and lets the exception through (this is
how a test is stopped early, :mod:`harness.intervals`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ExecutorError

__all__ = ["CommandResult", "CommandTimeout", "Executor", "LineCallback", "LocalExecutor", "tail"]

#: Called with each output line of a running command (see the module).
LineCallback = Callable[[str], None]

log = logging.getLogger(__name__)


def tail(text: str, lines: int = 20) -> str:
    """The last ``lines`` lines of ``text`` (for error messages and artifacts)."""
    return "\n".join(text.rstrip().splitlines()[-lines:])


@dataclass(frozen=True)
class CommandResult:
    """What a finished command returned."""

    host: str
    command: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def describe(self) -> str:
        return (
            f"on {self.host}: `{shlex.join(self.command)}` exited {self.exit_code} after "
            f"{self.duration_s:.1f}s; stderr tail:\n{tail(self.stderr or self.stdout, 10)}"
        )


class CommandTimeout(ExecutorError):
    """A command exceeded its time limit and was killed (with its whole process group)."""

    def __init__(self, message: str, stdout: str = "", stderr: str = "") -> None:
        super().__init__(message)
        self.stdout = stdout
        self.stderr = stderr


class Executor(ABC):
    """Runs commands on one host. Implementations: :class:`LocalExecutor`, SSH (remote hosts)."""

    #: A display name for messages.
    host: str = "localhost"
    #: The address clients use to reach services on this host.
    address: str = "127.0.0.1"

    @abstractmethod
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
        """Run ``command`` to completion. ``check`` raises ExecutorError on a non-zero exit;
        ``user`` runs it as that (unprivileged) user when the executor is root; ``on_line``
        hears each output line as it comes (see the module)."""

    @abstractmethod
    def write_text(self, path: str | Path, text: str, mode: int = 0o644) -> None:
        """Write a whole file atomically on the host."""

    @abstractmethod
    def read_text(self, path: str | Path) -> str:
        """Read a whole file from the host."""

    @abstractmethod
    def exists(self, path: str | Path) -> bool:
        """Whether a path exists on the host."""

    def session_dir(self, local_workdir: Path) -> Path:
        """Where a session whose local work folder is ``local_workdir`` keeps its files on
        this host (the same folder locally; under the inventory's workdir remotely)."""
        return Path(local_workdir).absolute()

    def free_port(self) -> int:
        """A TCP port nobody listens on right now on this host."""
        with socket.socket() as probe:
            probe.bind((self.address, 0))
            return int(probe.getsockname()[1])

    def close(self) -> None:  # noqa: B027 - only connections need it
        """Release connections (remote executors)."""

    def which(self, program: str, extra_dirs: Sequence[str] = ()) -> str | None:
        """Absolute path of ``program`` on the host (PATH, then ``extra_dirs``), or None."""
        for folder in extra_dirs:
            candidate = f"{folder.rstrip('/')}/{program}"
            if self.exists(candidate):
                return candidate
        found = self.run(["sh", "-c", 'command -v "$0"', program], check=False)
        return found.stdout.strip() or None


class LocalExecutor(Executor):
    """Runs commands on this machine with :mod:`subprocess`.

    Each command gets its own session (process group) so a timeout kills the command and every
    child it started (benchmark clients fork workers). ``host`` and ``address`` name one local
    "host" of an inventory: several nodes of a local ring run on this machine, each serving on
    its own loopback address (127.0.0.2, 127.0.0.3, ...), the way ccm runs local clusters.
    """

    def __init__(self, host: str = "localhost", address: str = "127.0.0.1") -> None:
        self.host = host
        self.address = address

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
        argv = [str(part) for part in command]
        if user is not None and os.geteuid() == 0:
            argv = ["runuser", "-u", user, "--", *argv]
        full_env = {**os.environ, **(env or {})}
        started = time.perf_counter()
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=full_env,
                text=True,
                stdin=subprocess.PIPE if input_text is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise ExecutorError(
                f"on {self.host}: cannot run `{shlex.join(argv)}`: {exc}"
            ) from None
        try:
            if on_line is None:
                stdout, stderr = proc.communicate(input=input_text, timeout=timeout_s)
            else:
                stdout, stderr = _communicate_lines(proc, input_text, timeout_s, on_line)
        except _StreamTimeout as exc:
            raise CommandTimeout(
                f"on {self.host}: `{shlex.join(argv)}` exceeded {timeout_s:g}s and was killed",
                exc.stdout,
                exc.stderr,
            ) from None
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            stdout, stderr = proc.communicate()
            raise CommandTimeout(
                f"on {self.host}: `{shlex.join(argv)}` exceeded {timeout_s:g}s and was killed",
                stdout,
                stderr,
            ) from None
        except BaseException:  # Ctrl-C, a stopping line callback: never leave the child running
            _kill_group(proc)
            raise
        result = CommandResult(
            self.host, tuple(argv), proc.returncode, stdout, stderr, time.perf_counter() - started
        )
        if check and not result.ok:
            raise ExecutorError(result.describe())
        return result

    def write_text(self, path: str | Path, text: str, mode: int = 0o644) -> None:
        path = Path(path)
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        temporary.write_text(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)

    def read_text(self, path: str | Path) -> str:
        try:
            return Path(path).read_text()
        except OSError as exc:
            raise ExecutorError(f"on {self.host}: cannot read {path}: {exc}") from None

    def exists(self, path: str | Path) -> bool:
        return Path(path).exists()

    def which(self, program: str, extra_dirs: Sequence[str] = ()) -> str | None:
        for folder in extra_dirs:
            candidate = Path(folder) / program
            if candidate.exists():
                return str(candidate)
        return shutil.which(program)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


class _StreamTimeout(Exception):
    """A streamed command passed its time limit (it has been killed); the output so far."""

    def __init__(self, stdout: str, stderr: str) -> None:
        super().__init__("timed out")
        self.stdout, self.stderr = stdout, stderr


def _communicate_lines(
    proc: subprocess.Popen[str],
    input_text: str | None,
    timeout_s: float | None,
    on_line: LineCallback,
) -> tuple[str, str]:
    """``proc.communicate`` that calls ``on_line`` with each line as it arrives, in this thread.

    One reader thread per stream queues lines (so neither pipe can fill up and block the
    child); this thread takes them in arrival order. At the time limit the process group is
    killed and :class:`_StreamTimeout` carries the output so far; an exception from ``on_line``
    propagates (the caller kills the process group).
    """
    lines: queue.Queue[tuple[int, str | None]] = queue.Queue()
    readers = [
        threading.Thread(target=_pump, args=(stream, index, lines), daemon=True)
        for index, stream in enumerate((proc.stdout, proc.stderr))
    ]
    if input_text is not None and proc.stdin is not None:
        readers.append(threading.Thread(target=_feed_stdin, args=(proc.stdin, input_text)))
    for reader in readers:
        reader.start()
    chunks: tuple[list[str], list[str]] = ([], [])
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    open_streams = 2
    while open_streams:
        index, line = _next_line(lines, deadline, proc, chunks)
        if line is None:
            open_streams -= 1
            continue
        chunks[index].append(line)
        on_line(line.rstrip("\n"))
    remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)
    proc.wait(timeout=remaining)  # TimeoutExpired: the caller kills the group
    return "".join(chunks[0]), "".join(chunks[1])


def _next_line(
    lines: queue.Queue[tuple[int, str | None]],
    deadline: float | None,
    proc: subprocess.Popen[str],
    chunks: tuple[list[str], list[str]],
) -> tuple[int, str | None]:
    """The next queued line (None: a stream ended); past the deadline, kill and raise."""
    try:
        wait = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        return lines.get(timeout=wait)
    except queue.Empty:
        _kill_group(proc)
        while True:  # what the readers still had: the output up to the kill
            try:
                index, line = lines.get(timeout=1.0)
            except queue.Empty:
                break
            if line is not None:
                chunks[index].append(line)
        raise _StreamTimeout("".join(chunks[0]), "".join(chunks[1])) from None


def _pump(stream: object, index: int, lines: queue.Queue[tuple[int, str | None]]) -> None:
    """Queue every line of ``stream``, then None (its end)."""
    try:
        for line in stream:  # type: ignore[attr-defined]
            lines.put((index, line))
    except (OSError, ValueError):  # the pipe closed under us (the process was killed)
        pass
    finally:
        lines.put((index, None))


def _feed_stdin(stdin: object, text: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # the process exited without reading it all
        stdin.write(text)  # type: ignore[attr-defined]
        stdin.close()  # type: ignore[attr-defined]
