"""The queue of real-system sessions behind a real figure, run in order and restartable.

    python -m paper.real_queue status                   # finished, running, stopped, not started
    python -m paper.real_queue run                      # continue Fig. 6's queue, 2 seeds
    python -m paper.real_queue run --stop-at 20:15      # stop (resumably) by 20:15 UTC
    python -m paper.real_queue run --systems mysql postgres --seeds 3
    python -m paper.real_queue run --figure fig7        # Fig. 7's queue (also fig10a)

Each queued session is one job of ``paper/conf/experiment/<figure>_real.yaml`` (budget 100, the
default re-measured every 10 tests, the answer confirmed against the default 3 times each,
alternating), named ``<figure>-<system>-<workload>-<tuner>-s<seed>``; what each figure runs is
:mod:`paper.real_figures`. The experiment sets ``session.existing=resume``, so running the
queue again skips every finished session and continues a stopped one from its stored tests:
the driver can be killed, or the machine stopped, at any time. A session runs in a working
folder, ``results/real/<figure>/sessions/<session>/``, packed when it finishes into the
figure's committed ``sessions.jsonl`` (:mod:`paper.real_pack`). Sessions run one at a time (a
lock file refuses a second driver): on 2 shared cores two sessions would measure each other.

The order is a system's sessions for both seeds (all four tuners each), then the next system,
so every finished system is a complete panel of >= 2 seeds.

With ``--stop-at``, a session starts only when its expected time left fits before then (the
median of the row's sessions that ran in one go, from ``queue.jsonl``, else the estimate in
:mod:`paper.real_figures`; 10 % slack). A session that spans two runs of the queue may span
two machines (these VMs differ by a quarter in Tomcat's throughput), so a shorter session
further down the queue runs instead, and the long one waits for a run with time for it. A
session that overruns its estimate is still interrupted at the stop-at time, resumably.

Before each session the driver waits (``--patience``, 15 min at most) until less than a quarter
of the CPU is busy (``--quiet``): another job would be measured with the session's tests.
Each session runs in a control group of its own (cgroup v2, where the driver may make one:
:mod:`harness.hosts.other_work`), so each of its tests records the share of the machine's CPU that
other work took (``other_cpu``) and the hypervisor's steal time; a process the session leaves
running is killed when it ends. Beside each test's load average (``loadavg_1m``), the driver
appends to ``results/real/<figure>/queue.jsonl`` the machine's load when each session starts
and ends and the session's exit code; its output goes to ``logs/<session>.log`` there.
"""

from __future__ import annotations

import argparse
import datetime as dt
import fcntl
import functools
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from harness.hosts.other_work import CGROUP_ENV, join, own_cgroup
from paper.real_figures import FIGURES, RealFigure, Row
from paper.real_pack import pack_finished, session_state

__all__ = ["main", "planned", "session_state"]

#: Exit code of a session the driver (or a signal) interrupted: the queue stops there.
INTERRUPTED = 130


def planned(
    rows: Sequence[Row], seeds: int, tuners: Sequence[str]
) -> Iterator[tuple[Row, str, int]]:
    """(row, tuner, seed) in queue order: each row's seeds in turn, every tuner per seed."""
    for row in rows:
        for seed in range(seeds):
            for tuner in tuners:
                yield row, tuner, seed


def command(
    figure: RealFigure, row: Row, tuner: str, seed: int, results_dir: Path, extra: Sequence[str]
) -> list[str]:
    """The harness command of one queued session."""
    return [
        sys.executable, "-m", "harness", f"+experiment={figure.name}_real",
        f"system={row.system}", f"workload={row.workload}", f"tuner={tuner}", f"seed={seed}",
        *figure.overrides, *row.cuts, *figure.tuner_overrides.get(tuner, ()),
        f"results_dir={results_dir}", *extra,
    ]  # fmt: skip


def _log_event(results_dir: Path, **event: Any) -> None:
    event = {"at": round(time.time(), 1), "load": [round(x, 2) for x in os.getloadavg()], **event}
    with (results_dir / "queue.jsonl").open("a") as fh:
        fh.write(json.dumps(event) + "\n")


