#!/usr/bin/env bash
# Runs every Fuzz target in the workspace for FUZZTIME (default 10s) each.
# `go test -fuzz` takes one package and one target at a time, so we list them.
#
# Go 1.26's fuzz coordinator can report a bare "context deadline exceeded"
# when -fuzztime expires while a worker is mid-call (golang/go#75804, fixed
# in Go 1.27). That is not a finding: a real failure always writes its input
# to testdata/fuzz/<target>/. So a run that fails with only that message and
# writes no new input is reported as a toolchain flake, not a failure.
#
# A target can ask for more time than FUZZTIME with a directive line right
# above its func, `//bread:fuzztime 20s`: packages that link large SDKs spend
# their first seconds warming up the instrumented workers.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-10s}"
status=0
while IFS= read -r file; do
  dir=$(dirname "$file")
  for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
    t="$fuzztime"
    least=$(grep -B1 -E "^func ${target}\(" "$file" | grep -oE '^//bread:fuzztime [0-9]+s' | grep -oE '[0-9]+' || true)
    if [ -n "$least" ] && [[ "$t" =~ ^[0-9]+s$ ]] && [ "${t%s}" -lt "$least" ]; then
      t="${least}s"
    fi
    echo "== fuzz $dir $target ($t)"
    corpus="$dir/testdata/fuzz/$target"
    before=$(ls "$corpus" 2>/dev/null | sort || true)
    log=$(mktemp)
    if (cd "$dir" && go test -run '^$' -fuzz "^${target}\$" -fuzztime "$t" .) 2>&1 | tee "$log"; then
      rm -f "$log"
      continue
    fi
    after=$(ls "$corpus" 2>/dev/null | sort || true)
    if [ "$before" = "$after" ] && grep -qx '    context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
      echo "== $target: deadline race in the Go fuzz coordinator (golang/go#75804), no failing input; not a failure"
    else
      status=1
    fi
    rm -f "$log"
  done
done < <(git ls-files '*_test.go' | xargs grep -l '^func Fuzz' || true)
exit $status
