#!/usr/bin/env bash
# Regenerate the lock files that scripts/setup.sh installs (and so CI): every package pinned
# to the version constraints.txt records, with the hashes of its files on PyPI, so that a
# setup installs exactly what the results were produced with, or fails.
#   locks/core.txt   the core install (bash scripts/setup.sh)
#   locks/full.txt   every extra (bash scripts/setup.sh --full)
# Needs pip-tools in any environment (not the project's venv; not a PIP_* variable: pip reads those):
#   python3 -m venv /tmp/piptools && /tmp/piptools/bin/pip install pip-tools
#   LOCK_COMPILER=/tmp/piptools/bin/pip-compile bash scripts/lock.sh
# After an upgrade: regenerate constraints.txt first (its header says how), then this.
set -euo pipefail
cd "$(dirname "$0")/.."
compile=(
  "${LOCK_COMPILER:-pip-compile}" --quiet --generate-hashes --allow-unsafe --strip-extras
  --no-emit-index-url --no-emit-find-links --constraint constraints.txt pyproject.toml
)
# Every extra: what scripts/setup.sh --full installs (locks/full.txt).
FULL_EXTRAS=(dev spark peers ui plot remote drivers)
CUSTOM_COMPILE_COMMAND="bash scripts/lock.sh" "${compile[@]}" --output-file locks/core.txt
CUSTOM_COMPILE_COMMAND="bash scripts/lock.sh" "${compile[@]}" --output-file locks/full.txt \
  "${FULL_EXTRAS[@]/#/--extra=}"
