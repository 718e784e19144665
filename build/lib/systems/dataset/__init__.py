"""Dataset-backed surrogate systems: recorded (configuration -> performance) samples behind the
System/Workload contract, with a random-forest model, a failure model and fidelity checks."""

from systems.dataset.system import DatasetSystem, SurrogateWorkload

__all__ = ["DatasetSystem", "SurrogateWorkload"]
