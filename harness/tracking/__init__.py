"""Reporting a session to MLflow: the tracker interface, the MLflow tracker and its store.

A session talks only to :class:`~harness.tracking.tracker.Tracker`; the MLflow tracker
(:mod:`.mlflow_tracker`) writes through an outbox on one thread (:mod:`.outbox`), with tag names in
one place (:mod:`.keys`), credentials kept out of URIs (:mod:`.uri`) and a private SQLite store
(:mod:`.store`), so a slow or failing tracking server never loses or delays a test.
"""
