"""Baseline tuners the paper compares ClassyTune against, and the peers a user would pick."""
