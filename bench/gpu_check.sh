#!/usr/bin/env bash
# The GPU checks in one go, on a machine with a CUDA GPU (about 2 minutes on an H200; docs/gpu.md has the last results):
#
#   bash bench/gpu_check.sh [LOG_FOLDER]        # logs in LOG_FOLDER (default runs/gpu-check), runs in $RUNS
#
#   1. tests/test_cuda.py (a step of every phase of every network family on CUDA, the first loss equal to
#      the CPU's; bf16 and fp16 autocast) and tests/test_device.py
#   2. the demo with --device cuda (LSTM+SA on SUBJ with GloVe: every phase and the equal-budget baseline)
#   3. its co-trained network evaluated with the GPU hidden: a checkpoint written on CUDA loads on a CPU-only machine
#   4. a short demo under run.precision=bf16
#   5. one process under torchrun: the nccl backend and DistributedDataParallel on CUDA
#   6. bench/throughput.py on CUDA: co-training steps against plain training steps of every network, side by side
#
# Every step runs even if one before it failed; the script exits with the last failure's status.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
LOGS=${1:-runs/gpu-check}
RUNS=${RUNS:-$LOGS/runs}
mkdir -p "$LOGS" "$RUNS"
STATUS=0
step() {
    local name=$1 limit=$2; shift 2
    echo "== $name: $*"
    local started=$SECONDS
    timeout "$limit" "$@" > "$LOGS/$name.log" 2>&1
    local rc=$?
    echo "   exit $rc after $((SECONDS - started)) s; the log's last lines:"
    tail -n 12 "$LOGS/$name.log" | sed 's/^/   | /'
    [ $rc -eq 0 ] || STATUS=$rc
}
nvidia-smi -L
"$PY" -c "import torch; print('torch', torch.__version__, 'on', torch.cuda.get_device_name())"
DEMO=(-m drga.cli train --config demo --device cuda --logdir "$RUNS" --overwrite --no-progress)
SHORT=(--set train.pretrain_epochs=2 --set train.agent_epochs=1 --set train.cotrain_epochs=1)

step tests 100 "$PY" -m pytest -q -p no:cacheprovider tests/test_cuda.py tests/test_device.py
step demo 150 "$PY" "${DEMO[@]}"
step evaluate-on-cpu 45 env CUDA_VISIBLE_DEVICES= "$PY" -m drga.cli evaluate "$RUNS/demo-subj-lstm-sa/cotrain_best.pt" --device cpu
step bf16 70 "$PY" "${DEMO[@]}" --run-name demo-bf16 --set run.precision=bf16 "${SHORT[@]}"
step torchrun 70 "$PY" -m torch.distributed.run --standalone --nproc_per_node 1 "${DEMO[@]}" --run-name demo-torchrun "${SHORT[@]}"
step throughput 150 "$PY" bench/throughput.py --net all --device cuda --train-fraction 0.25
exit $STATUS
