#!/usr/bin/env bash
# The reproduction study of docs/RESULTS.md: issue 3's family table (3 seeds) and issue 6's
# Table II protocol (LSTM+SA, CNN+SA, Transformer on SUBJ, MR, SST; 10 seeds), then the tables.
# Resumable: run it again after an interruption and finished runs are skipped.
#
#   bash experiments/reproduce.sh [LOGDIR] [JOBS]        # default runs/repro, 2 runs at a time
#
# Order: seeds 0-2 of every cell first (cheapest networks first), then seeds 3-9, so that a
# stopped study has every cell it could afford.
# On one core each: about 110-180 s per LSTM+SA or CNN+SA run, 30-50 s per aspect run,
# and several times that per Transformer run.
set -euo pipefail
cd "$(dirname "$0")/.."
LOGDIR=${1:-runs/repro}
JOBS=${2:-2}
PY=${PYTHON:-python}
sweep() { "$PY" experiments/sweep.py --config experiments/configs/reproduction.toml --logdir "$LOGDIR" \
            --jobs "$JOBS" --threads-per-run 1 --out "$LOGDIR/sweep_last.md" "$@"; }

# Seeds 0-2 of every cell (issue 3), cheapest networks first; the Transformer last because
# its co-training costs the most.
sweep --nets lstm-sa cnn-sa --datasets subj mr sst --seeds 0 1 2
sweep --nets atae-lstm ian --datasets semeval14-laptop semeval14-restaurant semeval15-restaurant semeval16-restaurant --seeds 0 1 2
sweep --nets disan --datasets subj mr sst --seeds 0 1 2
sweep --nets han --datasets movie-reviews --seeds 0 1 2
sweep --nets cnn-sa --datasets ag-news --seeds 0 1 2
sweep --nets transformer --datasets subj mr sst ag-news --seeds 0 1 2
# Seeds 3-9 of the Table II grid (issue 6).
sweep --nets lstm-sa cnn-sa --datasets subj mr sst --seeds 3 4 5 6 7 8 9
sweep --nets transformer --datasets subj mr sst --seeds 3 4 5 6 7 8 9

"$PY" experiments/study_tables.py "$LOGDIR" --out docs/results/reproduction.md
