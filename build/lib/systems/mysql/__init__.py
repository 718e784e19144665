"""MySQL under tune (MariaDB locally, Oracle MySQL 8 on remote hosts): a private server, its
knob catalogue and expert settings. Workloads: sysbench and TPC-C."""

from systems.mysql.system import MySQLSystem, load_space

__all__ = ["MySQLSystem", "load_space"]
