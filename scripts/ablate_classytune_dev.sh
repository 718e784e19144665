#!/usr/bin/env bash
# The default classytune's ablation on the development suite's hard part (the family<d>
# problems: d = 10, 30, 60, 120, hidden failures, noise 0 / 5 / 15 %), seeds 100-104, budget
# 100: results/bench/dev/ablation_hard.md, resumable.
#
# The cache keys include a digest of the code (harness/ whole, classytune/, systems/synthetic/),
# and other work changes harness/ all the time, so the run is pinned: it runs the code of the
# commit in results/bench/dev/REVISION from a git worktree, with the cache and the report in
# this checkout's results/bench/dev/. Raise REVISION (and the sessions recompute) when the
# tuner changes.
#
#   bash scripts/ablate_classytune_dev.sh            # continue (or start) the run
#   bash scripts/ablate_classytune_dev.sh --report-only
set -euo pipefail
cd "$(dirname "$0")/.."
here=$(pwd)
out="$here/results/bench/dev"
revision=$(cat "$out/REVISION")
tree="${DEV_TREE:-/tmp/harness-dev-$revision}"
if [ ! -d "$tree" ]; then
  git worktree add --detach "$tree" "$revision" >/dev/null
fi
cd "$tree"   # its packages come first on sys.path: the pinned code runs
tr="trust_region.enabled=true,trust_region.restart=true"
exec nice -n 19 "$here/.venv/bin/python" scripts/ablate_classytune.py \
  --suite hard --noise 0 0.05 0.15 --seeds 100 101 102 103 104 --budget 100 \
  --processes "${PROCESSES:-2}" \
  --cache "$out/ablation_hard.json" --out "$out/ablation_hard.md" \
  --variants base= cap=max_candidates=2000 all=local.dims=all d20=local.dims=20 \
    "tr=$tr,local.dims=all" "tr20=$tr,local.dims=20" \
    "init=$tr,local.dims=20,initial_fraction=0.2" \
    "ts=$tr,local.dims=20,ensemble.members=4,ensemble.acquisition=thompson" \
    "fm=$tr,local.dims=20,failure_model.method=forest" \
    "ch=$tr,local.dims=20,remeasure.challenger=true" \
  "$@"
