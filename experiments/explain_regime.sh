#!/usr/bin/env bash
# The explainability study's runs (issue 41): LSTM+SA on MR, SUBJ and SST-5 (phrase-level training) in the
# paper's regime (experiments/configs/paper_regime.toml: GloVe, early stopping, the tuned reward
# coefficients), 5 seeds each, their run folders and checkpoints kept for `drga analyze`.
#
#   bash experiments/explain_regime.sh                 # seeds 0-4
#   RESULTS=DIR LOGDIR=DIR JOBS=N bash experiments/explain_regime.sh   # e.g. from a frozen worktree of one commit
#
# Each finished run leaves a small result file in experiments/results/explain-regime/ (commit them as they
# come: a run whose file exists is skipped); the per-run analysis results are committed beside them.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
RESULTS=${RESULTS:-experiments/results/explain-regime}
LOGDIR=${LOGDIR:-runs/explain}
SEEDS=${*:-0 1 2 3 4}
STATUS=0
sweep() { "$PY" experiments/sweep.py --config experiments/configs/paper_regime.toml --logdir "$LOGDIR" --results "$RESULTS" \
            --jobs "${JOBS:-1}" --threads-per-run 1 --seeds $SEEDS --nets lstm-sa "$@" || STATUS=$?; }
sweep --datasets mr subj
sweep --datasets sst --set train.fused_adam=true   # as the paper-regime study's SST-5 cells
exit $STATUS
