#!/usr/bin/env bash
# Times 1,000 training steps of microgpt (and its 20 samples) two ways on this machine:
# the Python reference (tests/data/microgpt/reference.py, CPython's scalar autograd) and
# examples/microgpt (#[differentiable], release build); prints both wall times, their
# ratio, and whether the two printed the same losses (to 1e-9) and samples.
#
#   scripts/microgpt-vs-python.sh            # about 5 minutes, nearly all of it Python's
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
cargo build --release --quiet --example microgpt
start=$(date +%s%N)
./target/release/examples/microgpt --every-loss > "$out/rust.txt"
rust=$(( $(date +%s%N) - start ))
start=$(date +%s%N)
python3 tests/data/microgpt/reference.py examples/data/names.txt 1000 > "$out/python.txt"
python=$(( $(date +%s%N) - start ))
python3 - "$out/python.txt" "$out/rust.txt" "$python" "$rust" <<'PY'
import re, sys
def read(path):
    text = open(path).read()
    losses = [float(x) for x in re.findall(r'^step \d+ loss (\S+)$', text, re.M)]
    samples = re.findall(r'^sample +\d+: (\S*)$', text, re.M)
    return losses, samples
(pl, ps), (rl, rs) = read(sys.argv[1]), read(sys.argv[2])
python, rust = float(sys.argv[3]) / 1e9, float(sys.argv[4]) / 1e9
worst = max(abs(a - b) / abs(a) for a, b in zip(pl, rl))
print(f"python {python:.1f} s, #[differentiable] {rust:.3f} s: {python / rust:.0f}x")
print(f"largest relative loss difference over {len(pl)} steps: {worst:.2e}")
print(f"samples: {'the same 20' if ps == rs else 'DIFFERENT'}")
PY
rm -r "$out"
