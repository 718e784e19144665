"""Paper figures from MLflow runs: ``python -m paper.figures <name>|all``.

``loader`` reads session runs (and their sample artifacts) into pandas DataFrames,
``analysis`` turns sample pools into the tidy tables of Fig. 2/5/9(a), ``plots`` (with
``bars``, ``plot_real`` and ``plot_subspaces``) holds pure DataFrame -> matplotlib Figure
functions drawn in the one look of ``style`` (a colour and marker per tuner, legends off the
data), ``cli`` wires them and exports each figure's table to
``results/figures/data/<name>.csv`` so a fresh clone can redraw without rerunning.
"""
