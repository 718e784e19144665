"""Where finished tests live: the durable sample store, its in-memory twin, and stored configs.

A test is on disk before the next one starts (:mod:`.samples`); what a session folder holds is
data read back with checks, never code (:mod:`.stored_config`).
"""
