"""Synthetic systems: cheap objective functions with a known optimum, for tests and benchmarks."""

from systems.synthetic.system import SyntheticSystem, SyntheticWorkload

__all__ = ["SyntheticSystem", "SyntheticWorkload"]
