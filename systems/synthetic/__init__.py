"""Synthetic systems: cheap objective functions with a known optimum, for tests and benchmarks."""

from systems.synthetic.family import SyntheticFamily, family_space
from systems.synthetic.system import SyntheticSystem, SyntheticWorkload

__all__ = ["SyntheticFamily", "SyntheticSystem", "SyntheticWorkload", "family_space"]
