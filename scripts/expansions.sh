#!/usr/bin/env bash
# Compares what `#[differentiable]` emits at a commit (default HEAD) and in the working tree,
# byte for byte, over every `#[differentiable]` item of the working tree's sources (src,
# tests, ui-tests, examples, benches; compile errors included). A refactor of the macro that
# must not change its output shows no difference.
#
# Usage: scripts/expansions.sh [COMMIT]
# It checks COMMIT out in a temporary worktree (with the dump test copied in if it is older
# than it), builds both macros' unit tests, writes both dumps and prints a diff of the
# changed items, or "identical".
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BASE="${1:-HEAD}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/autodiff-expansions.XXXXXX")"
trap 'git -C "$ROOT" worktree remove --force "$WORK/base" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

git -C "$ROOT" worktree add --quiet --detach "$WORK/base" "$BASE"
if [[ ! -f "$WORK/base/autodiff-macros/src/expansions.rs" ]]; then
    cp "$ROOT/autodiff-macros/src/expansions.rs" "$WORK/base/autodiff-macros/src/"
    printf '\n#[cfg(test)]\nmod expansions;\n' >>"$WORK/base/autodiff-macros/src/lib.rs"
fi

dump() { # DIR OUTPUT [TARGET_DIR]
    (cd "$1" && AUTODIFF_CORPUS="$ROOT" AUTODIFF_EXPANSIONS="$2" CARGO_TARGET_DIR="${3:-$1/target}" \
        cargo test --quiet --locked -p autodiff-macros --lib dump_expansions -- --ignored >/dev/null)
}
dump "$WORK/base" "$WORK/base.txt" "$ROOT/target/expansions-base"
dump "$ROOT" "$WORK/tree.txt"

if cmp -s "$WORK/base.txt" "$WORK/tree.txt"; then
    echo "identical: $(grep -c '^== ' "$WORK/tree.txt") expansions"
    exit 0
fi
# One line per item (its file, then its expansion): the items that changed, then the words
# that changed in the first of them.
join() { awk '/^== /{ name = $0; next } { print name " " $0 }' "$1"; }
join "$WORK/base.txt" >"$WORK/base.lines"
join "$WORK/tree.txt" >"$WORK/tree.lines"
changed="$(diff "$WORK/base.lines" "$WORK/tree.lines" | grep -c '^>' || true)"
echo "$changed of $(grep -c '^== ' "$WORK/tree.txt") expansions changed, in:"
diff "$WORK/base.lines" "$WORK/tree.lines" | grep '^>' | cut -d' ' -f3 | sort | uniq -c
diff <(diff "$WORK/base.lines" "$WORK/tree.lines" | grep -m1 '^<' | tr ' ' '\n') \
    <(diff "$WORK/base.lines" "$WORK/tree.lines" | grep -m1 '^>' | tr ' ' '\n') | head -40 || true
exit 1
