# bread for Go: one workspace, many modules. `go test ./...` at the root does
# not reach nested modules; Go's `work` pattern (every package of every module
# in go.work) does, so the targets use it.

GO       ?= go
MODULES  := $(shell $(GO) list -f '{{.Dir}}' -m)
FUZZTIME ?= 10s
BENCH    ?= .

# releasetool (scripts/releasetool) reads go.work and every go.mod; it is
# its own module, run outside the workspace.
RELEASETOOL = cd scripts/releasetool && GOWORK=off GOFLAGS= $(GO) run -buildvcs=false . -C $(CURDIR)

# staticcheck (honnef.co/go/tools), pinned: installed from the module proxy
# into .tools (git-ignored) the first time make lint runs.
STATICCHECK_VERSION := v0.8.2
TOOLS               := $(CURDIR)/.tools
STATICCHECK         := $(TOOLS)/staticcheck-$(STATICCHECK_VERSION)

.PHONY: test test-short bench bench-http lint fuzz tidy replaces external image-smoke chaos

## test: every module's tests with the race detector (the README's command)
test:
	$(GO) test -race -count=1 -timeout 20m work

## test-short: quick pass without the race detector
test-short:
	$(GO) test -count=1 work

## chaos: the fault harness (bench/chaos): three replicas under load and faults for CHAOS_DURATION, then the invariants (CHAOS_SEED fixes the randomness, CHAOS_FAULTS picks the faults)
CHAOS_DURATION ?= 90s
chaos:
	cd bench && CHAOS_DURATION=$(CHAOS_DURATION) CHAOS_SEED=$(CHAOS_SEED) CHAOS_FAULTS=$(CHAOS_FAULTS) $(GO) test -count=1 -timeout 60m -run '^TestChaos$$' -v ./chaos

## bench: every benchmark, with allocations
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem work

## lint: gofmt, sibling replaces, go mod tidy -diff, go vet and staticcheck, every module
lint: $(STATICCHECK)
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; echo "fix: gofmt -w <files>"; exit 1; fi
	@$(RELEASETOOL) replaces -check
	@bad=; for m in $(MODULES); do (cd $$m && $(GO) mod tidy -diff >/dev/null 2>&1) || bad="$$bad $${m#$(CURDIR)/}"; done; \
	  if [ -n "$$bad" ]; then echo "go.mod not tidy in:$$bad"; echo "fix: make tidy (or see: cd <module> && go mod tidy -diff)"; exit 1; fi
	$(GO) vet work
	@$(STATICCHECK) work || { echo "fix the staticcheck findings above (a //lint:ignore CHECK reason only where one is wrong)"; exit 1; }

$(STATICCHECK):
	@mkdir -p $(TOOLS)/tmp
	GOBIN=$(TOOLS)/tmp GOWORK=off GOFLAGS= $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(TOOLS)/tmp/staticcheck $@

## replaces: write every go.mod's sibling requires and replace lines (after adding a module or a sibling import)
replaces:
	@$(RELEASETOOL) replaces

## fuzz: a short pass over every fuzz target (FUZZTIME each)
fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz-all.sh

## tidy: the sibling lines, then go mod tidy in every module (siblings first), then the sibling lines again
tidy: replaces
	@# go mod tidy does not rewrite a go.sum whose lines are right but out of
	@# order, while go mod tidy -diff (make lint) wants them sorted: such a
	@# go.sum is rebuilt.
	@for d in $$($(RELEASETOOL) tidyorder); do echo "go mod tidy: $$d"; \
	  (cd $$d && $(GO) mod tidy && { $(GO) mod tidy -diff >/dev/null 2>&1 || { rm -f go.sum && $(GO) mod tidy; }; }) || exit 1; done
	@$(RELEASETOOL) replaces

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
