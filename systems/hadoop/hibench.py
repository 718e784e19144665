"""HiBench's side of a Hadoop cluster: its configuration files, and the interface a HiBench
workload needs from the system it runs on.

HiBench reads every ``*.conf`` of its configuration folder in name order (later files win) and
honours ``HIBENCH_CONF_FOLDER``. The system keeps a private folder with a copy of the install's
``hibench.conf``, a rendered ``hadoop.conf`` (where Hadoop is, the HDFS master) and
``zz-harness.conf`` (scale profile, parallelism, hosts), so the user's HiBench checkout is
never edited. :class:`HiBenchHost` is declared here, not in the adapter, so that the workloads
(``workload.py``) and the adapter (``system.py``) both depend on this module and never on each
other.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from harness.errors import ConfigError
from harness.executor import Executor
from systems.hadoop import commands
from systems.hadoop.render import check_host, check_path

__all__ = ["HARNESS_CONF", "HiBenchHost", "harness_conf", "hibench_hadoop_conf"]

HARNESS_CONF = "zz-harness.conf"  # sorts after hibench.conf, so its values win


def _line(key: str, value: str) -> str:
    if "\n" in value or "\r" in value:
        raise ConfigError(f"HiBench setting {key}: value {value!r} spans lines")
    return f"{key:<40} {value}\n"


def hibench_hadoop_conf(hadoop_home: str, conf_dir: str, default_fs: str) -> str:
    """HiBench's ``conf/hadoop.conf`` for this cluster (HiBench's own format)."""
    home = check_path(hadoop_home, "system.adapter.hadoop_home")
    return (
        "# Written by the ClassyTune harness (HiBench conf/hadoop.conf format).\n"
        + _line("hibench.hadoop.home", home)
        + _line("hibench.hadoop.executable", f"{home}/bin/hadoop")
        + _line("hibench.hadoop.configure.dir", check_path(conf_dir, "conf_dir"))
        + _line("hibench.hdfs.master", default_fs)
        + _line("hibench.hadoop.release", "apache")
    )


def harness_conf(
    scale_profile: str,
    maps: int,
    reduces: int,
    masters: list[str],
    workers: list[str],
    report_dir: str | None = None,
    hive_home: str | None = None,
) -> str:
    """Our overrides of hibench.conf. HiBench passes its parallelism to every job as
    ``mapreduce.job.maps/reduces`` (Hive: ``set``; TeraSort: ``-D``), which would override
    those two knobs, so the parallelism *is* the knobs' values."""
    if scale_profile not in commands.SCALE_PROFILES:
        raise ConfigError(
            f"HiBench scale profile {scale_profile!r}: use one of "
            f"{', '.join(commands.SCALE_PROFILES)}"
        )
    text = (
        "# Written by the ClassyTune harness: overrides of hibench.conf for this run.\n"
        + _line("hibench.scale.profile", scale_profile)
        + _line("hibench.default.map.parallelism", str(int(maps)))
        + _line("hibench.default.shuffle.parallelism", str(int(reduces)))
        + _line(
            "hibench.masters.hostnames", " ".join(check_host(h, "master address") for h in masters)
        )
        + _line(
            "hibench.slaves.hostnames", " ".join(check_host(h, "worker address") for h in workers)
        )
    )
    if report_dir:
        text += _line("hibench.report.dir", check_path(report_dir, "system.adapter.report_dir"))
    if hive_home:
        text += _line("hibench.hive.home", check_path(hive_home, "system.adapter.hive_home"))
    return text


class HiBenchHost(ABC):
    """What a HiBench workload needs from its system (implemented by
    :class:`systems.hadoop.system.HadoopSystem`): the load host that runs HiBench's scripts,
    HiBench's folders, the environment of its scripts, and its configuration for a run."""

    #: The HiBench checkout on the load host.
    hibench_home: str
    #: Where HiBench appends ``hibench.report`` (and keeps each workload's result folder).
    report_dir: str
    name: str

    @property
    @abstractmethod
    def load(self) -> Executor:
        """The host that runs HiBench's scripts."""

    @abstractmethod
    def check_hibench(self) -> None:
        """ConfigError naming system.adapter.hibench_home if HiBench is not on the load host."""

    @abstractmethod
    def hibench_env(self) -> dict[str, str]:
        """Environment of HiBench's scripts on the load host."""

    @abstractmethod
    def write_hibench_conf(self, scale_profile: str) -> None:
        """Write hadoop.conf and :data:`HARNESS_CONF` for the applied configuration."""