def cpu_busy(seconds: float = 2.0) -> float:
    """Share of the machine's CPU time that was busy over the next ``seconds`` (/proc/stat)."""

    def sample() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = fields[3] + fields[4]  # idle + iowait
        return sum(fields[:8]) - idle, sum(fields[:8])

    busy0, total0 = sample()
    time.sleep(seconds)
    busy1, total1 = sample()
    return (busy1 - busy0) / max(total1 - total0, 1)


def wait_until_quiet(limit: float, patience_s: float, poll_s: float = 10.0) -> float:
    """Wait (at most ``patience_s``) until under ``limit`` of the CPU is busy; the last share.
    Another job on 2 cores would be measured with the session: better to start late."""
    started = time.monotonic()
    busy = cpu_busy()
    while busy > limit and time.monotonic() - started < patience_s:
        time.sleep(poll_s)
        busy = cpu_busy()
    return busy


def _deadline(text: str | None) -> float | None:
    """``HH:MM`` (UTC, today or tomorrow) or an ISO time, as a Unix time."""
    if text is None:
        return None
    now = dt.datetime.now(dt.UTC)
    try:
        when = dt.datetime.fromisoformat(text)
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
    except ValueError:
        try:
            clock = dt.time.fromisoformat(text)
        except ValueError:
            raise SystemExit(f"error: --stop-at {text!r} is not HH:MM or an ISO time") from None
        when = now.replace(hour=clock.hour, minute=clock.minute, second=0, microsecond=0)
        if when <= now:
            when += dt.timedelta(days=1)
    return when.timestamp()


