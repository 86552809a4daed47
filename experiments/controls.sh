#!/usr/bin/env bash
# Positive controls (docs/controls.md): the paper regime's networks with their attention degraded on purpose, so
# that attention is what limits them, and DRGA's agent asked to repair it. experiments/configs/paper_regime.toml,
# with the [control] settings below; each finished run leaves its result file (commit them as they come), a run
# whose file exists is skipped, so the study resumes on a fresh machine.
#
#   bash experiments/controls.sh planted [SEEDS...]    # planted SUBJ (one cue word carries the label), LSTM+SA and
#                                                      # CNN+SA, their attention masked on 95%, 90% and 80% of the positions
#   bash experiments/controls.sh uniform [SEEDS...]    # LSTM+SA on MR and SUBJ, uniform attention throughout: with
#                                                      # experiments/results/paper-regime's learned attention, the ceiling
#   bash experiments/controls.sh authors [SEEDS...]    # LSTM+SA on MR, SUBJ and SST-5 trained by the authors' code's
#                                                      # procedure (below), reported both ways by control_tables.py
#   bash experiments/controls.sh authors-variants [SEEDS...]  # the same on MR and SUBJ with one of its differences
#                                                      # undone: no flipping; eq. 5's reward; the paper's agent;
#                                                      # and a baseline of DRGA's 5 network epochs
#   bash experiments/controls.sh ... --dry-run         # the runs, without training
# Planted runs also leave cue-mass/<run>-agent.json and -cotrain.json: drga analyze --cue-words on the test split.
# The tables, from the committed files alone: python experiments/control_tables.py [--out docs/results/controls.md]
#   RESULTS=DIR LOGDIR=DIR JOBS=N bash experiments/controls.sh ...   # elsewhere (a frozen worktree writing into your checkout)
#
# Default seeds: 0 1 2. On two cores, two runs at a time, one thread each; an MR or SUBJ run of LSTM+SA takes
# about 8-10 minutes, CNN+SA about half.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
case ${1:-} in planted|uniform|authors|authors-variants) ;; *)
    echo "usage: bash experiments/controls.sh planted|uniform|authors|authors-variants [SEEDS...] [--dry-run]" >&2
    exit 2;;
esac
study=$1; shift
DRY=()
SEEDS=()
for arg in "$@"; do
    if [ "$arg" = --dry-run ]; then DRY=(--dry-run); else SEEDS+=("$arg"); fi
done
[ ${#SEEDS[@]} -gt 0 ] || SEEDS=(0 1 2)
RESULTS=${RESULTS:-experiments/results}
LOGDIR=${LOGDIR:-runs/controls}
STATUS=0
sweep() {  # FOLDER then the sweep's own arguments; a failed cell does not stop the others
    local folder=$1; shift
    "$PY" experiments/sweep.py --config experiments/configs/paper_regime.toml --logdir "$LOGDIR/$folder" \
        --results "$RESULTS/$folder" --jobs "${JOBS:-2}" --threads-per-run 1 --seeds "${SEEDS[@]}" "${DRY[@]}" "$@" || STATUS=$?
}
CUES=azure,crimson,amber,granite,basalt,marble   # drga/data/planted.py's CUE_WORDS
cue_mass() {  # FOLDER: the test split's mass on the cue words of each finished run's agent and co-trained network
    local folder=$1 run name phase
    [ ${#DRY[@]} -eq 0 ] || return 0
    for run in "$LOGDIR/$folder"/*/; do
        name=$(basename "$run")
        [ -e "$RESULTS/$folder/$name.json" ] || continue
        for phase in agent cotrain; do
            local file="$RESULTS/$folder/cue-mass/$name-$phase.json"
            [ -e "$file" ] || [ ! -e "$run/${phase}_best.pt" ] && continue
            "$PY" -m drga.cli analyze "$run/${phase}_best.pt" --only cue-mass --cue-words "$CUES" --split test \
                --out "$run/cue-mass-$phase" --no-progress || { STATUS=1; continue; }
            mkdir -p "$(dirname "$file")"
            "$PY" -c 'import json, sys; s = json.load(open(sys.argv[1])); json.dump({"commit": sys.argv[3], **{k: s[k] for k in ("network", "phase", "dataset", "split", "beta", "cue_mass")}}, open(sys.argv[2], "w"), indent=1)' \
                "$run/cue-mass-$phase/summary.json" "$file.partial" "$(git rev-parse --short=7 HEAD 2>/dev/null || echo unknown)" \
                && mv "$file.partial" "$file"
        done
    done
}
if [ "$study" = planted ]; then
    for strength in 0.95 0.9 0.8; do
        sweep "control-planted/masked-s$strength" --nets cnn-sa lstm-sa --datasets planted-subj \
            --set control.attention=masked --set "control.strength=$strength"
        cue_mass "control-planted/masked-s$strength"
    done
elif [ "$study" = uniform ]; then
    sweep control-uniform --nets lstm-sa --datasets mr subj --set control.attention=uniform --set control.strength=1.0
else
    # The authors' code (scofield7419/DRGA core/main.py), read as docs/controls.md tells: a linear policy choosing per
    # token to lower its weight to α(1 − β) or raise it to α(1 + β), β = 0.8 throughout; each sample's signal its
    # cross-entropy (γ = 0) plus 0.15 × (raised / L)², against the 5 samples' mean, not scaled; 80% of the training
    # choices drawn from the flipped probabilities; 2 epochs of pretraining, 3 of the agent, 5 of co-training, none cut
    # short. The network, data and K are the paper regime's, as the LSTM+SA cells of paper-regime/ have them.
    SCHEDULE=(--set train.pretrain_epochs=2 --set train.agent_epochs=3 --set train.cotrain_epochs=5 --set train.patience=0)
    AGENT=(--set agent.policy=binary --set 'agent.hidden_sizes=[]' --set agent.normalize_state=false
           --set agent.normalize_advantage=false --set adjust.multiplicative=true --set adjust.beta0=0.8
           --set adjust.beta_half_life_epochs=0 --set adjust.trainable_beta=false)
    SIGNAL=(--set reward.gamma=0 --set agent.raised_penalty=0.15)
    FLIP=(--set agent.flipped_sampling=0.8)
    if [ "$study" = authors ]; then
        sweep control-authors --nets lstm-sa --datasets mr subj sst "${AGENT[@]}" "${SIGNAL[@]}" "${FLIP[@]}" "${SCHEDULE[@]}"
    else  # authors-variants: one difference at a time turned back to the paper's, on MR and SUBJ
        sweep control-authors-no-flipping --nets lstm-sa --datasets mr subj "${AGENT[@]}" "${SIGNAL[@]}" "${SCHEDULE[@]}"
        sweep control-authors-eq5-reward --nets lstm-sa --datasets mr subj "${AGENT[@]}" "${FLIP[@]}" "${SCHEDULE[@]}"
        sweep control-authors-paper-agent --nets lstm-sa --datasets mr subj "${SCHEDULE[@]}"
        # the equal-budget baseline with as many network epochs as DRGA's co-training (5), not its agent and
        # co-training phases together (8): the agent phase freezes the network
        sweep control-authors-baseline-5 --nets lstm-sa --datasets mr subj "${AGENT[@]}" "${SIGNAL[@]}" "${FLIP[@]}" \
            "${SCHEDULE[@]}" --set train.baseline_epochs=5
    fi
fi
exit $STATUS
