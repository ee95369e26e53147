#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance)
# against the mcpserver plugin: internal/conformance serves a bread project at
# http://localhost:PORT/mcp with every tool the suite's tools scenarios call.
#
#   bash protocols/mcpserver/conformance.sh        # from the repository root
#
# Needs go, node and npm. The suite's newest release needs Node 22; Node 20
# runs 0.1.12 (the first with dns-rebinding-protection) and Debian 12's Node 18
# runs 0.1.10. CONFORMANCE_VERSION overrides the choice.
set -euo pipefail
cd "$(dirname "$0")/../.."

# Every server scenario of the suite (the same 31 in 0.1.10, 0.1.12 and
# 0.1.16; 0.1.10 lacks dns-rebinding-protection).
scenarios=(
  server-initialize ping tools-list
  tools-call-simple-text tools-call-image tools-call-audio tools-call-embedded-resource
  tools-call-mixed-content tools-call-error tools-call-with-progress
  json-schema-2020-12 dns-rebinding-protection
  tools-call-with-logging logging-set-level tools-call-sampling
  tools-call-elicitation elicitation-sep1034-defaults elicitation-sep1330-enums
  server-sse-polling server-sse-multiple-streams
  resources-list resources-read-text resources-read-binary resources-templates-read
  resources-subscribe resources-unsubscribe
  prompts-list prompts-get-simple prompts-get-with-args prompts-get-embedded-resource
  prompts-get-with-image completion-complete
)

node_major=$(node -p 'process.versions.node.split(".")[0]')
version=${CONFORMANCE_VERSION:-}
if [ -z "$version" ]; then
  if [ "$node_major" -ge 22 ]; then version=0.1.16
  elif [ "$node_major" -ge 20 ]; then version=0.1.12
  else version=0.1.10
  fi
fi
if [ "$version" = 0.1.10 ]; then
  # 0.1.10 predates this scenario; the Go tests cover Host and Origin.
  scenarios=("${scenarios[@]/dns-rebinding-protection/}")
fi

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "conformance: node $(node --version), @modelcontextprotocol/conformance@$version"
npm install --silent --no-audit --no-fund --prefix "$work" "@modelcontextprotocol/conformance@$version" >"$work/npm.log" 2>&1 || {
  cat "$work/npm.log"; exit 1; }
suite="$work/node_modules/@modelcontextprotocol/conformance/dist/index.js"

go build -o "$work/server" ./protocols/mcpserver/internal/conformance
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 3917)
"$work/server" -port "$port" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 1 50); do
  if (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.2
done

passed=0 failed=0 failures=()
for s in "${scenarios[@]}"; do
  [ -z "$s" ] && continue
  if node "$suite" server --url "http://localhost:$port/mcp" --scenario "$s" >"$work/$s.log" 2>&1; then
    passed=$((passed + 1)); echo "conformance: $s passed"
  else
    failed=$((failed + 1)); failures+=("$s"); echo "conformance: $s FAILED"; tail -40 "$work/$s.log"
  fi
done
echo "conformance: $passed passed, $failed failed"
if [ "$failed" -gt 0 ]; then
  echo "conformance: failed: ${failures[*]}"
  cat "$work/server.log"
  exit 1
fi
