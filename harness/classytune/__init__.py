"""ClassyTune: classification-based configuration tuning (Zhu & Liu, IEEE TCC 2019).

Modules: :mod:`~harness.classytune.induction` (pairs → comparison rows),
:mod:`~harness.classytune.classifiers` (comparators by name), :mod:`~harness.classytune.rules`
(experience rules → labelled pairs), :mod:`~harness.classytune.search` (Algorithm 1's search with
an imprecise classifier), :mod:`~harness.classytune.tuner` (the tuner, one-shot or iterative) and
:mod:`~harness.classytune.model_io` (saved classifier + samples for :mod:`harness.analyze`).
"""

from harness.classytune.tuner import ClassyTuneTuner

__all__ = ["ClassyTuneTuner"]
