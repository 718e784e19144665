"""The real Fig. 6: the queue's order and refusals, the panel's numbers and verdicts from session
folders, and (integration) the driver running, interrupted and continued on real SQLite."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from harness.hosts.other_work import cgroup2_root, own_cgroup
from harness.objectives.objective import Objective
from harness.records import Observation, Status
from paper import real_panel, real_queue
from paper.real_figures import FIGURES, Row
from paper.real_pack import PACK_FILE, read_pack
from paper.real_panel import (
    LOAD_MARGIN,
    OTHER_CPU_LIMIT,
    collapsed,
    disturbed,
    loaded,
    panel,
    session_row,
    verdicts,
)
from paper.real_queue import planned, session_state

ROOT = Path(__file__).resolve().parents[2]


def _obs(trial: int, tps: float, *, default: bool = False, load: float = 1.0, **extra: object):
    return Observation(
        trial=trial,
        config={"x": trial},
        status=Status.SUCCEEDED,
        score=tps,
        metrics={"tps": tps},
        duration_s=10.0,
        is_default=default,
        extra={"loadavg_1m": load, **extra},
    )


def _session(folder: Path, tests: list[Observation], refs: list[Observation], seed: int = 0):
    folder.mkdir(parents=True)
    tags = {
        "harness.system": "sqlite",
        "harness.workload": "readwrite",
        "harness.tuner": "lhs",
        "harness.seed": str(seed),
        "harness.objective": "tps",
        "harness.direction": "max",
    }
    (folder / "session.json").write_text(json.dumps({"status": "FINISHED", "tags": tags}))
    for name, rows in (("observations.jsonl", tests), ("references.jsonl", refs)):
        (folder / name).write_text("".join(json.dumps(o.to_json()) + "\n" for o in rows))


def test_the_queue_runs_each_system_for_every_seed_and_tuner_before_the_next():
    rows = [Row("a", "w", "A", "", 1), Row("b", "w", "B", "", 1)]
    order = [(r.system, t, s) for r, t, s in planned(rows, 2, ("x", "y"))]
    assert order[:4] == [("a", "x", 0), ("a", "y", 0), ("a", "x", 1), ("a", "y", 1)]
    assert order[4][0] == "b" and len(order) == 8
    # the paper's six systems come first, each with a stated protocol
    fig6 = FIGURES["fig6"].rows
    assert [r.system for r in fig6[:6]] == [
        "mysql", "postgres", "tomcat", "spark", "mapreduce", "cassandra"
    ]  # fmt: skip
    assert all(r.why for r in fig6[:6])
    assert fig6[0].session("fig6", "gpbo_paper", 1) == "fig6-mysql-readwrite-gpbo_paper-s1"


def test_fig7_runs_the_expert_settings_as_one_test_and_fig10a_with_30_knobs(tmp_path):
    from paper.real_queue import command

    fig7, fig10a = FIGURES["fig7"], FIGURES["fig10a"]
    expert = command(fig7, fig7.rows[0], "expert_script", 1, tmp_path, [])
    assert "+experiment=fig7_real" in expert and "budget=2" in expert and "seed=1" in expert
    assert "budget=2" not in command(fig7, fig7.rows[0], "gpbo", 0, tmp_path, [])
    assert "system.adapter.knob_set='30'" in command(
        fig10a, fig10a.rows[1], "gpbo", 0, tmp_path, []
    )
    assert fig7.minutes(fig7.rows[0], "expert_manual") < fig7.minutes(fig7.rows[0], "gpbo")


def test_a_session_waits_for_a_quiet_machine_but_not_forever(monkeypatch):
    assert 0.0 <= real_queue.cpu_busy(0.2) <= 1.0  # read from /proc/stat
    shares = iter([0.9, 0.6, 0.1, 0.9])
    monkeypatch.setattr(real_queue, "cpu_busy", lambda: next(shares))
    assert real_queue.wait_until_quiet(0.25, patience_s=60, poll_s=0) == 0.1
    monkeypatch.setattr(real_queue, "cpu_busy", lambda: 0.9)
    assert real_queue.wait_until_quiet(0.25, patience_s=0, poll_s=0) == 0.9


def test_a_second_driver_is_refused_while_one_holds_the_lock(tmp_path, capsys):
    with (tmp_path / "queue.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        code = real_queue.main(["run", "--systems", "sqlite", "--results-dir", str(tmp_path)])
    assert code == 1
    assert "another queue driver" in capsys.readouterr().err
    assert real_queue.main(["status", "--systems", "nosuch"]) == 2


def test_the_queue_stops_when_sessions_fail_before_their_first_test(tmp_path, monkeypatch, capsys):
    """A harness that cannot start (say, the wrong interpreter) fails every session in seconds;
    the driver stops after two and shows the error, rather than marking the queue failed."""
    ran: list[str] = []

    def fails_at_import(argv: list[str], log: Path, deadline: float | None, group: object) -> int:
        ran.append(log.name)
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("Traceback ...\nModuleNotFoundError: No module named 'hydra'\n\n")
        return 1

    monkeypatch.setattr(real_queue, "_run_one", fails_at_import)
    monkeypatch.setattr(real_queue, "wait_until_quiet", lambda *a, **k: 0.0)
    argv = ["run", "--systems", "sqlite", "--seeds", "1", "--tuners", "lhs", "bestconfig",
            "gpbo_paper", "--results-dir", str(tmp_path)]  # fmt: skip
    assert real_queue.main(argv) == 1
    assert len(ran) == 2
    out, err = capsys.readouterr()
    assert "No module named 'hydra'" in out and "two sessions in a row" in err


def test_with_a_stop_at_time_only_sessions_that_fit_before_it_start(tmp_path, monkeypatch, capsys):
    """A session resumed in the next run of the queue may run on another machine; so with 30
    minutes left, Tomcat's ~42-minute sessions wait and SQLite's ~10-minute ones run until the
    next would not fit."""
    clock = [time.time()]
    stop_at = dt.datetime.fromtimestamp(clock[0] + 30 * 60, dt.UTC).isoformat()
    ran: list[str] = []

    def takes_12_minutes(argv: list[str], log: Path, deadline: float | None, group: object) -> int:
        ran.append(log.stem)
        clock[0] += 12 * 60
        return 0

    monkeypatch.setattr(real_queue, "_run_one", takes_12_minutes)
    monkeypatch.setattr(real_queue, "wait_until_quiet", lambda *a, **k: 0.0)
    monkeypatch.setattr(real_queue.time, "time", lambda: clock[0])
    tuners = ["--tuners", "lhs", "bestconfig", "gpbo_paper"]
    where = ["--stop-at", stop_at, "--results-dir", str(tmp_path)]
    argv = ["run", "--systems", "tomcat", "sqlite", "--seeds", "1", *tuners, *where]
    assert real_queue.main(argv) == 0
    assert ran == ["fig6-sqlite-readwrite-lhs-s0", "fig6-sqlite-readwrite-bestconfig-s0"]
    out = capsys.readouterr().out
    assert "fig6-tomcat-explore-lhs-s0: ~46 min left does not fit before --stop-at" in out
    assert "4 session(s) wait for a run with time for them" in out


def _ran(name: str, start: float, end: float, *, before: int = 0, code: int = 0) -> list[dict]:
    """The queue's start and end events of one run of a session."""
    state = "finished" if code == 0 else "stopped"
    return [
        {"at": start, "session": name, "event": "start", "tests_before": before},
        {"at": end, "session": name, "event": "end", "exit": code, "state": state},
    ]


