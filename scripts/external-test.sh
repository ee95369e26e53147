#!/usr/bin/env bash
# scripts/external-test.sh [--keep]
#
# Proves the modules work as published, from a module outside the
# repository. It writes every module of go.work, rewritten for publication
# (scripts/modproxy), into a temporary GOPROXY tree at a throwaway version,
# then, in a brand-new module in a temporary directory with GOWORK=off:
#
#   1. copies the templates of scripts/external (every FILE.txt becomes FILE),
#   2. requires, at that version, every bread module the templates import,
#      and runs go mod tidy through the file proxy,
#   3. go vet and go test: the store conformance suite (core/storetest)
#      against a store wrapping stores/sqlite,
#   4. builds the main program, serves one agent over HTTP on loopback and
#      checks a run and its session with curl,
#   5. go install github.com/breadai/bread/examples/scripted@VERSION and runs it.
#
# A v0.0.0 sibling require left in a published go.mod fails step 2 (v0.0.0
# is in no proxy). A leftover replace does not break a consumer's build (the
# go command ignores the replaces of dependencies), so releasetool
# verifyproxy checks every published go.mod first, and step 5 is the
# consumer that does refuse one.
#
# The version is unique per run, v0.0.0-external.<unix time>.<pid>: the go
# command never refetches a version its module cache holds, and it indexes
# each module cache directory in GOCACHE by its path alone, so a version
# string must never come back with other content. The run's version is
# removed from the module cache on exit (releasetool cleancache). --keep
# keeps the temporary directory. Needs go, git and curl; third-party modules
# come from the module cache, else from EXTERNAL_UPSTREAM_PROXY
# (https://proxy.golang.org).
set -euo pipefail

keep=0
for arg in "$@"; do
  case $arg in
    --keep) keep=1 ;;
    *) echo "usage: scripts/external-test.sh [--keep]" >&2; exit 2 ;;
  esac
done
for cmd in go git curl; do
  command -v "$cmd" >/dev/null || { echo "external-test: $cmd is not on PATH" >&2; exit 1; }
done

start=$SECONDS
repo=$(cd "$(dirname "$0")/.." && pwd)
version=v0.0.0-external.$(date -u +%s).$$
work=$(mktemp -d "${TMPDIR:-/tmp}/bread-external.XXXXXX")
proxy=$work/proxy
mod=$work/mod
server_pid=

step() { printf '== %s (%ds)\n' "$*" $((SECONDS - start)); }

cleanup() {
  local rc=$?
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  # This run's version of our modules, out of the shared module cache.
  if [ -x "${RELEASETOOL:-}" ]; then
    "$RELEASETOOL" -C "$repo" cleancache "$version" || rc=1
  fi
  if [ "$keep" = 1 ]; then
    echo "external-test: kept $work"
  else
    chmod -R u+w "$work" 2>/dev/null || true
    rm -rf "$work"
  fi
  exit $rc
}
trap cleanup EXIT

step "releasetool"
export RELEASETOOL=$work/bin/releasetool
(cd "$repo/scripts/releasetool" && GOWORK=off GOFLAGS='' go build -buildvcs=false -o "$RELEASETOOL" .)

step "modproxy $version"
"$repo/scripts/modproxy" "$proxy" "$version" 2>"$work/modproxy.log" || { cat "$work/modproxy.log" >&2; exit 1; }
# What the builds below cannot see: a dependency's replace is ignored by the
# go command, so check every published go.mod itself.
"$RELEASETOOL" -C "$repo" verifyproxy "$proxy" "$version"

step "external module in $mod"
mkdir -p "$mod"
(cd "$repo/scripts/external" && find . -type f -name '*.txt') | while IFS= read -r t; do
  mkdir -p "$mod/$(dirname "$t")"
  cp "$repo/scripts/external/$t" "$mod/${t%.txt}"
done

export GOWORK=off
export GOFLAGS=-mod=mod
export GOPROXY="file://$proxy,${EXTERNAL_UPSTREAM_PROXY:-https://proxy.golang.org}"
export GONOSUMDB=github.com/breadai/bread
export GOPRIVATE='' GONOPROXY=''
cd "$mod"
go mod init example.com/breadexternal 2>/dev/null
imported=$("$RELEASETOOL" -C "$repo" imports "$mod")
requires=()
for m in $imported; do
  requires+=("-require=$m@$version")
done
if [ ${#requires[@]} -eq 0 ]; then
  echo "external-test: the templates import no bread module" >&2
  exit 1
fi
go mod edit "${requires[@]}"
step "go mod tidy (${requires[*]#-require=})"
go mod tidy
grep 'github.com/breadai/bread' go.mod

step "go vet ./..."
go vet ./...
step "go test ./..."
go test -count=1 ./...

step "go build"
go build -o "$work/breadexternal" .
"$work/breadexternal" -addr 127.0.0.1:0 -db "$work/serve.db" >"$work/serve.out" 2>"$work/serve.err" &
server_pid=$!
url=
for _ in $(seq 1 100); do
  url=$(sed -n 's/^listening on //p' "$work/serve.out")
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "external-test: the server did not start" >&2
  cat "$work/serve.out" "$work/serve.err" >&2
  exit 1
fi
step "serving on $url"
run=$(curl -sS --fail-with-body --max-time 30 -X POST "$url/agents/baker/run" \
  -H 'content-type: application/json' -d '{"input":"hi","session":{"id":"external-1"}}')
echo "$run" | head -c 2000; echo
case $run in
  *'"type":"agent:run:end"'*) ;;
  *) echo "external-test: the run did not end with agent:run:end" >&2; exit 1 ;;
esac
text=$(echo "$run" | sed -n 's/.*"type":"text:delta".*"delta":"\([^"]*\)".*/\1/p' | tr -d '\n')
if [ "$text" != "Bread is good." ]; then
  echo "external-test: streamed text is \"$text\", want \"Bread is good.\"" >&2
  exit 1
fi
session=$(curl -sS --fail-with-body --max-time 10 "$url/sessions/external-1")
case $session in
  *'"external-1"'*) ;;
  *) echo "external-test: GET /sessions/external-1 = $session" >&2; exit 1 ;;
esac
kill -TERM "$server_pid"
wait "$server_pid" || { echo "external-test: the server did not shut down cleanly" >&2; cat "$work/serve.err" >&2; exit 1; }
server_pid=
if ! grep -qx 'created 1 sessions' "$work/serve.out"; then
  echo "external-test: the server's store did not create the session:" >&2
  cat "$work/serve.out" >&2
  exit 1
fi

# go install pkg@version is the consumer that refuses a replace in the
# go.mod of the module it installs from.
scripted=github.com/breadai/bread/examples/scripted
modules=$("$RELEASETOOL" -C "$repo" list)
if cut -f2 <<<"$modules" | grep -qx "$scripted"; then
  step "go install $scripted@$version"
  (cd "$work" && GOFLAGS='' GOBIN="$work/bin" go install "$scripted@$version")
  "$work/bin/scripted" >"$work/scripted.out"
  grep -q '"type":"agent:run:end"' "$work/scripted.out" || { echo "external-test: scripted did not finish its run" >&2; cat "$work/scripted.out" >&2; exit 1; }
fi

step "ok: $version"
