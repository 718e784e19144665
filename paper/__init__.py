"""The paper layer: what reproduces and extends the ClassyTune paper's experiments.

It sits on top of the core (:mod:`harness`), the tuners (:mod:`baselines`, :mod:`classytune`)
and the systems (:mod:`systems`), and nothing below imports it: :mod:`paper.figures` (the
paper's figures and tables from MLflow runs), :mod:`paper.bench` (every tuner × a suite of
systems × seeds), the experiment recipes in :mod:`paper.conf` (``+experiment=<figure>``) and
the measurement tools :mod:`paper.measure_real` and :mod:`paper.measure_db`.
"""
