"""The machines a session drives: local processes, machine facts, SSH hosts and host pools.

Process control (:mod:`.process`) is the one way an adapter starts, polls and stops a process;
:mod:`.machine` says what a host offers (memory, cores, installs); :mod:`.other_work` accounts
for CPU taken by others during a test; inventories, SSH and clusters (:mod:`.inventory`,
:mod:`.ssh`, :mod:`.connect`, :mod:`.cluster`) reach hosts beyond this one; :mod:`.pool` is the
set of hosts a session keeps busy in parallel.
"""
