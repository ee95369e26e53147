#!/usr/bin/env bash
# Runs every Fuzz target in the workspace for FUZZTIME (default 10s) each.
# `go test -fuzz` takes one package and one target at a time, so we list them.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-10s}"
status=0
while IFS= read -r file; do
  dir=$(dirname "$file")
  for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
    echo "== fuzz $dir $target ($fuzztime)"
    if ! (cd "$dir" && go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" .); then
      status=1
    fi
  done
done < <(git ls-files '*_test.go' | xargs grep -l '^func Fuzz' || true)
exit $status
