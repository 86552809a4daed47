#!/usr/bin/env bash
# The translation study (issue 39) on one GPU in one command (issue 53): every seed of each network at once
# (Luong 0-4, the Transformer 0-2) under the CUDA MPS daemon where the machine has it, each seed's stage 2
# (equal-budget baseline, agent, co-training, test decoding greedy and beam in both modes) as soon as its
# stage 1 (pretraining) ends, then one archive of everything under $OUT. experiments/translation_gpu.py
# says what it does; docs/gpu.md, "The translation study", gives the GPU call, what it carries and its limits.
#
#   bash experiments/translation_gpu.sh [luong|transformer|both]          # default both
#   BUDGET_S=530 bash experiments/translation_gpu.sh both    # stop and pack before 530 s (a GPU command gets 600)
#   SMOKE=1 bash experiments/translation_gpu.sh both         # the CPU rehearsal: tiny networks, a data slice, 2 seeds
#   OUT=DIR WORK=DIR ... ; extra options after NETS go to `translation_gpu.py run` (--luong-seeds "0 1", --no-mps, ...)
#
# On the CPU side afterwards: python experiments/translation_gpu.py unpack ARCHIVE... (then experiments/translation_tables.py).
set -euo pipefail
cd "$(dirname "$0")/.."
arguments=(run "${1:-both}")
[ -n "${SMOKE:-}" ] && arguments+=(--smoke)
[ -n "${BUDGET_S:-}" ] && arguments+=(--budget "$BUDGET_S")
[ -n "${WORK:-}" ] && arguments+=(--work "$WORK")
[ -n "${OUT:-}" ] && arguments+=(--out "$OUT")
exec "${PYTHON:-python3}" experiments/translation_gpu.py "${arguments[@]}" "${@:2}"
