#!/usr/bin/env bash
# Beyond the paper (issue 16, item 4): DRGA variants on LSTM+SA × MR, SUBJ, SST-5 in the paper
# regime (experiments/configs/paper_regime.toml), each variant one setting on top of it:
#
#   holdout          data.agent_holdout=0.2: the agent learns on a fifth of the training split that
#                    the network never trains on (on SST-5 a fifth of the trees, each with all its
#                    phrases), so log P(y|X) in its reward is informative
#   self-critical    agent.reward_baseline=self-critical: REINFORCE's baseline is the reward of
#                    the policy's mean action instead of the mean of the K samples
#   closeness        reward.closeness=0.5: the reward also loses 0.5 · TV(α, α′)
#   own-attention    train.original_attention_loss=0.5: co-training also trains the network on
#                    its own attention
#
# and one that is not a variant of the method but of the Transformer's cost-saving default (issue
# 21), not in the default list: the Transformer with eq. 12's gradient through all K samples
# instead of one (its default, train.task_loss_samples = 1), to measure what that default costs:
#   transformer-all-gradients   train.task_loss_samples=0, on the Transformer
#   REUSE=runs/paper-regime DATASETS=mr SEEDS="0 1 2" bash experiments/variants.sh transformer-all-gradients
#
#   bash experiments/variants.sh [VARIANT ...]        # default: the four above; SEEDS="0 1 2" to choose seeds,
#                                                     # DATASETS="mr subj" the data sets, RESULTS=DIR where
#                                                     # the variant-<name>/ folders go (experiments/results)
#
# Each run leaves its result file in experiments/results/variant-<name>/ (commit them as they
# come; finished runs are skipped). By default every variant run repeats pretraining and the
# equal-budget baseline of its seed (deterministic: the same network as the main study's);
# with REUSE=runs/paper-regime it starts from that study's pretrained network of the same
# (data set, network, seed) instead (train.init_from; those run folders must be on this disk)
# and skips the baseline, whose rows the tables then take from the main study's result files,
# after checking that both runs started from the same network (not for holdout, whose network
# trains on less of the training split and so is pretrained afresh):
#   python experiments/regime_tables.py experiments/results/variant-<name> [--reference experiments/results/paper-regime]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
SEEDS=${SEEDS:-0 1 2 3 4 5 6 7 8 9}
DATASETS=${DATASETS:-mr subj sst}
declare -A SETTING=(
  [holdout]="data.agent_holdout=0.2"
  [self-critical]="agent.reward_baseline=self-critical"
  [closeness]="reward.closeness=0.5"
  [own-attention]="train.original_attention_loss=0.5"
  [transformer-all-gradients]="train.task_loss_samples=0"
)
declare -A NETWORK=([transformer-all-gradients]=transformer)  # the others run on LSTM+SA
VARIANTS=${*:-holdout self-critical closeness own-attention}
REUSED=()
if [[ -n "${REUSE:-}" ]]; then
  REUSED=(--set "train.init_from=$REUSE/{dataset}-{net}-seed{seed}/pretrain_best.pt" --set train.fair_baseline=false)
fi
for variant in $VARIANTS; do
  [[ -n "${SETTING[$variant]:-}" ]] || { echo "unknown variant '$variant' (one of: ${!SETTING[*]})" >&2; exit 2; }
  reuse=("${REUSED[@]}")
  [[ $variant == holdout ]] && reuse=()  # its network must not have trained on the agent's slice
  for dataset in $DATASETS; do
    # the SST-5 cells had not started when train.fused_adam became the default: they run with it
    fused=false; [[ $dataset == sst ]] && fused=true
    net=${NETWORK[$variant]:-lstm-sa}
    results=${RESULTS:-experiments/results}/variant-$variant
    # A seed whose result file is committed is finished. The committed cells were made two ways (whole runs for
    # MR seeds 0-2 and SST-5 seed 0, REUSE for the others: docs/RESULTS.md), and drga sweep never mixes settings:
    # one sweep over every seed would name the runs made the other way and stop. Only the seeds still to do go to it.
    todo=()
    for seed in $SEEDS; do [[ -e "$results/$dataset-$net-seed$seed.json" ]] || todo+=("$seed"); done
    if [[ ${#todo[@]} -eq 0 ]]; then
      echo "[skip] $variant on $dataset: the result file of every seed ($SEEDS) is in $results"
      continue
    fi
    "$PY" experiments/sweep.py --config experiments/configs/paper_regime.toml --set "${SETTING[$variant]}" "${reuse[@]}" \
        --set "train.fused_adam=$fused" --nets "$net" --datasets "$dataset" --seeds "${todo[@]}" --jobs "${JOBS:-2}" --threads-per-run 1 \
        --logdir "${LOGDIR:-runs/variants}/$variant" --results "$results"
  done
done
