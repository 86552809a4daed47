#!/usr/bin/env bash
# The translation study on two CPU cores, one seed's whole pipeline per call (issue 61):
# experiments/translation_cpu.py says what it does, docs/results/nmt.md "The study on two CPU cores" how it went.
#
#   bash experiments/translation_cpu.sh luong 0 --deadline 10:05    # refuse a unit or stage that would end after 10:05
#   bash experiments/translation_cpu.sh transformer 1 --budget-min 135
#   bash experiments/translation_cpu.sh luong 0 --dry-run            # the plan, the projected finish and the commands
#   bash experiments/translation_cpu.sh next --deadline 10:05        # the unit the study needs next (stage 2 left, else turns)
# Then commit experiments/results/translation-regime/ and rebuild the tables: python experiments/translation_tables.py
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
    echo "usage: bash experiments/translation_cpu.sh luong|transformer SEED | next  [--deadline HH:MM | --budget-min M] [--dry-run]" >&2
    exit 2
fi
# the project's environment (make setup) unless $PYTHON names another
PY=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
exec "$PY" experiments/translation_cpu.py run "$@"
