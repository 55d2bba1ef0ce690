#!/usr/bin/env bash
# Compile-time baseline of `#[differentiable]` for the CURRENT checkout.
#
# Everything builds in a fresh CARGO_TARGET_DIR inside a temp directory (no other build is
# disturbed; the temp directory is removed at the end unless KEEP=1), with
# CARGO_INCREMENTAL=0 so that a touched, unchanged source is compiled again in full, as an
# edited one would be (release is not incremental anyway).
#
#  (a) The bench target: `cargo bench --bench gradients --no-run --locked`, from clean
#      (every dependency included; skip with FROM_CLEAN=0), then after
#      `touch benches/gradients.rs`, so that only the bench target rebuilds (skip all of
#      (a) with BENCH=0).
#  (b) A scratch binary crate depending on this checkout's root `scalar-autodiff` by path, with one
#      `#[differentiable]` function of N operations (N in SIZES; over 128 operations,
#      `#[differentiable(tape)]`, as such a body must say today): a straight-line chain of
#      `let`s over three f64 parameters cycling through
#          let v1 = (v0 * 1.0001 + y).tanh();
#          let v2 = v1 * z + v0 * 0.5;
#          let v3 = (v2 * 0.01).exp() * x;
#      (three operations each, values bounded). Two consumers (CONSUMERS, default both):
#      `grad`, whose `main` calls the plain function and `name_grad` (what the compiled
#      sweeps replace), and `all`, which also calls `name_graph` + `backward`. A binary
#      compiles only what `main` reaches, so `grad` leaves `name_graph` out. Dependencies are
#      built first; then `touch src/main.rs` and the rebuild is timed: the consumer crate
#      only, in debug (`cargo build`) and release (`cargo build --release`).
#
# Each number is the median of RUNS (default 3) runs, in seconds: wall clock and, beside it,
# CPU time (user + system of cargo and every rustc it ran), which a machine shared with
# other builds inflates much less than the wall clock. The load average is printed at the
# start and the end, to judge how contended the wall numbers are.
#
# Usage: scripts/compile-time.sh
#        RUNS=3 SIZES="250 1000 5000" CONSUMERS="grad all" BENCH=1 FROM_CLEAN=1 KEEP=0 \
#            scripts/compile-time.sh
#
# Baseline measured on 2026-12-01 at commit 22e7be9: the library crates (autodiff,
# autodiff-runtime, autodiff-macros) and Cargo.lock exactly as at 22e7be9, unmodified;
# benches/gradients.rs with the softmax_iris and mlp_batch cases (as at f1ad246). Rust
# 1.95.0, a shared 2-core AMD EPYC virtual machine on which other sessions were building at
# the same time (load average 3 to 8), so the wall numbers are inflated and noisy; the CPU
# column is the steadier one to compare against. Medians of 3 runs, seconds:
#
#   measurement                                         wall      cpu
#   bench target, from clean (all dependencies)       297.45   221.48   (a)
#   bench target, touched benches/gradients.rs         12.91    12.96   (a)
#   scratch grad,    250 operations, debug              1.52     0.99   (b)
#   scratch grad,    250 operations, release           13.54     7.11   (b)
#   scratch grad,  1,000 operations, debug              5.29     2.62   (b)
#   scratch grad,  1,000 operations, release           13.95     6.78   (b)
#   scratch grad,  5,000 operations, debug             31.40    20.73   (c)
#   scratch grad,  5,000 operations, release           89.53    83.82   (c)
#   scratch all,     250 operations, debug              1.44     1.42   (a)
#   scratch all,     250 operations, release           11.30     7.83   (a)
#   scratch all,   1,000 operations, debug              5.36     3.54   (a)
#   scratch all,   1,000 operations, release           26.30    19.82   (a)
#   scratch all,   5,000 operations, debug             40.18    26.80   (a)
#   scratch all,   5,000 operations, release          895.35   671.45   (a)
#
#   (a) one run of this script at 69c0c26 (load average 3.2 to 4.5 at the start), whose one
#       consumer was the `all` consumer here; (b) CONSUMERS=grad BENCH=0 at fc3084a (load 8.2
#       at the start; that run was then stopped by a SIGTERM from outside during the 5,000
#       release builds); (c) SIZES=5000 CONSUMERS=grad BENCH=0 at d04ad90 (load 6.5 at the
#       start, 2.0 at the end). Earlier the same day, under lighter load, the first
#       from-clean bench build of this worktree took 86 s wall.
#
# Most of the `all` consumer's release time is `name_graph`, not `name_grad`: at 1,000
# operations a consumer calling only `name_graph` took 13.7 CPU s against 6.7 for one
# calling only `name_grad` (one nice'd run each).
#
# The generated code inlines every backend call of a body with at most 256 of them and
# calls them out of line above that (OUTLINED_ABOVE in autodiff-macros/src/rewrite.rs): the
# 250-operation body is on the inlined side, 1,000 and 5,000 on the outlined side.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${RUNS:-3}"
SIZES="${SIZES:-250 1000 5000}"
CONSUMERS="${CONSUMERS:-grad all}"
FROM_CLEAN="${FROM_CLEAN:-1}"
BENCH="${BENCH:-1}"
KEEP="${KEEP:-0}"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/autodiff-compile-time.XXXXXX")"
if [[ "$KEEP" == 1 ]]; then
    echo "keeping $WORK"
