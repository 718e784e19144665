"""A tuning session: the ask/tell loop and everything one test or one session goes through.

The loop (:mod:`.session`) drives tests (:mod:`.trial`) over one or more hosts, re-measures
references and the answer (:mod:`.references`, :mod:`.confirm`), stops in order on a signal
(:mod:`.signals`), and leaves its records behind (:mod:`.end`, :mod:`.meta`). It knows the store
and the tracker only through their interfaces, so a session runs the same with or without MLflow.
A finished session's folder reads back as its result and as tables (:mod:`.results`), and as an
Optuna study (:mod:`.optuna_export`).
"""
