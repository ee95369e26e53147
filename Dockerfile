# bread as a container: a static, pure-Go binary on an empty base image,
# running as a non-root user, serving the project folder at /project.
#
#   docker build -t bread .                                   # serves examples/hello-world
#   docker build --build-arg PROJECT=path/to/project -t my-agents .
#   podman build -t bread .                                   # the same with podman
#
# The project can also be mounted instead of copied (Kubernetes: the
# ConfigMap in deploy/kubernetes mounts bread.yaml over /project/bread.yaml).
# See "Running in production" in README.md.

ARG GO_IMAGE=golang:1.26-bookworm

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY . .
# CGO_ENABLED=0: every store and driver bread links is pure Go (SQLite is
# modernc.org/sqlite), so the binary needs no libc and runs FROM scratch.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/bread ./cli/cmd/bread
ARG PROJECT=examples/hello-world
RUN cp -r "/src/${PROJECT}" /out/project && rm -f /out/project/*.db*

FROM scratch
# TLS roots for model providers, Vault, OIDC, S3 and PostgreSQL/Redis over TLS.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/bread /bread
# The project folder belongs to the runtime user: SQLite files and the fs
# blob store write under it. With PostgreSQL and S3 it may be read-only.
COPY --from=build --chown=65532:65532 /out/project /project
USER 65532:65532
WORKDIR /project
# Every interface: a non-loopback bind needs server.auth in bread.yaml (bread
# refuses to listen publicly without it). Probes reach /healthz and /readyz
# when server.public lists health.live and health.ready.
ENV BREAD_HOST=0.0.0.0 \
    BREAD_PORT=3000 \
    BREAD_LOG_FORMAT=json \
    BREAD_LOG_LEVEL=info
EXPOSE 3000
# SIGTERM drains: readiness false, new runs 503, running runs finish until
# BREAD_DRAIN_TIMEOUT (default 25s), exit 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/bread", "--cwd", "/project", "start"]
