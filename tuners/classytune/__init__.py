"""ClassyTune: classification-based configuration tuning (Zhu & Liu, IEEE TCC 2019).

Modules: :mod:`~tuners.classytune.induction` (pairs → comparison rows),
:mod:`~tuners.classytune.classifiers` (comparators by name), :mod:`~tuners.classytune.rules`
(experience rules → labelled pairs), :mod:`~tuners.classytune.search` (Algorithm 1's search with
an imprecise classifier), :mod:`~tuners.classytune.tuner` (the tuner, one-shot or iterative) and
:mod:`~tuners.classytune.model_io` (saved classifier + samples) and
:mod:`~tuners.classytune.analyze` (knob influence from a saved model).
"""

from tuners.classytune.tuner import ClassyTuneTuner

__all__ = ["ClassyTuneTuner"]
