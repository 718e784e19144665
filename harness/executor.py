"""Executors run commands and move files on one host; adapters never call subprocess directly.

Commands are argument lists, never shell strings built by concatenation: the local executor
passes them to the OS as is, and a remote executor joins them with :func:`shlex.join`, so a knob
value or a path can never inject shell syntax. Every failure leaves this module as a
:class:`~harness.errors.ExecutorError` (or :class:`CommandTimeout`) naming host, command and the
tail of its output.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ExecutorError

__all__ = ["CommandResult", "CommandTimeout", "Executor", "LocalExecutor", "tail"]

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
    ) -> CommandResult:
        """Run ``command`` to completion. ``check`` raises ExecutorError on a non-zero exit;
        ``user`` runs it as that (unprivileged) user when the executor is root."""

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
            stdout, stderr = proc.communicate(input=input_text, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            stdout, stderr = proc.communicate()
            raise CommandTimeout(
                f"on {self.host}: `{shlex.join(argv)}` exceeded {timeout_s:g}s and was killed",
                stdout,
                stderr,
            ) from None
        except BaseException:  # Ctrl-C: never leave the child running
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
