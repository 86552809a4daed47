#!/usr/bin/env bash
# The translation study (issue 39): the Luong attention seq2seq and the Transformer encoder-decoder
# trained to convergence on Multi30k task 1 English→German (experiments/configs/nmt_regime_*.toml:
# whole passes, early stopping on greedy dev BLEU, co-training with train.task_loss_samples = 1),
# then the equal-budget baseline, the agent on the frozen network and DRGA co-training, one thread
# per run. Luong at seeds 0-4, the Transformer at 0-2 (TRANSFORMER_SEEDS="0 1 2 3 4" for 5).
#
# Two stages, as the tuned study runs them (experiments/tuned_study.py):
#   1. pretrain: every seed's network alone (the agent's and co-training's epochs set to 0), result
#      files in RESULTS/pretrain/. Seed 0's pretrained networks are the size probes and the networks the
#      translation reward grids tune on (experiments/tune_reward.py; docs/results/nmt.md).
#   2. drga: every seed whose stage 1 has finished, from that network (train.init_from): the equal-budget
#      baseline, the agent and co-training, with the reward coefficients the grids chose (in the configs).
#      Its result files, in RESULTS/, hold every row; the tables add stage 1's epochs and hours.
# Stage 2 of a seed whose network is not pretrained yet is skipped (listed); rerun the script later.
#
#   bash experiments/translation_regime.sh
#   TRANSFORMER_SEEDS="0 1 2 3 4" bash experiments/translation_regime.sh
#   STAGE=pretrain bash experiments/translation_regime.sh   # stage 1 only (STAGE=drga: stage 2 only)
#   NETS=seq2seq-luong bash experiments/translation_regime.sh   # one network (one thread per network, two at a time)
#   RESULTS=DIR LOGDIR=DIR JOBS=N bash experiments/translation_regime.sh   # e.g. from a frozen worktree of one commit
#   PLAN_ONLY=1 bash experiments/translation_regime.sh   # the projected compute and the commands; nothing starts
# On a GPU the whole study is one command of a few minutes instead (issue 53): experiments/translation_gpu.sh, with
# the GPU configs nmt_gpu_{luong,transformer}.toml (docs/gpu.md, "The translation study").
#
# Before anything starts, the sweep's plan of each stage is printed ("[plan] ..." lines of
# `experiments/sweep.py --dry-run`): the runs to do and, projected from the finished runs of the same
# cell (network) in that stage's results, their epochs, core-hours and wall hours at JOBS runs at a time.
# A cell with no finished run yet is listed as "not projected": the study's first runs measure it.
# Each finished run leaves a small result file (commit them as they come: a run whose file exists is
# skipped, an interrupted one resumes from its last epoch); the tables are rebuilt from those files alone:
#   python experiments/translation_tables.py    # writes docs/results/nmt-regime.md and its dev curves (--out - prints the page instead)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
RESULTS=${RESULTS:-experiments/results/translation-regime}
LOGDIR=${LOGDIR:-runs/translation-regime}
LUONG_SEEDS=${LUONG_SEEDS:-0 1 2 3 4}
TRANSFORMER_SEEDS=${TRANSFORMER_SEEDS:-0 1 2}
NETS=${NETS:-seq2seq-luong transformer-nmt}
STAGE=${STAGE:-all}
DATASET=multi30k-en-de
# Stage 1 trains the network alone: no agent, no co-training, no equal-budget baseline.
PRETRAIN_ONLY=(--set train.agent_epochs=0 --set train.cotrain_epochs=0 --set train.fair_baseline=false)
case $STAGE in all | pretrain | drga) ;; *) echo "STAGE must be all, pretrain or drga, not '$STAGE'" >&2; exit 2 ;; esac
# A failed run does not stop the study: every sweep runs, then the script exits with the worst status.
STATUS=0
sweep() {  # sweep NET SEEDS LOGDIR RESULTS [sweep flags...]
    local net=$1 seeds=$2 logdir=$3 results=$4 config
    shift 4
    config=$([ "$net" = seq2seq-luong ] && echo luong || echo transformer)
    "$PY" experiments/sweep.py --config "experiments/configs/nmt_regime_$config.toml" --nets "$net" --datasets $DATASET \
        --seeds $seeds --logdir "$logdir" --results "$results" --out "$logdir/sweep_results-$net.md" \
        --jobs "${JOBS:-2}" --threads-per-run 1 "$@" || STATUS=$?
}
seeds_of() { [ "$1" = seq2seq-luong ] && echo "$LUONG_SEEDS" || echo "$TRANSFORMER_SEEDS"; }
pretrained_seeds() {  # the seeds of NET whose stage 1 has finished (its result file exists)
    local net=$1 seed ready=""
    for seed in $(seeds_of "$net"); do
        [ -f "$RESULTS/pretrain/$DATASET-$net-seed$seed.json" ] && ready="$ready $seed"
    done
    echo "$ready"
}
stages() {  # stages [sweep flags...]: stage 1, then stage 2 of what stage 1 has finished, per network
    local net ready
    for net in $NETS; do
        if [ "$STAGE" != drga ]; then
            echo "[plan] $net: stage 1, pretraining alone"
            sweep "$net" "$(seeds_of "$net")" "$LOGDIR/pretrain" "$RESULTS/pretrain" "${PRETRAIN_ONLY[@]}" "$@"
        fi
        if [ "$STAGE" != pretrain ]; then
            ready=$(pretrained_seeds "$net")
            if [ -z "$ready" ]; then
                echo "[plan] $net: stage 2 waits for stage 1 (no pretrained seed yet)"
                continue
            fi
            echo "[plan] $net: stage 2 for the pretrained seeds$ready"
            sweep "$net" "$ready" "$LOGDIR" "$RESULTS" --set "train.init_from=$LOGDIR/pretrain/{dataset}-{net}-seed{seed}/pretrain_best.pt" "$@"
        fi
    done
}
echo "== the translation study's projected compute (experiments/sweep.py --dry-run) =="
stages --dry-run
if [ -n "${PLAN_ONLY:-}" ]; then
    exit $STATUS
fi
stages
# the tables of what is finished, on the terminal only: the checkout that commits the result files
# rebuilds docs/results/nmt-regime.md (a frozen worktree running the study stays clean)
if ls "$RESULTS"/*.json > /dev/null 2>&1; then
    "$PY" experiments/translation_tables.py "$RESULTS" --out - || STATUS=$?
fi
exit $STATUS
