#!/usr/bin/env bash
# The test command of the README and of CI (.ci/run), in tiers, fastest first; a failing tier
# ends the run, and each tier's time is printed at the end (also after a failure):
#   checks  ruff, ruff format, mypy, the import contracts and the module rules (minutes)
#   unit    every test that starts no real server
#   real    one real session per system, the safety probes against real servers, SSH, Slurm
# Not run here, the deep tier (faults, rings, cross-host clusters, long sessions); run it
# before resolving a change to what it covers:
#   .venv/bin/python -m pytest -m deep          (HARNESS_LONG_TESTS=1 adds the longest ones)
# Extra arguments go to every pytest call (e.g. -x, -k name).
set -euo pipefail
cd "$(dirname "$0")/.."
python=.venv/bin/python
gates=(tests/project/test_lint.py tests/project/test_layers.py)
skip_gates=(--ignore=tests/project/test_lint.py --ignore=tests/project/test_layers.py)
times=()

report() {
  printf '\n== tier times\n'
  printf '  %s\n' "${times[@]}"
}
trap report EXIT

tier() {
  local name=$1 start=$SECONDS status=0
  shift
  printf '\n== tier %s: %s\n' "$name" "$*"
  "$@" || status=$?
  [ $status -eq 5 ] && status=0 # pytest: no test of this tier matched the extra arguments
  times+=("$(printf '%-7s %4d s  %s' "$name" $((SECONDS - start)) "$([ $status -eq 0 ] && echo passed || echo FAILED)")")
  return $status
}

tier checks "$python" -m pytest "${gates[@]}" "$@"
tier unit "$python" -m pytest -m "not integration and not deep" "${skip_gates[@]}" "$@"
tier real "$python" -m pytest -m "integration and not deep" "${skip_gates[@]}" "$@"
