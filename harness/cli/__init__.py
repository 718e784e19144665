"""The command lines: ``python -m harness`` (Hydra app and sweeps) and the export of an answer.

They parse and report; every session is composed, built and run through :mod:`harness.api`.
"""
