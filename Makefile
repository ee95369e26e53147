# bread for Go: one workspace, many modules. `go test ./...` at the root does
# not reach nested modules, so every target walks the modules of go.work.

GO       ?= go
MODULES  := $(shell $(GO) list -f '{{.Dir}}' -m)
PKGS     := $(addsuffix /...,$(MODULES))
FUZZTIME ?= 10s
BENCH    ?= .

.PHONY: test test-short bench lint fuzz tidy

## test: every module's tests with the race detector
test:
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

## test-short: quick pass without the race detector
test-short:
	$(GO) test -count=1 $(PKGS)

## bench: every benchmark, with allocations
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem $(PKGS)

## lint: go vet and a gofmt check
lint:
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## fuzz: a short pass over every fuzz target (FUZZTIME each)
fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz-all.sh

## tidy: go mod tidy in every module
tidy:
	@for m in $(MODULES); do (cd $$m && $(GO) mod tidy) || exit 1; done