else
    trap 'rm -rf "$WORK"' EXIT
fi
export CARGO_INCREMENTAL=0

# Runs "$@" quietly and prints "WALL,CPU" in seconds (CPU: user + system of it and its
# children); on failure shows its output.
seconds() {
    local TIMEFORMAT='%R %U %S'
    if ! { time "$@" >"$WORK/last.out" 2>&1; } 2>"$WORK/time.out"; then
        cat "$WORK/last.out" >&2
        echo "failed: $*" >&2
        exit 1
    fi
    awk '{ printf "%.2f,%.2f\n", $1, $2 + $3 }' "$WORK/time.out"
}

# The median of its arguments.
median() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
        END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

RESULTS=()
# record LABEL WALL,CPU...: prints the medians and the wall runs, keeps the line for the
# summary.
record() {
    local label="$1"
    shift
    local walls=() cpus=() run line
    for run in "$@"; do
        walls+=("${run%,*}")
        cpus+=("${run#*,}")
    done
    line="$(printf '%-46s %8s %8s   (wall runs: %s)' "$label" "$(median "${walls[@]}")" \
        "$(median "${cpus[@]}")" "${walls[*]}")"
    echo "$line"
    RESULTS+=("$line")
}
HEADER="$(printf '%-46s %8s %8s' "measurement" "wall s" "cpu s")"

commit="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
dirty=""
if [[ -n "$(git -C "$ROOT" status --porcelain 2>/dev/null)" ]]; then
    dirty=" (with uncommitted changes)"
fi
echo "compile-time baseline: $(date -u +%Y-%m-%d) at $commit$dirty, $(rustc --version)"
echo "checkout $ROOT, temp dir $WORK, $RUNS runs each, CARGO_INCREMENTAL=0"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "$HEADER"

# ------------------------------------------------------------------ (a) the bench target

if [[ "$BENCH" == 1 ]]; then
    bench_target="$WORK/bench-target"
    bench() {
        (cd "$ROOT" && CARGO_TARGET_DIR="$bench_target" cargo bench --bench gradients --no-run --locked)
    }
    if [[ "$FROM_CLEAN" == 1 ]]; then
        times=()
        for _ in $(seq "$RUNS"); do
            rm -rf "$bench_target"
            times+=("$(seconds bench)")
        done
        record "bench target, from clean (all dependencies)" "${times[@]}"
    else
        bench >/dev/null 2>&1 || { bench; exit 1; }
    fi
    times=()
    for _ in $(seq "$RUNS"); do
        touch "$ROOT/benches/gradients.rs"
        times+=("$(seconds bench)")
    done
    record "bench target, touched benches/gradients.rs" "${times[@]}"
    rm -rf "$bench_target"
fi

