# bread for Go: one workspace, many modules. `go test ./...` at the root does
# not reach nested modules; Go's `work` pattern (every package of every module
# in go.work) does, so the targets use it.

GO       ?= go
MODULES  := $(shell $(GO) list -f '{{.Dir}}' -m)
FUZZTIME ?= 10s
BENCH    ?= .

.PHONY: test test-short bench bench-http lint fuzz tidy external image-smoke

## test: every module's tests with the race detector (the README's command)
test:
	$(GO) test -race -count=1 -timeout 20m work

## test-short: quick pass without the race detector
test-short:
	$(GO) test -count=1 work

## bench: every benchmark, with allocations
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem work

## lint: go vet and a gofmt check
lint:
	$(GO) vet work
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## fuzz: a short pass over every fuzz target (FUZZTIME each)
fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz-all.sh

## tidy: go mod tidy in every module
tidy:
	@for m in $(MODULES); do (cd $$m && $(GO) mod tidy) || exit 1; done

## external: the published modules, used from a module outside the repository
external:
	./scripts/external-test.sh

## image-smoke: build the container image with podman, run it, probe it, SIGTERM it
image-smoke:
	./scripts/image-smoke.sh

## bench-http: the real server against plain net/http, in-process (bench/README.md)
bench-http:
	cd bench && $(GO) test -run '^$$' -bench 'ShortRun' -benchmem -benchtime 2000x -count 3 .
	cd bench && $(GO) test -run '^$$' -bench 'LongRun' -benchmem -benchtime 10x -count 3 .
	cd bench && $(GO) test -run '^$$' -bench 'IdleTails' -benchtime 1x -count 3 .
