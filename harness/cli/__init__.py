"""The command lines: ``python -m harness`` (Hydra app and sweeps), the export of an answer,
the comparison of sessions (:mod:`.compare`) and a session's plots (:mod:`.plot`).

They parse and report; every session is composed, built and run through :mod:`harness.api`.
"""
