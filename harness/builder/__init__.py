"""From a composed config to a ready session: validate it once, then build the objects.

:mod:`.validate` holds every check that needs no system (names, counts, resume overrides,
options of a tuner or workload); :mod:`.session` instantiates systems, workload, objective,
store, tracker and tuner factory from a config that passed them. The API and the command line
both come through here, so there is one session builder.
"""
