#!/usr/bin/env bash
# The translation study (issue 39): the Luong attention seq2seq and the Transformer encoder-decoder
# trained to convergence on Multi30k task 1 English→German (experiments/configs/nmt_regime_*.toml:
# whole passes, early stopping on greedy dev BLEU, co-training with train.task_loss_samples = 1),
# then the equal-budget baseline, the agent on the frozen network and DRGA co-training, one thread
# per run. Luong at seeds 0-4, the Transformer at 0-2 (TRANSFORMER_SEEDS="0 1 2 3 4" for 5).
#
#   bash experiments/translation_regime.sh
#   TRANSFORMER_SEEDS="0 1 2 3 4" bash experiments/translation_regime.sh
#   RESULTS=DIR LOGDIR=DIR JOBS=N bash experiments/translation_regime.sh   # e.g. from a frozen worktree of one commit
#   PLAN_ONLY=1 bash experiments/translation_regime.sh   # the projected compute and the commands; nothing starts
#
# Before anything starts, the sweep's plan of the whole grid is printed ("[plan] ..." lines of
# `experiments/sweep.py --dry-run`): the runs to do and, projected from the finished runs of the same
# cell (network) in RESULTS, their epochs, core-hours and wall hours at JOBS runs at a time. A cell
# with no finished run yet is listed as "not projected": the study's first runs measure it.
# Each finished run leaves a small result file in experiments/results/translation-regime/ (commit
# them as they come: a run whose file exists is skipped, an interrupted one resumes from its last
# epoch); the tables are rebuilt from those files alone:
#   python experiments/translation_tables.py    # writes docs/results/nmt-regime.md (--out - prints it instead)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
RESULTS=${RESULTS:-experiments/results/translation-regime}
LOGDIR=${LOGDIR:-runs/translation-regime}
LUONG_SEEDS=${LUONG_SEEDS:-0 1 2 3 4}
TRANSFORMER_SEEDS=${TRANSFORMER_SEEDS:-0 1 2}
# A failed run does not stop the study: every sweep runs, then the script exits with the worst status.
STATUS=0
sweep() {  # sweep CONFIG NET SEEDS [sweep flags...]
    local config=$1 net=$2 seeds=$3
    shift 3
    "$PY" experiments/sweep.py --config "experiments/configs/nmt_regime_$config.toml" --nets "$net" --datasets multi30k-en-de \
        --seeds $seeds --logdir "$LOGDIR" --results "$RESULTS" --out "$LOGDIR/sweep_results-$net.md" \
        --jobs "${JOBS:-2}" --threads-per-run 1 "$@" || STATUS=$?
}
grid() {
    sweep luong seq2seq-luong "$LUONG_SEEDS" "$@"
    sweep transformer transformer-nmt "$TRANSFORMER_SEEDS" "$@"
}
echo "== the translation study's projected compute (experiments/sweep.py --dry-run) =="
grid --dry-run
if [ -n "${PLAN_ONLY:-}" ]; then
    exit $STATUS
fi
grid
# the tables of what is finished, on the terminal only: the checkout that commits the result files
# rebuilds docs/results/nmt-regime.md (a frozen worktree running the study stays clean)
"$PY" experiments/translation_tables.py "$RESULTS" --out - || STATUS=$?
exit $STATUS