def _run_one(argv: list[str], log_path: Path, deadline: float | None, group: Path | None) -> int:
    """Run one session to its end, or interrupt it (SIGINT, as Ctrl-C) at the deadline or when
    the driver is told to stop; the harness then stops its servers and keeps every test. In a
    control group of its own (``group``), each test records the CPU time that other work took."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("a") as log:
        log.write(f"\n== {dt.datetime.now(dt.UTC):%Y-%m-%dT%H:%M:%SZ} {' '.join(argv)}\n")
        log.flush()
        # Its own session: a Ctrl-C at the terminal reaches the driver only, which passes one
        # SIGINT on (two would cut the harness's orderly stop short).
        env = {**os.environ, CGROUP_ENV: str(group)} if group else None
        child = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env,
            preexec_fn=functools.partial(join, group) if group else None,  # joins, then execs
        )  # fmt: skip
        stopping = False

        def stop(signum: int, frame: object) -> None:
            nonlocal stopping
            if not stopping:
                stopping = True
                child.send_signal(signal.SIGINT)

        previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            while child.poll() is None:
                if deadline is not None and time.time() >= deadline and not stopping:
                    stop(signal.SIGINT, None)
                time.sleep(1.0)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return INTERRUPTED if stopping else child.returncode


def run(figure: RealFigure, rows: Sequence[Row], args: argparse.Namespace) -> int:
    """Run the queue's sessions that have not finished, one at a time; 0 when all finished
    (or the rest wait for a run with time for them), 130 when one was interrupted, else 1."""
    results_dir: Path = args.results_dir
    results_dir.mkdir(parents=True, exist_ok=True)
    lock = (results_dir / "queue.lock").open("w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(
            f"error: another queue driver holds {results_dir / 'queue.lock'}; wait for it "
            "or stop it (it interrupts its session resumably)",
            file=sys.stderr,
        )
        return 1
    deadline = _deadline(args.stop_at)
    failed = failed_at_start = 0
    waiting: list[str] = []  # sessions that did not fit before the stop-at time
    for row, tuner, seed in planned(rows, args.seeds, args.tuners):
        name = row.session(figure.name, tuner, seed)
        state, tests = session_state(results_dir, name)
        if state == "finished":
            continue
        measured = measured_minutes(results_dir)
        if deadline is not None:
            left_min = minutes_left(figure, row, tuner, tests, measured)
            if time.time() + left_min * 60 > deadline:
                waiting.append(name)
                print(f"{name}: ~{left_min:.0f} min left does not fit before --stop-at; skipped")
                continue
        doing = f"continuing after {tests} tests" if tests else "starting"
        minutes, sessions = session_minutes(figure, row, tuner, measured)
        about = f"~{minutes:.0f} min" + (f", median of {sessions} measured" if sessions else "")
        print(f"{time.strftime('%H:%M:%S')} {name}: {doing} ({about})", flush=True)
        busy = wait_until_quiet(args.quiet, args.patience * 60)
        if busy > args.quiet:
            print(f"warning: {100 * busy:.0f}% of the CPU is busy as {name} starts", flush=True)
        _log_event(
            results_dir, session=name, event="start", tests_before=tests, cpu_busy=round(busy, 3)
        )
        with own_cgroup(name, parent="harness-queue") as group:
            code = _run_one(
                command(figure, row, tuner, seed, results_dir, args.overrides),
                results_dir / "logs" / f"{name}.log",
                deadline,
                group,
            )
        state, tests = session_state(results_dir, name)
        _log_event(results_dir, session=name, event="end", exit=code, state=state, tests=tests)
        if state == "finished":
            pack_finished(results_dir)  # the pack is the data; its folder goes
        print(
            f"{time.strftime('%H:%M:%S')} {name}: {state}, {tests} tests, exit code {code}",
            flush=True,
        )
        if code == INTERRUPTED:
            print("interrupted: run the queue again to continue this session", file=sys.stderr)
            return INTERRUPTED
        if code != 0:  # aborted (e.g. the default crashed): the next session still runs
            failed += 1
            log = results_dir / "logs" / f"{name}.log"
            print(f"  its last line: {_last_line(log)}  (whole log: {log})", flush=True)
            # Two sessions in a row that fail before any test mean the harness itself cannot
            # start (a missing package, a wrong interpreter), not a system's bad luck: going
            # on would only mark the whole queue failed in seconds.
            failed_at_start = failed_at_start + 1 if tests == 0 else 0
            if failed_at_start >= 2:
                print(
                    "error: two sessions in a row failed before their first test; "
                    "fix the cause in their logs, then run the queue again",
                    file=sys.stderr,
                )
                return 1
        else:
            failed_at_start = 0
    if waiting:
        print(f"{len(waiting)} session(s) wait for a run with time for them: {', '.join(waiting)}")
    return 1 if failed else 0


#: How much longer than its estimate a session may take before it stops fitting (restarts and
#: confirmations vary: Tomcat's 5 measured sessions spanned 41.4-42.4 min).
ESTIMATE_SLACK = 1.1


def measured_minutes(results_dir: Path) -> dict[str, float]:
    """Minutes of each finished session that ran in one go (started with no tests, ended
    finished), from ``queue.jsonl``; a session run again counts with its last run."""
    starts: dict[str, float] = {}
    minutes: dict[str, float] = {}
    try:
        lines = (results_dir / "queue.jsonl").read_text().splitlines()
    except OSError:
        return {}
    for line in lines:
        event = json.loads(line)
        name = event["session"]
        if event["event"] == "start":  # a new run of the session: its earlier times are void
            starts.pop(name, None)
            minutes.pop(name, None)
            if event.get("tests_before") == 0:
                starts[name] = event["at"]
        elif event["event"] == "end" and name in starts:
            began = starts.pop(name)
            if event.get("state") == "finished" and event.get("exit") == 0:
                minutes[name] = (event["at"] - began) / 60
    # a superseded session was taken out of the pack: its time no longer describes the row
    return {n: m for n, m in minutes.items() if session_state(results_dir, n)[0] == "finished"}


def session_minutes(
    figure: RealFigure, row: Row, tuner: str, measured: dict[str, float]
) -> tuple[float, int]:
    """(minutes, sessions measured) of one of the row's sessions: the median of its measured
    sessions, else the row's estimate (a tuner with its own estimate, Fig. 7's experts, keeps
    it)."""
    if tuner in figure.tuner_minutes:
        return figure.minutes(row, tuner), 0
    prefix = f"{figure.name}-{row.system}-{row.workload}-"
    times = [
        m
        for name, m in measured.items()
        if name.startswith(prefix)
        and name.removeprefix(prefix).rsplit("-s", 1)[0] not in figure.tuner_minutes
    ]
    if not times:
        return figure.minutes(row, tuner), 0
    return statistics.median(times), len(times)


def minutes_left(
    figure: RealFigure, row: Row, tuner: str, tests: int, measured: dict[str, float]
) -> float:
    """Expected minutes for a session with ``tests`` of its 100 done, with some slack."""
    minutes, _ = session_minutes(figure, row, tuner, measured)
    return minutes * (1 - min(tests, 100) / 100) * ESTIMATE_SLACK


def running_session(results_dir: Path) -> str | None:
    """The session a live driver is running now: the last one started in ``queue.jsonl`` and
    not ended, while a driver holds the queue's lock (a killed driver's last start is not)."""
    lock_path = results_dir / "queue.lock"
    if not lock_path.exists():
        return None
    with lock_path.open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            pass  # a driver holds it
        else:
            return None
    events = results_dir / "queue.jsonl"
    lines = events.read_text().splitlines() if events.exists() else []
    last = json.loads(lines[-1]) if lines else {}
    return last["session"] if last.get("event") == "start" else None


def _last_line(log: Path) -> str:
    """The last non-empty line of a session's log (its error, when it failed)."""
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "(no log)"
    return lines[-1].strip() if lines else "(empty log)"


