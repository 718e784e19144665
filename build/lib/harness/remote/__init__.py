"""Remote execution: host inventories, an SSH executor (Fabric) and multi-node clusters."""

from harness.remote.cluster import Cluster
from harness.remote.inventory import Host, Inventory

__all__ = ["Cluster", "Host", "Inventory"]
