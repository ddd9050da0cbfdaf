# ralph's build, test and benchmark entry points. Everything runs offline
# against servers the tests start themselves on 127.0.0.1.

GO       ?= go
BIN      ?= bin/ralph
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
# ralph needs no C: without cgo it starts about 2.5 ms sooner and is about
# 1.5 MB smaller (net and os/user use their pure Go versions). The race
# detector needs cgo, so `make test` keeps it.
CGO      ?= 0

.PHONY: build test bench lint demo clean

## build: compile ralph into bin/ralph
build:
	CGO_ENABLED=$(CGO) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

## test: the whole test suite with the race detector
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 30m ./...

BENCH_PKGS := $(shell $(GO) list ./... | grep -v '/cmd/')

## bench: every benchmark, printed as a table of medians against targets.
## The end-to-end ones in the root package run a fixed number of trials
## each (-benchtime 1x); package micro-benchmarks run for 300ms each.
bench:
	@{ $(GO) test -run '^$$' -bench . -benchtime 1x . ; \
	   $(GO) test -run '^$$' -bench . -benchtime 300ms -benchmem $(filter-out github.com/ralph-dev/ralph,$(BENCH_PKGS)) ; } | $(GO) run ./cmd/benchtable

## lint: formatting and vet
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## demo: build ralph and run one task end to end against the bundled scripted model
demo: build
	@CGO_ENABLED=$(CGO) $(GO) build -o bin/fakemodel ./cmd/fakemodel
	@./testdata/demo.sh

clean:
	rm -rf bin
