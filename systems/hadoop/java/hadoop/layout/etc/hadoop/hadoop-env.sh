# Environment of every Hadoop command of this install (sourced by bin/hadoop-launch, as the
# tarball's scripts source theirs). The harness copies etc/hadoop into each node's private
# configuration folder and appends the node's log and pid folders here.
