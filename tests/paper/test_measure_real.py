"""The real-system measurement tool: its workload arguments, and the default's noise measured
on real Tomcat."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from harness.hosts.other_work import own_cgroup
from paper.measure_real import main, workload_arg
from tests.helpers.requirements import NEEDS_TOMCAT


def test_a_workload_argument_is_a_name_and_a_number() -> None:
    assert workload_arg("warmup_s=10") == ("warmup_s", 10.0)
    for bad in (
        "warmup_s",
        "warmup_s=ten",
        "=3",
        "warm up=3",
        "warmup_s=nan",
        "duration_s=inf",
        "warmup_s=-1",
    ):
        with pytest.raises(argparse.ArgumentTypeError, match="key=number"):
            workload_arg(bad)


def test_an_argument_the_workload_does_not_take_is_one_line(capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit):
        main(["tomcat", "--set", "warmup=3"])
    assert "--set" in capsys.readouterr().err


def test_the_system_and_its_workload_come_from_their_configs() -> None:
    from paper.measure_real import build

    measured = build("spark", "join", {"scale": 0.5})
    assert (measured.workload.name, measured.objective.metric) == ("join", "job_duration_s")
    assert measured.rules.__name__ == "systems.spark.expert"  # its config's system.expert_rules
    assert measured.workload.scale == 0.5  # type: ignore[attr-defined]


def test_a_value_the_workload_refuses_is_one_line(capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit):
        main(["tomcat", "--set", "threads=2.5"])
    assert "--set: workload.threads=2.5: threads is a whole number" in capsys.readouterr().err


@pytest.mark.integration
@pytest.mark.slow
@NEEDS_TOMCAT[0]
@NEEDS_TOMCAT[1]
@NEEDS_TOMCAT[2]
def test_the_default_measured_n_times_on_real_tomcat_reports_its_noise(
    tmp_path: Path, capfd
) -> None:  # type: ignore[no-untyped-def]
    args = ["tomcat", "--default", "2", "--set", "warmup_s=0", "--set", "duration_s=1"]
    try:
        main([*args, "--workdir", str(tmp_path)])
        code: object = 0  # measured here: this machine cannot make a control group
    except SystemExit as ended:  # measured again, in a control group of its own
        code = ended.code
    out = capfd.readouterr().out
    assert code == 0, out
    assert out.count("default SUCCEEDED") == 2, out
    assert "default x2: median" in out and "relative sd" in out, out
    with own_cgroup("test-probe", parent="harness-tests") as probe:
        if probe is not None:  # each test shows the CPU that other work took beside it
            assert out.count("other_cpu ") == 2, out
