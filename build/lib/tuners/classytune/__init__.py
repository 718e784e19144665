"""ClassyTune: classification-based configuration tuning (Zhu & Liu, IEEE TCC 2019).

Two tuners share one comparator (:mod:`~tuners.classytune.comparator`: pairs induced by
:mod:`~tuners.classytune.induction`, a classifier from :mod:`~tuners.classytune.classifiers`,
optional experience rules from :mod:`~tuners.classytune.rules`) and the round structure
(:mod:`~tuners.classytune.base`):

* :class:`ClassyTuneRanked` (``tuner=classytune``, this project's best mode): the comparator
  ranks candidates and the best-ranked are tested (:mod:`~tuners.classytune.ranked`);
* :class:`ClassyTunePaper` (``tuner=classytune_paper``): the paper's Algorithm 1, promising
  subspaces found with an imprecise classifier (:mod:`~tuners.classytune.search`).

:mod:`~tuners.classytune.model_io` saves and loads the classifier and samples;
:mod:`~tuners.classytune.analyze` derives knob influence from a saved model.
"""

from tuners.classytune.base import ClassyTuneBase, round_sizes
from tuners.classytune.comparator import Comparator
from tuners.classytune.paper_tuner import ClassyTunePaper
from tuners.classytune.ranked_tuner import ClassyTuneRanked

__all__ = ["ClassyTuneBase", "ClassyTunePaper", "ClassyTuneRanked", "Comparator", "round_sizes"]
