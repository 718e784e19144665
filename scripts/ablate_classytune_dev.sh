#!/usr/bin/env bash
# The default classytune's ablation on the development suite's hard part (the family<d>
# problems: d = 10, 30, 60, 120, hidden failures, noise 0 / 5 / 15 %), seeds 100-102, budget
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
#   bash scripts/ablate_classytune_dev.sh rest       # the chosen variant on the rest of the
#       development suite (synthetic10/30 and the MOOT tables but hipacc and llvm, whose
#       65-86k rows take ~80 s to build per worker; noise 0 and 15 %): ablation_rest.md
set -euo pipefail
cd "$(dirname "$0")/.."
here=$(pwd)
out="$here/results/bench/dev"
revision=$(cat "$out/REVISION")
tree="${DEV_TREE:-/tmp/harness-dev-$revision}"
if [ ! -d "$tree" ]; then
  git worktree add --detach "$tree" "$revision" >/dev/null
fi
cd "$tree"   # its packages come first on sys.path: the pinned code runs (at that revision
             # the study is scripts/ablate_classytune.py; on main it is python -m paper.ablation)
tr="trust_region.enabled=true,trust_region.restart=true"
combo="$tr,local.dims=20,initial_fraction=0.2,failure_model.method=forest,remeasure.challenger=true"
if [ "${1:-}" = "rest" ]; then
  shift
  exec nice -n 19 "$here/.venv/bin/python" scripts/ablate_classytune.py \
    --suite synthetic10 synthetic30 moot_apache moot_hsmgp moot_lrzip moot_mongodb moot_mysql \
      moot_vp9 moot_x264 moot_x264_iperf \
    --noise 0 0.15 --seeds 100 101 102 --budget 100 --processes "${PROCESSES:-2}" \
    --cache "$out/ablation_rest.json" --out "$out/ablation_rest.md" \
    --variants base= "init=$tr,local.dims=20,initial_fraction=0.2" \
      "init_bin64=$tr,local.dims=20,initial_fraction=0.2,classifier.max_bin=64" "$@"
fi
exec nice -n 19 "$here/.venv/bin/python" scripts/ablate_classytune.py \
  --suite hard --noise 0 0.05 0.15 --seeds 100 101 102 --budget 100 \
  --processes "${PROCESSES:-2}" \
  --cache "$out/ablation_hard.json" --out "$out/ablation_hard.md" \
  --variants base= d20=local.dims=20 "tr20=$tr,local.dims=20" \
    "init=$tr,local.dims=20,initial_fraction=0.2" \
    "fm=$tr,local.dims=20,failure_model.method=forest" \
    "ch=$tr,local.dims=20,remeasure.challenger=true" \
    "combo=$combo" "combo_ts=$combo,ensemble.members=4,ensemble.acquisition=thompson" \
    "combo_bin64=$combo,classifier.max_bin=64" \
    "init_bin64=$tr,local.dims=20,initial_fraction=0.2,classifier.max_bin=64" \
  "$@"
