#!/usr/bin/env bash
# Builds bread's container image with podman and checks it serves: the
# Dockerfile's runtime stage (FROM scratch, non-root, /project, start) over a
# binary built here with the Dockerfile's flags, so no registry is needed
# (the Dockerfile's golang build stage would pull an image). Then runs it,
# probes /healthz and /readyz, streams a run, sends SIGTERM (podman stop) and
# checks the exit code is 0.
#
#   scripts/image-smoke.sh            # or: make image-smoke
#
# Needs podman (Debian: apt-get install podman runc). On hosts where crun
# cannot set rlimits or cgroups (nested containers), the script uses runc,
# cgroupfs and no default ulimits.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v podman >/dev/null || { echo "image-smoke: podman is not installed" >&2; exit 2; }

work=$(mktemp -d)
name=bread-smoke-$$
port=${PORT:-38123}
trap 'podman rm -f "$name" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

echo "image-smoke: building the static binary (CGO_ENABLED=0, as the Dockerfile)"
CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$work/bread" ./cli/cmd/bread
cp -r examples/hello-world "$work/project"
rm -f "$work/project"/*.db*
mkdir -p "$work/etc/ssl/certs"
cp /etc/ssl/certs/ca-certificates.crt "$work/etc/ssl/certs/" 2>/dev/null || : > "$work/etc/ssl/certs/ca-certificates.crt"
# The Dockerfile's runtime stage, with COPY --from=build replaced by the
# files built above.
sed -n '/^FROM scratch/,$p' Dockerfile | sed \
  -e 's#^COPY --from=build /etc/ssl/certs/ca-certificates.crt #COPY etc/ssl/certs/ca-certificates.crt #' \
  -e 's#^COPY --from=build /out/bread #COPY bread #' \
  -e 's#^COPY --from=build --chown=65532:65532 /out/project #COPY --chown=65532:65532 project #' > "$work/Containerfile"
grep -q -- '--from=build' "$work/Containerfile" && { echo "image-smoke: the Dockerfile's runtime stage changed; update the script" >&2; exit 1; }

conf="$work/containers.conf"
printf '[containers]\ndefault_ulimits = []\n[engine]\ncgroup_manager = "cgroupfs"\n' > "$conf"
export CONTAINERS_CONF="$conf"
runtime=()
command -v runc >/dev/null && runtime=(--runtime runc)

podman "${runtime[@]}" build -q -t bread-smoke:ci -f "$work/Containerfile" "$work" >/dev/null
echo "image-smoke: image $(podman image inspect bread-smoke:ci --format '{{.Size}}') bytes, user $(podman image inspect bread-smoke:ci --format '{{.Config.User}}')"
# Loopback inside the host network: hello-world has no auth, and bread
# refuses a public bind without it.
podman "${runtime[@]}" run -d --name "$name" --network host \
  -e BREAD_HOST=127.0.0.1 -e BREAD_PORT="$port" bread-smoke:ci >/dev/null

for i in $(seq 1 50); do
  curl -fsS "localhost:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -fsS "localhost:$port/healthz"; echo
curl -fsS "localhost:$port/readyz"; echo
curl -fsSN -X POST "localhost:$port/agents/echo/run" -H 'content-type: application/json' -d '{"input":"hi"}' | grep -q '"agent:run:end"'
echo "image-smoke: a run streamed to agent:run:end"
podman "${runtime[@]}" stop -t 30 "$name" >/dev/null
code=$(podman inspect "$name" --format '{{.State.ExitCode}}')
podman logs "$name" 2>&1 | tail -3
[ "$code" = 0 ] || { echo "image-smoke: exit code $code after SIGTERM" >&2; exit 1; }
echo "image-smoke: ok (exit 0 after SIGTERM)"
