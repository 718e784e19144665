#!/usr/bin/env bash
# The README's first command, timed on a fresh clone: `bash scripts/setup.sh` and then
# `.venv/bin/python -m harness` (the embedded SQLite default, budget 100, confirmed at the end),
# each timed on its own, with the machine's load average before and after. Writes the figures
# and the session's summary to results/bench/default_job.md (the README quotes that file).
#   bash scripts/time_default_job.sh [clone folder, default a fresh temporary one]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
out=$repo/results/bench/default_job.md
clone=${1:-$(mktemp -d)/classytune-harness}
rm -rf "$clone"
git clone -q "$repo" "$clone"
cd "$clone"
load() { cut -d' ' -f1-3 /proc/loadavg; }
now() { date +%s.%N; }
load_0=$(load); t0=$(now)
bash scripts/setup.sh > setup.log 2>&1
t1=$(now); load_1=$(load)
.venv/bin/python -m harness > session.log 2> session.err || true
t2=$(now); load_2=$(load)
secs() { python3 -c "import sys; s = float(sys.argv[2]) - float(sys.argv[1]); print(f'{int(s // 60)} min {s % 60:.0f} s')" "$1" "$2"; }
{
  echo "# The default job on a fresh clone"
  echo
  echo "Measured by \`bash scripts/time_default_job.sh\` on $(date -u +%Y-%m-%d) at revision"
  echo "\`$(git rev-parse --short=12 HEAD)\`, on $(nproc) cores."
  echo
  echo "| step | wall time | load average (1, 5, 15 min) before → after |"
  echo "|---|---|---|"
  echo "| \`bash scripts/setup.sh\` | $(secs "$t0" "$t1") | $load_0 → $load_1 |"
  echo "| \`.venv/bin/python -m harness\` | $(secs "$t1" "$t2") | $load_1 → $load_2 |"
  echo
  echo "The session's summary, as printed (its log lines left out):"
  echo
  echo '```'
  sed -n '/^Session /,$p' session.log
  echo '```'
} > "$out"
echo "wrote $out (clone: $clone)"
