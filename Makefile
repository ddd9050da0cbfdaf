# ralph's build, test and benchmark entry points. The tests run against
# servers they start themselves on 127.0.0.1; `make test` first installs
# (or builds once and caches) the real programs they drive (e2e/setup.sh),
# fetching packages from npm, the Go module proxy and, as root, apt.

GO       ?= go
BIN      ?= bin/ralph
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X github.com/ralph-dev/ralph/scripts/startup.Version=$(VERSION)
# ralph needs no C: without cgo it starts about 2.5 ms sooner and is about
# 1.5 MB smaller (net and os/user use their pure Go versions). The race
# detector needs cgo, so `make test` keeps it.
CGO      ?= 0

.PHONY: build build-ralph profile test test-setup check fault-sweep kill-sweep e2e test-temporal temporal-server bench bench-peers lint cross dist demo clean

## build: compile ralph into bin/ralph, and ralph-temporal (the task loop
## on Temporal, a module of its own so ralph links no Temporal SDK) beside it
build: build-ralph
	cd ralph-temporal && CGO_ENABLED=$(CGO) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o ../$(dir $(BIN))ralph-temporal .

## build-ralph: compile ralph alone (no Temporal SDK to download)
build-ralph:
	CGO_ENABLED=$(CGO) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

## profile: compile ralph into bin/ralph with its CPU profile built in:
## RALPH_CPUPROFILE=FILE then writes one of any run (profile.go)
profile:
	CGO_ENABLED=$(CGO) $(GO) build -tags ralphprofile -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

## test-setup: install, or build once and cache, every real program the
## end-to-end tests drive (e2e/setup.sh: the agents' CLIs and MCP servers
## from npm, bd, the Temporal dev server; the system's own programs with
## apt-get as root, or it names the command to run). Seconds once done.
test-setup:
	@e2e/setup.sh

## temporal-server: the Temporal dev server (test-setup builds it with the rest)
temporal-server: test-setup

# How many end-to-end tests run at once. They mostly wait on the processes
# they start, so more than the cores: 8 measured best on 2 cores
# (docs/development.md).
E2E_PARALLEL ?= 8

# The end-to-end tests are one package (e2e/); a group is the tests of the
# files e2e/GROUP*_test.go (browser, temporal, attack, agents_real, mcp,
# chat, …). GROUP= runs one group, SKIP_GROUP= (a list) leaves groups out,
# RUN= is a -run pattern of its own.
e2e_group = $(shell sed -n 's/^func \(Test[A-Za-z0-9_]*\)(t \*testing.T).*/\1/p' $(foreach g,$(1),e2e/$(g)*_test.go) | paste -sd'|' -)
E2E_RUN  = $(if $(GROUP),-run '^($(call e2e_group,$(GROUP)))$$',$(if $(RUN),-run '$(RUN)'))
E2E_SKIP = $(if $(SKIP_GROUP),-skip '^($(call e2e_group,$(SKIP_GROUP)))$$')

## test: the whole suite with the race detector, every real program
## present: vet, the packages' tests and the end-to-end tests (in parallel)
## in one go test, then ralph-temporal's. About 9 minutes on 2 cores.
test: test-setup
	$(GO) vet ./...
	$(GO) test -race -count=1 -parallel $(E2E_PARALLEL) -timeout 80m ./...
	cd ralph-temporal && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 10m ./...
# ralph's patches to readline (third_party/readline/PATCHED.md) have
# tests of their own; it is a module of its own, so ./... skips it.
	cd third_party/readline && $(GO) test -race -count=1 ./...

## fault-sweep: issue 67's whole strace sweep: EIO, ENOSPC and SIGKILL at
## every N of write, fsync, renameat and openat of a five-task ralph run
## (make test tries N = 1, 4, 16, 64), each followed by a normal run: no
## task done twice, no entry lost, every state file parses; and the same
## of a run whose checkpoints ralph writes itself (the quick way), at every
## write, link, rename and open that reached its object store or refs in
## a clean run: git fsck finds no object corrupt or missing
fault-sweep: test-setup
	RALPH_SWEEP=all $(GO) test -count=1 -timeout 180m -run '^TestFaultSweepOfA(Quick)?Run$$' ./e2e

## kill-sweep: issues 67 and 89's SIGKILL sweeps of a five-task ralph run,
## each kill followed by a normal run: 1,000 at random moments between 5 and
## 500 ms, 100 each of a --commit run and a --parallel 3 --worktrees run at
## random moments (KILLS=N: N of each; make test kills 20, 10 and 10), and
## one right after each git call of both git runs (make test tries about 6
## of each): no task done twice, no entry lost, git as the person left it
kill-sweep: test-setup
	RALPH_KILLS=$(or $(KILLS),1000) RALPH_GIT_KILLS=$(or $(KILLS),100) RALPH_GIT_STEPS=all $(GO) test -count=1 -timeout 180m \
		-run '^(TestKilledRunsDoNothingTwice|TestKilledAfterEachGitStep)$$' -v ./e2e

## check: the inner loop: vet and the packages' own tests, without the
## end-to-end tests and the race detector (RACE=1 adds it), and -short
## (the few tests that wait out a timeout or write tens of megabytes
## skip, and the property tests try a quarter of their random cases;
## make test runs them all); go test's cache answers for the packages a
## change did not touch. Every test run (GOFLAGS=-count=1): 97 s on an
## idle 2-core machine with the build cache warm
check:
	$(GO) vet ./...
	$(GO) test -short $(if $(RACE),-race) $$($(GO) list ./... | grep -v '/e2e')

## e2e: the end-to-end tests alone, with GROUP=, SKIP_GROUP= or RUN=
## (make e2e GROUP=browser; make e2e SKIP_GROUP='browser temporal attack agents_real')
e2e: test-setup
	$(GO) test -race -count=1 -parallel $(E2E_PARALLEL) -timeout 80m $(E2E_RUN) $(E2E_SKIP) ./e2e

## test-temporal: ralph-temporal's tests (the workflow in the SDK's test
## suite) and the end-to-end runs on a dev server
test-temporal: test-setup
	cd ralph-temporal && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -race -count=1 -parallel $(E2E_PARALLEL) -timeout 20m -run 'TestTemporal|TestNoTemporalSDK' ./e2e

# Recursive (=), so that only `make bench` lists the packages: every
# other target, test-setup on a fresh machine first, would otherwise
# download every module before it starts.
BENCH_PKGS = $(shell $(GO) list ./... | grep -v '/cmd/')

## bench: every benchmark, printed as a table of medians against targets,
## with a FAIL row and its reason for each that failed or skipped (then
## it exits non-zero). The end-to-end ones in e2e/ run a fixed number of
## trials each (-benchtime 1x), among them `ralph run` through 100 and
## 10,000 tasks (RALPH_BENCH_TASKS=1000 for a shorter run); package
## micro-benchmarks run for 300ms each. -v is what makes go test print a
## skipped benchmark at all. The whole took 897 s on a busy 2-core
## machine (issue 94), next to go test's default limit of 10 minutes a
## package, which would cut the e2e benchmarks off mid-table: each go test
## here may run for an hour.
bench:
	@{ $(GO) test -v -timeout 60m -run '^$$' -bench . -benchtime 1x ./e2e ; \
	   $(GO) test -v -timeout 60m -run '^$$' -bench . -benchtime 300ms -benchmem $(filter-out github.com/ralph-dev/ralph/e2e,$(BENCH_PKGS)) ; } | $(GO) run ./cmd/benchtable

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
	$(GO) vet -tags ralphprofile .
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