# ------------------------------------------------------------------ (b) the scratch crate

# Writes the body of a function of "$1" operations, three per `let`, to stdout.
chain_body() {
    local ops="$1" lines i
    lines=$((ops / 3))
    echo "    let v0 = x;"
    for ((i = 1; i <= lines; i++)); do
        case $((i % 3)) in
            1) echo "    let v$i = (v$((i - 1)) * 1.0001 + y).tanh();" ;;
            2) echo "    let v$i = v$((i - 1)) * z + v$((i - 2)) * 0.5;" ;;
            0) echo "    let v$i = (v$((i - 1)) * 0.01).exp() * x;" ;;
        esac
    done
    case $((ops % 3)) in
        0) echo "    v$lines" ;;
        1) echo "    v$lines + y" ;;
        2) echo "    v$lines * z + x" ;;
    esac
}

scratch_target="$WORK/scratch-target"
for ops in $SIZES; do
    for consumer in $CONSUMERS; do
        name="ops${ops}_$consumer"
        dir="$WORK/$name"
        mkdir -p "$dir/src"
        cat >"$dir/Cargo.toml" <<EOF
[package]
name = "$name"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
scalar-autodiff = { path = "$ROOT" }

[workspace]
EOF
        # Start from the workspace's lock so the dependencies are the versions it builds with.
        cp "$ROOT/Cargo.lock" "$dir/Cargo.lock"
        {
            echo "//! One #[differentiable] function of $ops operations, generated by scripts/compile-time.sh."
            echo "use std::hint::black_box;"
            echo
            echo "use scalar_autodiff::{differentiable, ScalarAutodiffError};"
            echo
            # Over 128 operations `name_grad`'s sweeps are not compiled, and the attribute
            # asks for `tape` to take the tape knowingly (see `sweep::COMPILED_UP_TO`).
            if ((ops > 128)); then
                echo "#[differentiable(tape)]"
            else
                echo "#[differentiable]"
            fi
            echo "fn chain(x: f64, y: f64, z: f64) -> f64 {"
            chain_body "$ops"
            echo "}"
            cat <<'EOF'

fn main() -> Result<(), ScalarAutodiffError> {
    let (x, y, z) = (black_box(0.7), black_box(0.2), black_box(0.3));
    let plain = chain(x, y, z);
    let (value, gradient) = chain_grad(x, y, z)?;
    assert_eq!(plain, value);
    println!("value {value} gradient {gradient:?}");
EOF
            if [[ "$consumer" == all ]]; then
                cat <<'EOF'
    let v = scalar_autodiff::Scalar::variable;
    let (sx, sy, sz) = (v(x)?, v(y)?, v(z)?);
    let graph = chain_graph(&sx, &sy, &sz)?;
    graph.backward()?;
    assert_eq!(graph.value(), value);
    println!("graph x_grad {:?}", sx.gradient());
EOF
            fi
            echo "    Ok(())"
            echo "}"
        } >"$dir/src/main.rs"

        for profile in debug release; do
            flags=()
            [[ "$profile" == release ]] && flags=(--release)
            build() {
                (cd "$dir" && CARGO_TARGET_DIR="$scratch_target" cargo build --offline "${flags[@]}")
            }
            # Dependencies (and the crate itself) first; offline, from the copied lock.
            if ! build >"$WORK/deps.out" 2>&1; then
                cat "$WORK/deps.out" >&2
                echo "the first build of $name ($profile) failed" >&2
                exit 1
            fi
            times=()
            for _ in $(seq "$RUNS"); do
                touch "$dir/src/main.rs"
                times+=("$(seconds build)")
            done
            label="$(printf 'scratch %-5s %5s operations, %s' "$consumer," "$ops" "$profile")"
            record "$label" "${times[@]}"
            if [[ "$profile" == release ]]; then
                echo "    $name runs: $("$scratch_target/release/$name" | tr '\n' ' ')"
            fi
        done
    done
done

echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "summary (seconds, medians of $RUNS):"
echo "  $HEADER"
printf '  %s\n' "${RESULTS[@]}"