def _events(folder: Path, *events: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "queue.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))


def test_the_fit_rule_uses_the_rows_sessions_measured_in_one_go(tmp_path):
    """MapReduce's sessions were estimated at 25 min and took 12: its measured median replaces
    the estimate; a resumed or superseded session's time describes nothing and is left out."""
    fig6 = FIGURES["fig6"]
    row = next(r for r in fig6.rows if r.system == "mapreduce")
    one_go, resumed, superseded = (
        row.session("fig6", "classytune_paper", 0),
        row.session("fig6", "bestconfig", 0),
        row.session("fig6", "classytune", 0),
    )
    for name in (one_go, resumed):
        _session(tmp_path / "sessions" / name, [_obs(0, 1.0, default=True)], [])
    _events(
        tmp_path,
        *_ran(one_go, 0, 720),
        *_ran(resumed, 800, 900, code=130),
        *_ran(resumed, 1000, 1400, before=40),
        *_ran(superseded, 1500, 1600),
        # run again from scratch (its first run superseded), stopped, then resumed: not one go
        *_ran(resumed, 1700, 1800),
        *_ran(resumed, 1900, 2000, code=130),
        *_ran(resumed, 2100, 2500, before=50),
    )
    measured = real_queue.measured_minutes(tmp_path)
    assert measured == {one_go: 12.0}
    assert real_queue.session_minutes(fig6, row, "gpbo_paper", measured) == (12.0, 1)
    assert real_queue.minutes_left(fig6, row, "gpbo_paper", 50, measured) == pytest.approx(6.6)
    tomcat = next(r for r in fig6.rows if r.system == "tomcat")
    assert real_queue.session_minutes(fig6, tomcat, "bestconfig", measured) == (42, 0)
    fig7 = FIGURES["fig7"]  # the experts' 2 tests keep their own estimate
    assert real_queue.session_minutes(fig7, fig7.rows[0], "expert_manual", {}) == (3, 0)
    assert real_queue.measured_minutes(tmp_path / "none") == {}


def test_status_shows_the_session_a_live_driver_runs_and_not_a_killed_drivers(tmp_path, capsys):
    row = next(r for r in FIGURES["fig6"].rows if r.system == "sqlite")
    done, now = row.session("fig6", "classytune_paper", 0), row.session("fig6", "classytune", 0)
    _session(tmp_path / "sessions" / done, [_obs(0, 1.0, default=True)], [])
    _events(tmp_path, *_ran(done, 0, 600), _ran(now, 700, 0)[0])
    (tmp_path / "sessions" / now).mkdir()
    (tmp_path / "sessions" / now / "session.json").write_text(json.dumps({"status": "RUNNING"}))
    args = ["status", "--systems", "sqlite", "--results-dir", str(tmp_path)]

    def states() -> dict[str, str]:
        lines = capsys.readouterr().out.splitlines()
        return {line.split()[0]: line.split()[1] for line in lines if not line.startswith("==")}

    (tmp_path / "queue.lock").touch()  # left by a driver that was killed
    assert real_queue.main(args) == 0
    assert states()[now] == "stopped"
    with (tmp_path / "queue.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert real_queue.running_session(tmp_path) == now
        assert real_queue.main(args) == 0
    shown = states()
    assert shown[now] == "running" and shown[done] == "finished"
    assert real_queue.running_session(tmp_path) is None  # the driver let go


def test_a_test_under_foreign_load_is_flagged_against_the_sessions_usual_load():
    assert loaded([1.0, 1.2, 1.1, 1.0 + LOAD_MARGIN + 0.5, None]) == [
        False, False, False, True, False
    ]  # fmt: skip
    assert loaded([None, None]) == [False, False]
    # a system that loads the machine itself (HDFS: ~6) is flagged only 50 % above its usual
    assert loaded([6.0, 6.4, 6.2, 8.1, 9.8]) == [False, False, False, False, True]


def test_a_test_beside_other_work_is_flagged_even_when_the_load_average_hides_it():
    usual = [_obs(i, 100.0, load=7.0, other_cpu=0.0) for i in range(4)]
    niced_job = _obs(4, 70.0, load=8.0, other_cpu=OTHER_CPU_LIMIT + 0.2)  # load +1 only
    unknown = _obs(5, 100.0, load=7.0)  # a session from before the control groups
    assert loaded([t.extra["loadavg_1m"] for t in [*usual, niced_job]]) == [False] * 5
    assert disturbed([*usual, niced_job, unknown]) == [False] * 4 + [True, False]


def test_the_kernel_threads_work_is_not_taken_for_a_job_beside_the_session():
    usual = [_obs(i, 100.0, load=2.0, other_cpu=0.0, kernel_cpu=0.0) for i in range(4)]
    # SQLite's fsyncs keep the kernel's writeback threads busy: other work, but the session's
    flushing = _obs(4, 100.0, load=2.0, other_cpu=0.023, kernel_cpu=0.02)
    beside_a_job = _obs(5, 70.0, load=2.0, other_cpu=0.043, kernel_cpu=0.02)
    older = _obs(6, 100.0, load=2.0, other_cpu=0.023)  # recorded before kernel_cpu was
    assert disturbed([*usual, flushing, beside_a_job, older]) == [False] * 5 + [True, True]


def test_the_report_counts_the_other_work_the_kernel_threads_explain(tmp_path):
    tests = [
        _obs(0, 100.0, default=True, other_cpu=0.0, kernel_cpu=0.001),
        _obs(1, 120.0, other_cpu=0.023, kernel_cpu=0.025),  # the kernel's flushing
        _obs(2, 90.0, other_cpu=0.043, kernel_cpu=0.02),  # a job beside the session
        _obs(3, 110.0, other_cpu=0.02),  # recorded before kernel_cpu was
        _obs(4, 105.0),  # no control group
    ]
    _session(tmp_path / "s", tests, [])
    row = session_row(tmp_path / "s")
    assert row is not None
    text = real_panel.report(pd.DataFrame([row]), FIGURES["fig6"])
    assert "Other work over 1% of the CPU: 3 of 4 measurements that record it." in text
    assert "Of the 3 that record kernel threads apart, 2 are over it and 1 once" in text
    assert "in 2 the kernel threads' share is at least the whole" in text
    _session(tmp_path / "old", [_obs(0, 100.0, default=True), _obs(1, 120.0)], [])
    old = session_row(tmp_path / "old")
    assert old is not None
    assert "Other work: not recorded" in real_panel.report(pd.DataFrame([old]), FIGURES["fig6"])


def test_a_session_row_reads_the_confirmation_the_defaults_and_the_load(tmp_path):
    tests = [_obs(0, 100.0, default=True), _obs(1, 150.0), _obs(2, 130.0, load=4.0)]
    refs = [
        _obs(0, 90.0, default=True, confirm="default"),
        _obs(1, 120.0, confirm="best"),
        _obs(0, 110.0, default=True, confirm="default"),
        _obs(1, 132.0, confirm="best"),
    ]
    _session(tmp_path / "s", tests, refs)
    row = session_row(tmp_path / "s")
    assert row is not None
    assert row["best_trial"] == 1 and row["best_improvement"] == pytest.approx(0.5)
    # confirmed: median of the best's runs (126) over the default's (100)
    assert row["improvement"] == pytest.approx(0.26)
    assert row["default_measurements"] == 3  # trial 0 and the 2 confirmation runs
    assert row["default_rsd"] == pytest.approx(10.0 / 100.0)
    assert row["loaded_tests"] == 1 and not row["best_loaded"]
    assert row["default_collapses"] == 0 and row["other_measurements"] == 4


def test_a_measurement_at_under_half_the_defaults_median_is_a_collapse(tmp_path):
    """Tomcat's default now and then measures ~1.5k requests/s against ~20k: the report counts
    such collapses of the default apart from those of every other configuration."""
    up, down = Objective("tps", "max"), Objective("time_s", "min")
    assert collapsed(up, 9.0, 20.0) and not collapsed(up, 11.0, 20.0)
    assert collapsed(down, 41.0, 20.0) and not collapsed(down, 39.0, 20.0)
    assert collapsed(up, 0.0, 20.0) and not collapsed(down, 0.0, 20.0)  # 0 is a value too
    tests = [_obs(0, 20.0, default=True), _obs(1, 25.0), _obs(2, 5.0)]
    refs = [_obs(0, x, default=True, confirm="default") for x in (1.5, 19.0, 21.0)]
    _session(tmp_path / "s", tests, refs)
    row = session_row(tmp_path / "s")
    assert row is not None and row["default_median"] == 19.5
    assert (row["default_collapses"], row["default_measurements"]) == (1, 4)
    assert (row["other_collapses"], row["other_measurements"]) == (1, 2)
    text = real_panel.report(pd.DataFrame([row]), FIGURES["fig6"])
    assert "the default's 1 of 4 measurements, other configurations' 1 of 2" in text


def test_a_session_is_shown_under_the_tuner_the_queue_ran_it_with(tmp_path):
    """gpbo_paper's sessions of 2026-12-04 were tagged "gpbo", the class's name."""
    tests = [_obs(0, 100.0, default=True), _obs(1, 150.0)]
    _session(tmp_path / "fig6-sqlite-readwrite-gpbo_paper-s0", tests, [])
    _session(tmp_path / "elsewhere", tests, [])
    assert session_row(tmp_path / "fig6-sqlite-readwrite-gpbo_paper-s0")["tuner"] == "gpbo_paper"  # type: ignore[index]
    assert session_row(tmp_path / "elsewhere")["tuner"] == "lhs"  # type: ignore[index]


def test_a_session_whose_answer_is_the_default_counts_zero_and_unfinished_ones_none(tmp_path):
    _session(tmp_path / "a", [_obs(0, 100.0, default=True), _obs(1, 90.0)], [])
    row = session_row(tmp_path / "a")
    assert row is not None and row["improvement"] == 0.0 and row["answer_is_default"]
    meta = json.loads((tmp_path / "a" / "session.json").read_text())
    (tmp_path / "a" / "session.json").write_text(json.dumps({**meta, "status": "INTERRUPTED"}))
    assert session_row(tmp_path / "a") is None


def _table(rows: list[tuple[str, int, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"system": "s", "workload": "w", "tuner": t, "seed": seed, "improvement": imp,
             "best_improvement": imp, "loaded_tests": 0, "best_loaded": False,
             "default_rsd": rsd, "tests": 2 if t.startswith("expert") else 100}
            for t, seed, imp, rsd in rows
        ]
    )  # fmt: skip


def test_a_difference_counts_only_beyond_twice_the_default_noise_and_with_two_seeds():
    table = panel(
        _table(
            [
                ("classytune_paper", 0, 0.50, 0.05), ("classytune_paper", 1, 0.40, 0.05),
                ("bestconfig", 0, 0.20, 0.05), ("bestconfig", 1, 0.30, 0.05),
                ("gpbo_paper", 0, 0.22, 0.05), ("gpbo_paper", 1, 0.20, 0.05),
                ("classytune", 0, 0.10, 0.05),
            ]
        )
    )  # fmt: skip
    said = verdicts(table)[("s", "w")]
    assert said[0].startswith("classytune_paper > bestconfig: +20.0 points")
    assert "beyond the noise" in said[0] and "±10.0" in said[0]
    assert said[1].startswith("bestconfig ≈ gpbo_paper") and "within the noise" in said[1]
    assert said[0].endswith("every seed of classytune_paper above every seed of bestconfig")
    assert "not judged" in said[3]  # classytune has one seed
    overlapping = panel(
        _table(
            [
                ("classytune_paper", 0, 0.60, 0.05), ("classytune_paper", 1, 0.25, 0.05),
                ("bestconfig", 0, 0.20, 0.05), ("bestconfig", 1, 0.30, 0.05),
            ]
        )
    )  # fmt: skip
    said = verdicts(overlapping)[("s", "w")]
    assert "beyond the noise" in said[0]
    assert said[0].endswith(
        "but the seeds overlap (classytune_paper's worst +25.0%, bestconfig's best +30.0%)"
    )
    assert math.isclose(table.set_index("tuner").at["bestconfig", "improvement"], 0.25)


def _driver(results: Path, *more: str) -> subprocess.Popen[str]:
    argv = [
        sys.executable, "-m", "paper.real_queue", "run", "--systems", "sqlite", "--seeds", "1",
        "--tuners", "lhs", "--results-dir", str(results), "--quiet", "1",
        "--set", "session.default_every=4", "session.confirm=1", "workload.duration_s=1",
        "workload.rows=2000", *more,
    ]  # fmt: skip
    return subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.integration
@pytest.mark.slow
def test_the_driver_stops_resumably_continues_and_then_skips_on_real_sqlite(tmp_path):
    name = "fig6-sqlite-readwrite-lhs-s0"
    driver = _driver(tmp_path, "budget=12")
    observations = tmp_path / "sessions" / name / "observations.jsonl"
    deadline = time.monotonic() + 240
    while not (observations.exists() and len(observations.read_text().splitlines()) >= 3):
        assert driver.poll() is None and time.monotonic() < deadline, driver.communicate()
        time.sleep(0.5)
    driver.send_signal(signal.SIGTERM)  # as a stopped machine's shutdown would
    out, err = driver.communicate(timeout=120)
    assert driver.returncode == 130, (out, err)
    state, stored = session_state(tmp_path, name)
    assert state == "stopped" and 3 <= stored < 12

    rerun = _driver(tmp_path, "budget=12")
    out, err = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, (out, err)
    assert f"continuing after {stored} tests" in out
    assert session_state(tmp_path, name) == ("finished", 12)
    events = [json.loads(line) for line in (tmp_path / "queue.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["start", "end", "start", "end"]
    assert events[1]["exit"] == 130 and all(len(e["load"]) == 3 for e in events)

    again = _driver(tmp_path, "budget=12")  # a finished session is not started again
    out, _ = again.communicate(timeout=60)
    assert again.returncode == 0 and name not in out
    assert not (tmp_path / "sessions" / name).exists()  # packed when it finished
    (packed,) = [s for s in read_pack(tmp_path / PACK_FILE) if s.name == name]
    row = session_row(packed)
    assert row is not None and row["tests"] == 12 and row["default_measurements"] >= 2
    # in a control group of its own where the machine can make one; removed when it ended
    with own_cgroup("test-probe", parent="harness-tests") as probe:
        groups = probe is not None
    if groups:
        # measured, whatever else the machine runs (how much is the machine's business)
        assert all("other_cpu" in record["extra"] for record in packed.observations)
        assert 0 <= row["median_other_cpu"] <= 1
        assert not (cgroup2_root() / "harness-queue" / name).exists()  # type: ignore[operator]


def test_fig6_draws_the_committed_real_sessions_whatever_the_surrogates_source(
    tmp_path, monkeypatch
):
    """`python -m paper.figures fig6` on a fresh clone (no MLflow store): the surrogate panel
    from the exported CSV, the real panel from results/real/fig6/sessions.jsonl, both
    committed."""
    import shutil

    from paper.figures import cli

    monkeypatch.chdir(ROOT)
    (tmp_path / "data").mkdir()
    shutil.copy(ROOT / "results/figures/data/fig6.csv", tmp_path / "data" / "fig6.csv")
    drawn: list[pd.DataFrame] = []

    def fig6_figure(surrogate, real=None):
        drawn.append(real)
        return draw(surrogate, real)

    draw = cli.fig6_figure
    monkeypatch.setattr(cli, "fig6_figure", fig6_figure)
    cli.make_figure("fig6", "sqlite:///nowhere.db", tmp_path, from_data=True)
    real = drawn[0]
    assert {"mysql"} <= set(real["system"]) and (real["tests"] == 100).all()
    assert (tmp_path / "fig6.png").stat().st_size > 0
    assert not (tmp_path / "data" / "fig6_real.csv").exists()  # its data is the sessions


def test_fig6_draws_the_real_panel_beside_the_surrogates_with_each_tuner_in_one_colour():
    from paper.figures import plots
    from paper.figures.plot_real import fig6_figure

    surrogate = pd.DataFrame(
        {"system": "surrogate_tomcat", "tuner": ["classytune_paper", "classytune", "gpbo"],
         "improvement": [0.5, 0.6, 0.4]}
    )  # fmt: skip
    real = _table([("classytune", 0, 0.1, 0.05), ("gpbo", 0, 0.2, 0.05)])
    fig = fig6_figure(surrogate, real)
    left, right = fig.axes
    assert len(right.patches) == 2  # never mixed: the real sessions are only on the right

    def colour(ax, label):
        handles, labels = ax.get_legend_handles_labels()
        return handles[labels.index(label)].patches[0].get_facecolor()

    assert colour(left, "gpbo") == colour(right, "gpbo")
    assert colour(left, "classytune") == colour(right, "classytune")
    assert len(plots.fig6_improvement(surrogate).axes) == 1
    assert len(fig6_figure(surrogate, real.iloc[:0]).axes) == 1


def test_fig7_and_fig10a_draw_their_real_sessions_beside_the_surrogates(tmp_path, monkeypatch):
    """`python -m paper.figures fig7` on a fresh clone: the surrogate panel from the exported
    CSV and the real TPC-C panel from results/real/fig7/sessions.jsonl; each figure reads only its
    own queue's sessions."""
    import shutil

    from paper.figures import cli

    monkeypatch.chdir(ROOT)
    (tmp_path / "data").mkdir()
    for name in ("fig7", "fig10a"):
        shutil.copy(ROOT / f"results/figures/data/{name}.csv", tmp_path / "data")
    cli.make_figure("fig7", "sqlite:///nowhere.db", tmp_path, from_data=True)
    assert (tmp_path / "fig7.png").stat().st_size > 0
    real = cli.FIGURES["fig7"].committed()  # type: ignore[misc]
    sessions = real["fig7_real"]
    assert set(sessions["workload"]) == {"tpcc"} and "expert_manual" in set(sessions["tuner"])
    surrogate = pd.read_csv(tmp_path / "data" / "fig7.csv")
    assert len(cli.FIGURES["fig7"].draw({"fig7": surrogate, **real}).axes) == 2
    fig10a = cli.FIGURES["fig10a"].committed()["fig10a_real"]  # type: ignore[misc]
    assert (
        set(fig10a["workload"]) == {"tpcc"} and not fig10a["tuner"].str.startswith("expert").any()
    )
    cli.make_figure("fig10a", "sqlite:///nowhere.db", tmp_path, from_data=True)
    assert (tmp_path / "fig10a.png").stat().st_size > 0


def test_fig7s_real_panel_keeps_the_tuners_colours_and_states_each_budget():
    from paper.figures import plots
    from paper.figures.plot_real import fig7_figure

    surrogate = pd.DataFrame(
        {"system": "surrogate_mysql_oltp", "tuner": ["default", "expert_manual", "bestconfig"],
         "best_value": [100.0, 110.0, 300.0]}
    )  # fmt: skip
    real = _table([("expert_manual", 0, -0.05, 0.1), ("bestconfig", 0, 0.2, 0.1)])
    fig = fig7_figure(surrogate, real)
    left, right = fig.axes
    assert len(left.patches) == 2 and len(right.patches) == 2  # the default is the zero line
    assert right.get_legend_handles_labels()[1] == ["expert_manual", "bestconfig"]

    def colour(ax, label):
        handles, labels = ax.get_legend_handles_labels()
        return handles[labels.index(label)].patches[0].get_facecolor()

    assert colour(left, "expert_manual") == colour(right, "expert_manual")  # one colour
    text = fig.texts[0].get_text()
    assert "after 2 tests (expert_manual) or 100 tests (bestconfig)" in text
    assert len(plots.fig7_expert(surrogate).axes) == 1
    assert len(fig7_figure(surrogate, None).axes) == 1


def test_the_shared_legend_sits_beside_the_panels_inside_the_figure():
    """One legend for both panels, right of every axes (never over a bar) and whole inside the
    figure, even with four long tuner names ("classytune_paper", "gpbo_paper")."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from paper.figures.plot_real import fig10a_figure

    tuners = ("classytune_paper", "classytune", "bestconfig", "gpbo_paper")
    surrogate = pd.DataFrame({"system": "synthetic30", "tuner": list(tuners), "improvement": 0.5})
    real = _table([(t, 0, 0.1, 0.1) for t in tuners])
    fig = fig10a_figure(surrogate, real)
    FigureCanvasAgg(fig).draw()
    legends = [found for ax in fig.axes if (found := ax.get_legend()) is not None]
    assert len(legends) == 1
    box = legends[0].get_window_extent()
    assert all(ax.get_window_extent().x1 <= box.x0 for ax in fig.axes)
    assert box.x1 <= fig.bbox.x1 and box.y0 >= fig.bbox.y0


def test_every_queued_session_of_every_figure_composes(compose_cfg):
    """A typo in a row's cuts or a tuner's overrides ends a queue hours in; here it fails now."""
    from hydra.utils import instantiate

    from harness.builder.session import make_workload
    from paper.real_queue import command

    for figure in FIGURES.values():
        for row, tuner, seed in planned(figure.rows, 1, figure.tuners):
            argv = command(figure, row, tuner, seed, Path("unused"), [])
            overrides = [a for a in argv[argv.index("harness") + 1 :] if "results_dir" not in a]
            cfg = compose_cfg(*overrides)
            assert cfg.budget == (2 if tuner.startswith("expert") else 100), argv
            assert cfg.session.default_every == 10 and cfg.session.confirm == 3
            assert callable(instantiate(cfg.tuner)), argv
            make_workload(cfg)  # a mistyped workload setting is refused in one line
