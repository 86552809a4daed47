#!/usr/bin/env bash
# The translation study's size probes (issue 39): pretraining only, whole passes over Multi30k's 29,000
# pairs, early stopping on greedy dev BLEU over all 1,014 dev sentences; the Transformer, then the Luong
# seq2seq (experiments/configs/nmt_regime_*.toml). A probe's pretrained network can start the study's
# seed 0 (train.init_from), as the paper-regime Transformer's SST-5 runs did.
#
#   bash experiments/translation_probes.sh
#   RESULTS=DIR LOGDIR=DIR bash experiments/translation_probes.sh   # e.g. from a frozen worktree
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
RESULTS=${RESULTS:-experiments/results/translation-probes}
LOGDIR=${LOGDIR:-runs/translation-probes}
STATUS=0
for pair in transformer:transformer-nmt luong:seq2seq-luong; do
  "$PY" experiments/sweep.py --config "experiments/configs/nmt_regime_${pair%%:*}.toml" --nets "${pair##*:}" \
      --datasets multi30k-en-de --seeds 0 --jobs 1 --threads-per-run 1 --logdir "$LOGDIR" --results "$RESULTS" \
      --set train.agent_epochs=0 --set train.cotrain_epochs=0 --set train.fair_baseline=false || STATUS=$?
done
exit $STATUS
