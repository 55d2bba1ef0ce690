#!/usr/bin/env bash
# Runs GradBench's evals against this repository's tool (gradbench/, every derivative
# from #[differentiable]) and against the suite's hand-written C++ tool `manual`, on this
# machine, one after the other; validates every output (the eval compares it with
# `manual`'s) and writes one table: per eval and size, both tools' primal and derivative
# times (the means of their `evaluate` timings), our derivative over manual's, our
# derivative over our primal, and our tool's peak memory.
#
#   scripts/gradbench.sh                      # every eval the tool defines, default sizes
#   scripts/gradbench.sh llsq det             # some of them
#   MIN_SECONDS=0 scripts/gradbench.sh ode    # one run per input (default: 1 s, the suite's)
#
# Needs the suite built without Docker (../shared/gradbench/README.md: a copy of
# github.com/gradbench/gradbench, then setup.sh); RUN_EVAL names its run-eval.sh if it is
# not at ../shared/gradbench/run-eval.sh. The table goes to target/gradbench/results.md,
# the logs beside it. Exits non-zero if an eval fails or an output does not validate.
set -euo pipefail
cd "$(dirname "$0")/.."
run_eval="${RUN_EVAL:-$PWD/../shared/gradbench/run-eval.sh}"
if [ ! -x "$run_eval" ]; then
  echo "no GradBench here: set RUN_EVAL to its run-eval.sh (see ../shared/gradbench/README.md)" >&2
  exit 2
fi
evals=("$@")
if [ ${#evals[@]} -eq 0 ]; then evals=(hello llsq lse det ode kmeans gmm lstm ba ht); fi
out="$PWD/target/gradbench"
mkdir -p "$out/logs"
cargo build --release --locked --quiet -p scalar-autodiff-gradbench
tool="$PWD/target/release/scalar-autodiff-gradbench"
status=0
for eval in "${evals[@]}"; do
  extra=(--min-runs 1 --min-seconds "${MIN_SECONDS:-1}")
  if [ "$eval" = ht ]; then extra+=(--max 11); fi
  for who in ours manual; do
    log="$out/logs/$eval-$who"
    rm -rf "$log" && mkdir -p "$log"
    if [ "$who" = ours ]; then
      # The tool under GNU time, when there is one: its peak resident memory.
      command="$tool"
      if [ -x /usr/bin/time ]; then command="/usr/bin/time -o $log/memory -f %M $tool"; fi
    else
      command=manual
    fi
    echo "== $eval: $who"
    if ! TIMEOUT="${TIMEOUT:-3600}" LOGDIR="$log" "$run_eval" "$eval" "$command" "${extra[@]}" \
      > "$log/console.txt" 2>&1; then
      echo "   failed: $log/console.txt"
      status=1
    fi
    tail -n 2 "$log/console.txt" | head -n 1
  done
done
python3 - "$out" "${evals[@]}" > "$out/results.md" <<'PY'
import glob, gzip, json, os, statistics, sys

out, evals = sys.argv[1], sys.argv[2:]
PRIMAL, DERIVATIVE = ("primal", "objective", "cost", "square"), ("gradient", "jacobian", "dir", "double")

def read(directory):
    """Per workload: {function kind: mean evaluate ns}, and whether all validated."""
    paths = glob.glob(os.path.join(directory, "*.jsonl.gz")) + glob.glob(os.path.join(directory, "*.jsonl"))
    if not paths:
        return {}, False
    lines = [json.loads(line) for line in gzip.open(paths[0], "rt") if line.strip()] if paths[0].endswith(".gz") \
        else [json.loads(line) for line in open(paths[0]) if line.strip()]
    messages = {l["message"]["id"]: l["message"] for l in lines if "message" in l}
    responses = {l["response"]["id"]: l["response"] for l in lines if "response" in l}
    valid = {m["of"]: m.get("valid", False) for m in messages.values() if m.get("kind") == "analysis"}
    table, all_valid = {}, True
    for id, message in messages.items():
        if message.get("kind") != "evaluate":
            continue
        response = responses.get(id, {})
        times = [t["nanoseconds"] for t in response.get("timings", []) if t.get("name") == "evaluate"]
        kind = "primal" if message["function"] in PRIMAL else "derivative"
        workload = message.get("description") or str(message.get("input", ""))[:20]
        if response.get("success") and times:
            table.setdefault(workload, {})[kind] = statistics.mean(times)
        all_valid &= bool(response.get("success")) and valid.get(id, False)
    return table, all_valid

def time(ns):
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.0f} ns"

def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"

print("| eval | size | our primal | our derivative | manual primal | manual derivative "
      "| derivative / manual's | our derivative / primal |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
notes = []
for eval in evals:
    ours, ours_valid = read(os.path.join(out, "logs", f"{eval}-ours"))
    theirs, _ = read(os.path.join(out, "logs", f"{eval}-manual"))
    for workload, times in ours.items():
        other = theirs.get(workload, {})
        p, d = times.get("primal"), times.get("derivative")
        mp, md = other.get("primal"), other.get("derivative")
        print(f"| {eval} | {workload} | {time(p)} | {time(d)} | {time(mp)} | {time(md)} "
              f"| {ratio(d, md)} | {ratio(d, p)} |")
    memory = os.path.join(out, "logs", f"{eval}-ours", "memory")
    peak = open(memory).read().split()[-1] if os.path.exists(memory) else None
    notes.append(f"- {eval}: {'every output validated' if ours_valid else 'NOT ALL VALIDATED'}"
                 + (f"; our tool's peak memory {int(peak) / 1024:.0f} MiB" if peak else ""))
print()
print("\n".join(notes))
PY
cat "$out/results.md"
if grep -q "NOT ALL VALIDATED" "$out/results.md"; then status=1; fi
exit $status
