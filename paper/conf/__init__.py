"""The paper's Hydra configs: the experiment recipes (``+experiment=<figure>``).

They live beside the paper layer that owns them, not inside the core. The core's top-level
config adds this package to Hydra's search path (``hydra.searchpath: [pkg://paper.conf]``), so
``python -m harness -m +experiment=fig6`` and ``harness.api.compose(["+experiment=fig6"])``
find them from a checkout and from an installed wheel alike.
"""

from pathlib import Path

#: The folder of the paper's configs (inside the installed package).
CONFIG_DIR = Path(__file__).resolve().parent
#: The experiment recipes, one per figure (``experiment/<recipe>.yaml``).
EXPERIMENT_DIR = CONFIG_DIR / "experiment"
