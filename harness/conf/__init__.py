"""The Hydra configs that ship with the package (search path ``pkg://harness.conf``).

Groups: ``tuner/``, ``system/``, ``workloads/<system>/``, ``hosts/``, ``tracking/``;
``config.yaml`` is the top level of ``python -m harness``, and its ``hydra.searchpath`` adds
the paper's recipes (``pkg://paper.conf``). The ``workload`` choices are generated from the
``workloads/<system>/`` folders (:mod:`harness.conf.choices`). Code that reads a group's files
directly (the bench's suite, the built-in surrogates) finds them through :data:`CONFIG_DIR`, so
an installed wheel works like a checkout.
"""

from pathlib import Path

#: The folder of the shipped configs (inside the installed package).
CONFIG_DIR = Path(__file__).resolve().parent
