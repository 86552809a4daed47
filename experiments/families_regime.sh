#!/usr/bin/env bash
# The attention families in the paper regime (issue 16, item 5): the settings of
# experiments/configs/paper_regime.toml (GloVe 6B 50d, 300-unit networks, pretraining early-stopped
# on dev, the equal-budget baseline from the same pretrained checkpoint), 5 seeds each:
#   ATAE-LSTM and IAN on SemEval-2014 laptop and restaurant and SemEval-2015 restaurant (the paper's
#   Table III columns that exist here; its 2015 laptop set is not in ../shared/data), then DiSAN on
#   MR, SUBJ and SST-5 (phrase-level, the most expensive), then HAN on movie_reviews (the paper's
#   document sets are not available here).
#   √L0 and δ: the paper's defaults on the aspect and document sets (not tuned there).
#
#   bash experiments/families_regime.sh [SEEDS...]     # default: 0 1 2 3 4
#   RESULTS=DIR LOGDIR=DIR JOBS=N bash experiments/families_regime.sh ...
#
# Result files go to experiments/results/families-regime/ (commit them as they come; finished runs
# are skipped, so the study resumes on any machine); the tables:
#   python experiments/regime_tables.py experiments/results/families-regime --out docs/results/families-regime.md
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
SEEDS=${*:-0 1 2 3 4}
RESULTS=${RESULTS:-experiments/results/families-regime}
STATUS=0
sweep() { "$PY" experiments/sweep.py --config experiments/configs/paper_regime.toml --logdir "${LOGDIR:-runs/families-regime}" \
            --results "$RESULTS" --jobs "${JOBS:-2}" --threads-per-run 1 --seeds $SEEDS "$@" || STATUS=$?; }
sweep --nets atae-lstm ian --datasets semeval14-laptop semeval14-restaurant semeval15-restaurant
# DiSAN and HAN had not started when train.fused_adam became the default: they run with it
sweep --nets disan --datasets mr subj sst --set train.fused_adam=true
sweep --nets han --datasets movie-reviews --set train.fused_adam=true
exit $STATUS
