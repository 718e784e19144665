"""What a session optimises: one metric and its direction, or a utility over several metrics.

Utilities and constraints are written in the config as expressions; :mod:`.expression` evaluates
them with the grammar of :mod:`.grammar` and nothing else, so a config can never run code.
"""
