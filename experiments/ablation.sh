#!/usr/bin/env bash
# Why does DRGA not beat the equal-budget baseline in the reproduction study? One cell, the
# reproduction config, one knob of the method changed at a time. Each run trains its own
# equal-budget baseline from the same seed, so the paired Δ in the table isolates the knob.
# Resumable like the study (finished runs are skipped).
#
#   bash experiments/ablation.sh [LOGDIR] [JOBS]     # default runs/ablation, 1 run at a time
#   NET=cnn-sa DATASET=mr SEEDS="0 1 2 3 4" SETTINGS="loose-l0 both" bash experiments/ablation.sh
#   python experiments/study_tables.py runs/ablation/<setting>   # one table per setting
#
# Defaults: LSTM+SA on SST, seeds 0-2, every setting below.
set -euo pipefail
cd "$(dirname "$0")/.."
LOGDIR=${1:-runs/ablation}
JOBS=${2:-1}
PY=${PYTHON:-python}
NET=${NET:-lstm-sa}
DATASET=${DATASET:-sst}
read -r -a SEED_LIST <<< "${SEEDS:-0 1 2}"

declare -A CHANGES=(
  [no-saliency-term]="reward.gamma=0.0"                          # reward = log P(y|X) only (eq. 5 with γ = 0)
  [gentle-beta]="adjust.beta0=0.1"                               # a smaller step α* = α + β·a
  [loose-l0]="reward.sqrt_l0=0.5"                                # optimum N = 0.5·L instead of 0.2·L
  [k10]="agent.samples=10"                                       # twice the REINFORCE samples per sentence
  [original-attention-loss]="train.original_attention_loss=0.5"  # co-train also on the network's own attention
  [both]="reward.sqrt_l0=0.5 train.original_attention_loss=0.5"  # loose-l0 and original-attention-loss together
  [k2-one-gradient]="agent.samples=2 train.task_loss_samples=1"  # the Transformer's fast setting: K = 2, eq. 12 through one
)
read -r -a NAMES <<< "${SETTINGS:-no-saliency-term gentle-beta loose-l0 k10 original-attention-loss both}"

for name in "${NAMES[@]}"; do
  if [[ -z "${CHANGES[$name]+set}" ]]; then
    echo "unknown setting '$name'; choose from: ${!CHANGES[*]}" >&2
    exit 2
  fi
done
for name in "${NAMES[@]}"; do
  sets=()
  for change in ${CHANGES[$name]}; do sets+=(--set "$change"); done
  "$PY" experiments/sweep.py --config experiments/configs/reproduction.toml --logdir "$LOGDIR/$name" --jobs "$JOBS" \
      --threads-per-run 1 --nets "$NET" --datasets "$DATASET" --seeds "${SEED_LIST[@]}" --out "$LOGDIR/$name/sweep.md" "${sets[@]}"
  "$PY" experiments/study_tables.py "$LOGDIR/$name" --out "$LOGDIR/$name/table.md"
done
