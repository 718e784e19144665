"""ClassyTune: classification-based configuration tuning (Zhu & Liu, IEEE TCC 2019).

Two tuners share one comparator (:mod:`~classytune.comparator`: pairs induced by
:mod:`~classytune.induction`, a classifier from :mod:`~classytune.classifiers`,
optional experience rules from :mod:`~classytune.rules`) and the round structure
(:mod:`~classytune.base`):

* :class:`ClassyTuneRanked` (``tuner=classytune``, this project's best mode): the comparator
  ranks candidates and the best-ranked are tested (:mod:`~classytune.ranked`);
* :class:`ClassyTunePaper` (``tuner=classytune_paper``): the paper's Algorithm 1, promising
  subspaces found with an imprecise classifier (:mod:`~classytune.search`).

:mod:`~classytune.model_io` saves and loads the classifier and samples;
:mod:`~classytune.analyze` derives knob influence from a saved model.
"""

from classytune.base import ClassyTuneBase, round_sizes
from classytune.comparator import Comparator
from classytune.paper_tuner import ClassyTunePaper
from classytune.ranked_tuner import ClassyTuneRanked

__all__ = ["ClassyTuneBase", "ClassyTunePaper", "ClassyTuneRanked", "Comparator", "round_sizes"]
