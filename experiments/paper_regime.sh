#!/usr/bin/env bash
# The paper-regime study (issues 15 and 16): LSTM+SA, CNN+SA and the Transformer encoder on MR,
# SUBJ and SST-5 (phrase-level training), GloVe 6B 50d, pretraining early-stopped on dev, the
# equal-budget baseline from the same pretrained checkpoint; experiments/configs/paper_regime.toml.
#
#   bash experiments/paper_regime.sh [SEEDS...]      # default: seeds 0 1 2
#   SST_SEEDS="0 1 2 3 4" bash experiments/paper_regime.sh 0 1 2 3 4 5 6 7 8 9   # SST-5 at 5 seeds, the rest at 10
#   RESULTS=DIR LOGDIR=DIR JOBS=N bash experiments/paper_regime.sh ...   # elsewhere (e.g. run from a
#       frozen worktree of one commit, writing the result files into your checkout)
#
# Every finished run leaves a small result file in experiments/results/paper-regime/ (commit
# them as they come): a run whose file exists is skipped, so the study resumes on a fresh
# machine, and the tables are rebuilt from those files alone:
#   python experiments/regime_tables.py experiments/results/paper-regime-pretrain-only experiments/results/paper-regime \
#       --out docs/results/paper-regime.md --curves docs/results/paper-regime-curves.png
# Cheapest cells first. On one core each (two runs at a time on two cores): an MR or SUBJ run of
# LSTM+SA takes about 8-10 minutes, CNN+SA about half, the Transformer about twice; SST-5 trains
# on ~150k phrases and takes several times an MR run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
SEEDS=${*:-0 1 2}
RESULTS=${RESULTS:-experiments/results/paper-regime}
# A failed run does not stop the study: every sweep runs, then the script exits with the worst status.
STATUS=0
sweep() { "$PY" experiments/sweep.py --config experiments/configs/paper_regime.toml --logdir "${LOGDIR:-runs/paper-regime}" \
            --results "$RESULTS" --jobs "${JOBS:-2}" --threads-per-run 1 --seeds $SEEDS "$@" || STATUS=$?; }
sweep --nets cnn-sa lstm-sa --datasets mr subj
sweep --nets transformer --datasets mr subj
# SST-5 may stop at 5 seeds (issue 16): SST_SEEDS="0 1 2 3 4" keeps its cells there while SEEDS goes on.
SST_SEEDS=${SST_SEEDS:-$SEEDS}
SEEDS=$SST_SEEDS sweep --nets cnn-sa lstm-sa --datasets sst --set train.fused_adam=true  # no SST-5 run used the for-each Adam
# The Transformer's SST-5 runs take about 2 hours each on one core: pretraining about 40 minutes, the
# rest about 85 (seed 0's wall_seconds). Its pretraining alone gives issue 15's baseline:
# pretrain-only runs, kept in their own folder. The full run of a seed starts from its pretrain-only
# run's network where that run's folder is still on this machine (train.init_from; regime_tables.py
# adds the pretrain-only run's pretraining to it). Otherwise it repeats that pretraining, which gives
# the very same network at the same thread count (tests/integration/test_trainer.py; regime_tables.py compares the
# checksums), and replaces it in the tables.
PRETRAIN_ONLY=${PRETRAIN_ONLY:-experiments/results/paper-regime-pretrain-only}
PRETRAIN_LOGDIR=${LOGDIR:-runs/paper-regime}-pretrain-only
SEEDS=$SST_SEEDS RESULTS=$PRETRAIN_ONLY LOGDIR=$PRETRAIN_LOGDIR sweep --nets transformer --datasets sst \
    --set train.fused_adam=true --set train.agent_epochs=0 --set train.cotrain_epochs=0 --set train.fair_baseline=false
for seed in $SST_SEEDS; do
    network=$PRETRAIN_LOGDIR/sst-transformer-seed$seed/pretrain_best.pt
    if [ -e "$network" ]; then
        SEEDS=$seed sweep --nets transformer --datasets sst --set train.fused_adam=true --set "train.init_from=$(realpath "$network")"
    else
        SEEDS=$seed sweep --nets transformer --datasets sst --set train.fused_adam=true
    fi
done
"$PY" experiments/regime_tables.py "$PRETRAIN_ONLY" "$RESULTS" --out docs/results/paper-regime.md --curves docs/results/paper-regime-curves.png
exit $STATUS
