#!/usr/bin/env bash
# Rebuilds resources/demo/ from nothing but the Python standard library sources on this
# machine: tokenizer -> target -> the target's greedy answers -> four DFlash drafters -> two in
# vLLM speculators' format, made from the good one by the package. Seeds are
# fixed in each script; every step logs its wall time. CPU only: on the idle 2-core build
# machine the steps took 2 + 394 + 40 + ~490 s (two drafters in parallel), about 23 minutes;
# the tap-shifted drafter, added later and trained alone on the same data, the same size and
# steps as the good one, took 1167 s on the machine shared with other jobs. The two speculators
# drafters, added later still (one torch thread, the machine shared), took 14 + 397 s.
#   tools/demo/train_all.sh            (python: .venv/bin/python, or $PYTHON)
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-../../.venv/bin/python}
export DEMO_WORK=${DEMO_WORK:-/tmp/dflash-demo-work}
TARGET_STEPS=${TARGET_STEPS:-1000}
DRAFTER_STEPS=${DRAFTER_STEPS:-2000}
DSPARK_STEPS=${DSPARK_STEPS:-600}
mkdir -p "$DEMO_WORK"
run() {
  local name=$1; shift
  local t0=$SECONDS
  echo "== $name: $*"
  nice -n 5 "$PY" "$@" 2>&1 | grep --line-buffered -v "falling back to its reference PyTorch" | tee "$DEMO_WORK/$name.log"
  echo "$name $((SECONDS - t0))" >> "$DEMO_WORK/times.txt"
  echo "== $name: $((SECONDS - t0)) s"
}
: > "$DEMO_WORK/times.txt"
run tokenizer train_tokenizer.py
run target train_target.py "$TARGET_STEPS"
run data gen_data.py 640
# The good drafter (its step-100 weights are the early checkpoint) and the one trained with the
# anchor-visible mask bug run side by side, then the one trained on taps one layer earlier
# than its config names (hidden_states[id], the off-by-one bug).
run drafter-good train_drafter.py drafter-good "$DRAFTER_STEPS" --early 100:drafter-early &
run drafter-anchor-visible train_drafter.py drafter-anchor-visible "$DRAFTER_STEPS" --anchor-visible &
wait
run drafter-tap-shifted train_drafter.py drafter-tap-shifted "$DRAFTER_STEPS" --tap-offset -1
# vLLM speculators' formats, made by the package from the good drafter: the same weights with a
# reduced draft vocabulary (DFlash), then its backbone frozen under trained Markov and confidence
# heads (DSpark).
run drafter-speculators-reduced convert_speculators.py
run drafter-dspark train_dspark.py "$DSPARK_STEPS" --loss ce
"$PY" write_provenance.py
