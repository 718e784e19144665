"""ClassyTune Harness: tune the configuration of real systems within a budget of tests.

Entry points: ``python -m harness`` (a tuning session or a Hydra multirun sweep),
``python -m paper.figures`` (the paper's figures from MLflow runs).
"""

__version__ = "0.2.0"
