"""Recorded-data systems: (configuration -> performance) samples behind the System/Workload
contract, answered by the recorded rows themselves or by a random-forest surrogate of them
(with a failure model), as the data's fidelity check decides."""

from systems.dataset.system import DatasetSystem
from systems.dataset.workload import SurrogateWorkload

__all__ = ["DatasetSystem", "SurrogateWorkload"]
