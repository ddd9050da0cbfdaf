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

.PHONY: build build-ralph test test-temporal temporal-server bench bench-peers lint cross dist demo clean

## build: compile ralph into bin/ralph, and ralph-temporal (the task loop
## on Temporal, a module of its own so ralph links no Temporal SDK) beside it
build: build-ralph
	cd ralph-temporal && CGO_ENABLED=$(CGO) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o ../$(dir $(BIN))ralph-temporal .

## build-ralph: compile ralph alone (no Temporal SDK to download)
build-ralph:
	CGO_ENABLED=$(CGO) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

# The Temporal dev server the end-to-end test starts. v1.9.1 cannot be built
# from the module proxy (its cliext replace names a module it lacks).
TEMPORAL_CLI ?= github.com/temporalio/cli/cmd/temporal@v1.5.1

## temporal-server: build the Temporal dev server (`temporal`) into GOPATH/bin
## (about 7 minutes the first time)
temporal-server:
	@command -v temporal >/dev/null 2>&1 || [ -x "$$($(GO) env GOPATH)/bin/temporal" ] || $(GO) install $(TEMPORAL_CLI)

## test-temporal: ralph-temporal's tests (the workflow in the SDK's test
## suite) and the end-to-end run on a dev server with two workers
test-temporal: temporal-server
	cd ralph-temporal && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 20m ./...
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" $(GO) test -race -count=1 -timeout 20m -run 'TestTemporal|TestNoTemporalSDK' ./e2e

## test: the whole test suite with the race detector. The end-to-end
## package takes 25 to 40 minutes on 2 cores (the real bd, npm CLIs,
## MCP servers and Chromium among them); the timeout is a net for a hang.
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 60m ./...
	cd ralph-temporal && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 10m ./...

BENCH_PKGS := $(shell $(GO) list ./... | grep -v '/cmd/')

## bench: every benchmark, printed as a table of medians against targets.
## The end-to-end ones in e2e/ run a fixed number of trials each
## (-benchtime 1x); package micro-benchmarks run for 300ms each.
bench:
	@{ $(GO) test -run '^$$' -bench . -benchtime 1x ./e2e ; \
	   $(GO) test -run '^$$' -bench . -benchtime 300ms -benchmem $(filter-out github.com/ralph-dev/ralph/e2e,$(BENCH_PKGS)) ; } | $(GO) run ./cmd/benchtable

## bench-peers: ralph's one-shot against `codex exec` and `claude -p`
## (those installed) on one stand-in model on 127.0.0.1, in N paired
## rounds: median wall time, peak RSS and each peer's ratio to ralph.
## PEERS_FLAGS=-git runs them in a fresh git repository.
N ?= 20
PEERS_FLAGS ?=
bench-peers: build-ralph
	@$(GO) run ./cmd/benchpeers -n $(N) -ralph $(BIN) $(PEERS_FLAGS)

## lint: formatting and vet
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd ralph-temporal && $(GO) vet ./...

# The targets ralph is built, vetted and released for.
TARGETS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

## cross: compile and vet ralph and ralph-temporal for every target in
## TARGETS (what CI runs: a build break on any platform is red). The
## end-to-end tests cannot run on Windows (no pseudo-terminals or
## signals), but they type-check there: their Unix primitives sit in
## e2e/proc_unix_test.go.
cross:
	@set -e; for t in $(TARGETS); do \
	  echo "go vet $$t"; \
	  GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) vet ./... ; \
	  (cd ralph-temporal && GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) vet ./...) ; \
	done

## dist: a release archive per target in $(DIST) (ralph, README, LICENSE,
## completions for bash, zsh, fish and PowerShell; .zip for Windows,
## .tar.gz elsewhere) and their SHA-256 sums in $(DIST)/SHA256SUMS.
## DIST is a variable so that the test of the archives can write them
## away from the checkout's own dist/.
DIST ?= dist
dist: build-ralph
	@rm -rf $(DIST) && mkdir -p $(DIST)/completions
	@[ -f LICENSE ] || { echo "make dist: LICENSE is missing, and every archive must carry it" >&2; exit 1; }
	$(BIN) completion bash > $(DIST)/completions/ralph.bash
	$(BIN) completion zsh > $(DIST)/completions/_ralph
	$(BIN) completion fish > $(DIST)/completions/ralph.fish
	$(BIN) completion powershell > $(DIST)/completions/ralph.ps1
	@set -e; for t in $(TARGETS); do \
	  os=$${t%/*}; arch=$${t#*/}; name=ralph-$(VERSION)-$$os-$$arch; dir=$(DIST)/$$name; exe=ralph; \
	  if [ $$os = windows ]; then exe=ralph.exe; fi; \
	  mkdir -p $$dir; \
	  GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $$dir/$$exe . ; \
	  LC_ALL=C grep -qaF -- 'ralph-dev/ralph' $$dir/$$exe && LC_ALL=C grep -qaF -- '$(VERSION)' $$dir/$$exe || { echo "$$dir/$$exe: version $(VERSION) is not in it" >&2; exit 1; }; \
	  cp README.md LICENSE $$dir/; cp -R $(DIST)/completions $$dir/; \
	  if [ $$os = windows ]; then (cd $(DIST) && zip -qr $$name.zip $$name); else tar -C $(DIST) -czf $(DIST)/$$name.tar.gz $$name; fi; \
	  rm -rf $$dir; echo "$(DIST)/$$name"; \
	done
	@rm -rf $(DIST)/completions
	@cd $(DIST) && { command -v sha256sum >/dev/null && sha256sum *.tar.gz *.zip || shasum -a 256 *.tar.gz *.zip ; } > SHA256SUMS
	@cat $(DIST)/SHA256SUMS

## demo: build ralph and run one task end to end against the bundled scripted model
demo: build-ralph
	@CGO_ENABLED=$(CGO) $(GO) build -o bin/fakemodel ./cmd/fakemodel
	@./testdata/demo.sh

clean:
	rm -rf bin dist