def status(figure: RealFigure, rows: Sequence[Row], args: argparse.Namespace) -> int:
    """Print each queued session's state, and per row and in all the hours of sessions left."""
    left = 0.0
    measured = measured_minutes(args.results_dir)
    running = running_session(args.results_dir)
    for row in rows:
        finished, row_left = 0, 0.0
        for _, tuner, seed in planned([row], args.seeds, args.tuners):
            name = row.session(figure.name, tuner, seed)
            state, tests = session_state(args.results_dir, name)
            finished += state == "finished"
            state = "running" if name == running else state
            if state != "finished":
                row_left += minutes_left(figure, row, tuner, tests, measured) / ESTIMATE_SLACK
            print(f"{name:<48} {state:<12} {tests:>4} tests")
        total = args.seeds * len(args.tuners)
        print(
            f"== {row.system}/{row.workload}: {finished} of {total} finished, "
            f"~{row_left / 60:.1f} h left (cumulative ~{(left + row_left) / 60:.1f} h)"
        )
        left += row_left
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paper.real_queue", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    parser.add_argument("action", choices=("run", "status"))
    parser.add_argument("--figure", choices=sorted(FIGURES), default="fig6")
    parser.add_argument("--systems", nargs="+", help="only these rows (by system name)")
    parser.add_argument("--seeds", type=int, default=2, help="seeds 0..N-1 per system (2)")
    parser.add_argument("--tuners", nargs="+", help="only these (default: the figure's)")
    parser.add_argument("--stop-at", help="interrupt the running session then (HH:MM UTC)")
    parser.add_argument("--results-dir", type=Path, help="default: results/real/<figure>")
    parser.add_argument(
        "--quiet",
        type=float,
        default=0.25,
        help="start a session only when less than this share of the CPU is busy (0.25) ...",
    )
    parser.add_argument(
        "--patience", type=float, default=15.0, help="... waiting at most this many minutes (15)"
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        nargs="+",
        default=[],
        metavar="KEY=VALUE",
        help="more Hydra overrides for every session (a session resumes with its own)",
    )
    args = parser.parse_args(argv)
    figure = FIGURES[args.figure]
    args.results_dir = args.results_dir or figure.results_dir
    args.tuners = args.tuners or list(figure.tuners)
    rows = [r for r in figure.rows if not args.systems or r.system in args.systems]
    unknown = set(args.systems or ()) - {r.system for r in figure.rows}
    if unknown:
        print(
            f"error: {figure.name} has no row for {sorted(unknown)}; its rows: "
            f"{', '.join(r.system for r in figure.rows)}",
            file=sys.stderr,
        )
        return 2
    if args.action == "run":
        return run(figure, rows, args)
    return status(figure, rows, args)


if __name__ == "__main__":
    sys.exit(main())
