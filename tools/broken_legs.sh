#!/usr/bin/env bash
# Issue 22's acceptance check: breaks the leg order on purpose and shows which tests catch it.
# In a worktree of HEAD under target/, up and down are swapped for the middle layer of a depth-3
# stack in crates/srcflow-tensor/src/kernels/legs.rs (the labels both the sweep and ops::exact_product use), and the
# whole Rust suite runs there. Prints every failing test with the first line of its failure.
#
#   tools/broken_legs.sh        # minutes: its own target directory, target/broken-legs-build
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TREE="$REPO/target/broken-legs"
git -C "$REPO" worktree remove --force "$TREE" 2>/dev/null || rm -rf "$TREE"
git -C "$REPO" worktree add --detach "$TREE" HEAD >/dev/null
trap 'git -C "$REPO" worktree remove --force "$TREE"' EXIT
python3 - "$TREE/crates/srcflow-tensor/src/kernels/legs.rs" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
kept = "    vec![Leg::Left(i), Leg::Right(i), up, down]\n}"
broken = ("    if i == 1 && k == 3 {\n"
          "        return vec![Leg::Left(i), Leg::Right(i), down, up]; // broken on purpose\n"
          "    }\n" + kept)
assert text.count(kept) == 1, "legs::core changed: update tools/broken_legs.sh"
open(path, "w").write(text.replace(kept, broken))
PY
cd "$TREE"
# The CUDA kernels' compile test looks for NVRTC under the tree's target/: lend it this one's.
if [ -d "$REPO/target/nvrtc" ]; then
    mkdir -p "$TREE/target" && ln -s "$REPO/target/nvrtc" "$TREE/target/nvrtc"
fi
LOG="$REPO/target/broken-legs.log"
CARGO_TARGET_DIR="$REPO/target/broken-legs-build" cargo test --release --no-fail-fast >"$LOG" 2>&1 || true
if grep -q '^error\[' "$LOG" || ! grep -q '^test result:' "$LOG"; then
    echo "the broken tree did not build or run its tests: see $LOG" >&2
    exit 1
fi
echo "Failing tests with the legs broken (full log: $LOG):"
python3 - "$LOG" <<'PY'
import re, sys
log = open(sys.argv[1], errors="replace").read().splitlines()
binary = None
failed = []
for line in log:
    m = re.match(r"\s+Running (?:unittests )?(\S+)", line)
    if m:
        binary = m.group(1)
    m = re.match(r"test (\S+) \.\.\. FAILED", line)
    if m:
        failed.append((binary, m.group(1)))
# The first panic message in each failing test's captured output ("---- name stdout ----"),
# whichever thread panicked (the test's own or a worker's).
reasons, current = {}, None
for i, line in enumerate(log):
    m = re.match(r"---- (\S+) stdout ----", line)
    if m:
        current = m.group(1)
    elif current and current not in reasons and re.match(r"thread '[^']+'(?: \(\d+\))? panicked at", line):
        reasons[current] = log[i + 1][:160] if i + 1 < len(log) else ""
for binary, test in failed:
    print(f"- {binary} {test}: {reasons.get(test, '?')}")
print(f"{len(failed)} failing tests")
PY
