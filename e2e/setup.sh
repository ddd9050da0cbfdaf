#!/usr/bin/env bash
# e2e/setup.sh (`make test-setup`, which `make test` runs first) makes
# ready every real program the end-to-end tests drive, at the versions
# named below, so that the README's test command passes on a fresh
# machine by itself:
#
#   - the agents' CLIs and the MCP servers from npm, installed with
#     `npm install --prefix` into the cache (never -g);
#   - the language servers: pyright and typescript-language-server (with
#     the typescript it loads) from npm like the CLIs, gopls built once per
#     version from the Go module proxy;
#   - Beads' bd, the Temporal dev server and git-lfs, built once per
#     version from the Go module proxy into the cache;
#   - the system's programs (Chromium, bubblewrap, socat, jq, tmux,
#     python3, gcc, git, git-crypt, Node.js, zip), which only the system's package
#     manager installs: as root on a machine that lacks them it runs
#     apt-get; otherwise it stops at once and names the one command to run;
#   - the public material the tests read (copies of other people's
#     repositories, beside the project): it only looks, and where a folder
#     is missing it stops at once and says in one sentence how to make it.
#
# The cache is $RALPH_TEST_CACHE, by default ralph-test in the user's
# cache directory. Every program lands in its bin/ (links to the versioned
# copies), which the end-to-end tests put first on their PATH (TestMain),
# so the tests run what this script pinned, whatever else is installed.
# A second run finds everything in place and takes about a second.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${RALPH_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ralph-test}"

# The pinned versions. Raising one installs the new version beside the
# old on the next run.
BD_VERSION=1.3.0
TEMPORAL_CLI=github.com/temporalio/cli/cmd/temporal
TEMPORAL_VERSION=1.5.1 # v1.9.1 cannot be built from the module proxy (its cliext replace names a module it lacks)
GOPLS_VERSION=0.23.0 # gopls (TestLSPGo*); v0.24.0 needs a newer Go than the machines have
GIT_LFS_VERSION=3.6.1 # git-lfs (TestUndoPutsBackFilesGitsFiltersConvert)
NPM_PACKAGES=(
	@anthropic-ai/claude-code@2.1.197 # claude (TestRunRealClaude*)
	@openai/codex@0.169.0             # codex (TestRunRealCodex*)
	opencode-ai@1.18.33               # opencode (TestRunRealOpenCode*)
	@google/gemini-cli@0.61.0         # gemini (TestRunRealGemini*)
	@modelcontextprotocol/server-filesystem@2026.8.31 # mcp-server-filesystem (TestMCPTrust*, TestMCPResults*)
	@modelcontextprotocol/server-everything@2026.8.31 # mcp-server-everything (TestMCPRealServer*)
	@modelcontextprotocol/inspector@2.12.0            # mcp-inspector (TestMCPServe*)
	pyright@1.1.414                   # pyright-langserver (TestLSPPython*)
	typescript-language-server@5.3.0  # (TestLSPTypeScript*); 6.x needs Node.js 22
	typescript@5.9.3                  # tsc, the tsserver it loads, copied into the tests' projects; 7.x has no tsserver
)
# The programs of those packages the tests run, linked into bin/.
NPM_BINS=(claude codex opencode gemini mcp-server-filesystem mcp-server-everything mcp-inspector
	pyright-langserver typescript-language-server tsc)
# Reference copies of what the models' makers ship, read to check the
# tools ralph offers each model family against theirs: codex 0.77.0 is the
# last codex whose own table of models still names gpt-5-codex, gpt-5 and
# o3 (later ones give those names generic metadata), linked as codex-0.77
# beside the pinned codex (TestCodexToolsAreRecorded); the Claude Agent
# SDK's sdk-tools.d.ts is Claude Code's published tool input types
# (TestClaudeFamilyMatchesTheSDKTypes), of which only that file is kept.
CODEX_REFERENCE=0.77.0
AGENT_SDK_REFERENCE=0.3.332
# The libraries the tests load with node rather than run: the ACP client
# library an editor embeds (e2e/acp_*_test.go drive ralph acp through it)
# and its peer dependencies, which npm does not install by itself. No
# program is linked for them; lib/node_modules in the cache points at
# the prefix's node_modules, where the tests' scripts resolve them. The
# Claude Agent SDK is the consumer of Claude Code's stream-json shape
# (e2e/claude_sdk_test.go runs ralph as its executable); its peer
# dependencies are pinned here beside it (zod is the one above).
NPM_LIBRARIES=(@agentclientprotocol/sdk@2.4.0 @modelcontextprotocol/server@2.4.0 zod@4.6.7
	@anthropic-ai/claude-agent-sdk@0.3.332 @anthropic-ai/sdk@1.14.0 @modelcontextprotocol/sdk@1.32.2)
NPM_PACKAGES+=("${NPM_LIBRARIES[@]}")

say() { echo "e2e/setup.sh: $*" >&2; }

# --- The public material the tests read ---------------------------------
# Copies of other people's repositories, each folder with its ORIGIN.md
# (which files, and why) and LICENSE: the project holds only what its own
# authors wrote, so they lie beside it, in $RALPH_FIXTURES (a relative
# path is read from the module's root), by default ../shared/fixtures.
# The tests find them through memory/fixtures and fail, never skip, with
# the sentence below where one is missing. Each row: the folder under the
# fixtures, the GitHub repository and the commit it was copied from, and
# the repository's folder it copies where that is not the whole.
FIXTURES=(
	"codex-apply-patch/scenarios openai/codex 71163530a46dc568775f9ee95a9b57de3385cd9a codex-rs/apply-patch/tests/fixtures/scenarios"
	"claude-code-hooks karanb192/claude-code-hooks 811aeb7"
	"public-plugins/Custos-angry-ralph Custos/angry-ralph 275c782b3af2699694a4ff45cde15a709498cde6"
	"public-plugins/VoltAgent-awesome-claude-code-subagents VoltAgent/awesome-claude-code-subagents c9e51ec0b3d43f5dcdd0b558a6cd28ba6ada97c1"
	"public-plugins/duyet-claude-plugins duyet/claude-plugins 501e5ac57d6ba9e5865937e22b064f364d193399"
	"public-plugins/edu-samples-claude-code-hooks-observatory edu-samples/claude-code-hooks-observatory e72ab60d08f0dc69050ed8550488ee7538e18ec8"
	"public-plugins/obra-superpowers obra/superpowers 44c9b2d6e889982ac18c27d05a19fefe335194e1"
	"public-plugins/wshobson-agents wshobson/agents 367cb6a4a182cf7e9b0a17c9429f7411ddd9cf35"
)
# Until issue 93 the project kept these copies in testdata/ (plugins69
# for public-plugins); a clone whose checkout has no ../shared/fixtures
# beside it, but whose history reaches FIXTURES_COMMIT, takes them from
# that commit into $cache/fixtures once (built aside, then renamed into
# place), and memory/fixtures reads them there. It says so, since the
# copies beside the checkout are the ones meant.
FIXTURES_COMMIT=604681fc4e9fc7e9ca2f0a7485f7820915d50607
absent_from() {
	absent=()
	local row top
	for row in "${FIXTURES[@]}"; do
		top=${row%% *}
		top=${top%%/*}
		[ -d "$1/$top" ] || [[ " ${absent[*]} " == *" $top "* ]] || absent+=("$top")
	done
}
fixtures="${RALPH_FIXTURES:-../shared/fixtures}"
absent_from "$fixtures"
if [ ${#absent[@]} -gt 0 ] && [ -z "${RALPH_FIXTURES:-}" ]; then
	absent_from "$cache/fixtures"
	if [ ${#absent[@]} -gt 0 ] && git cat-file -e "$FIXTURES_COMMIT^{commit}" 2>/dev/null; then
		tmp="$cache/fixtures.tmp.$$"
		rm -rf "$tmp" "$cache/fixtures" && mkdir -p "$tmp"
		git archive "$FIXTURES_COMMIT" testdata/codex-apply-patch testdata/claude-code-hooks testdata/plugins69 | tar -x -C "$tmp"
		mv "$tmp/testdata/codex-apply-patch" "$tmp/codex-apply-patch"
		mv "$tmp/testdata/claude-code-hooks" "$tmp/claude-code-hooks"
		mv "$tmp/testdata/plugins69" "$tmp/public-plugins"
		rmdir "$tmp/testdata"
		mv "$tmp" "$cache/fixtures"
		absent_from "$cache/fixtures"
	fi
	if [ ${#absent[@]} -eq 0 ]; then
		say "../shared/fixtures is not beside the checkout; the tests read the same public material from $cache/fixtures, taken from commit ${FIXTURES_COMMIT:0:8} of this clone's history."
	else
		absent_from "$fixtures"
	fi
fi
if [ ${#absent[@]} -gt 0 ]; then
	say "ralph's tests read public material (copies of other people's repositories) from \$RALPH_FIXTURES, by default ../shared/fixtures beside the checkout, and $fixtures has no ${absent[*]}: clone each repository that e2e/setup.sh's FIXTURES list names, at the commit it names, into the folder it names."
	exit 1
fi

# --- The system's programs ---------------------------------------------
# Each row: a program the tests run, and the Debian package holding it.
system=(
	"chromium chromium"   # the browser tests (e2e/browser)
	"bwrap bubblewrap"    # claude's own sandbox (TestRunRealClaudeBash)
	"socat socat"         # the same
	"jq jq"               # the demo's and the scripts' JSON
	"tmux tmux"           # the chat's resize tests
	"python3 python3"     # the sandbox's socket tests
	"gcc gcc"             # the race detector needs cgo
	"git git"             # checkpoints, the sandbox's git tests
	"node nodejs"         # the agents' CLIs and the MCP servers
	"npm npm"             # installs them
	"zip zip"             # make dist's Windows archive (TestDistArchivesCarryTheLicence)
	"git-crypt git-crypt" # undo of files git's filters convert (TestUndoPutsBackFilesGitsFiltersConvert)
	"make make"
)
missing=()
for row in "${system[@]}"; do
	read -r prog pkg <<<"$row"
	if [ "$prog" = chromium ] && { command -v chromium-browser || command -v google-chrome; } >/dev/null 2>&1; then
		continue
	fi
	command -v "$prog" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		say "installing ${missing[*]} with apt-get"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
	elif command -v apt-get >/dev/null 2>&1; then
		say "the tests need programs this machine lacks; install them with:"
		echo "  sudo apt-get install -y ${missing[*]}" >&2
		exit 1
	else
		say "the tests need programs this machine lacks; install these (Debian's package names) with its package manager: ${missing[*]}"
		exit 1
	fi
fi

# --- Node.js: new enough for the pinned CLIs ----------------------------
# The newest `engines` among NPM_PACKAGES is gemini-cli's node >=20 (the
# inspector declares >=22.19.0, but the --cli mode the tests drive runs
# on 20). npm only warns about engines, and an older Node then fails
# deep inside a test with a syntax error, so the script says it here.
NODE_MIN=20
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt "$NODE_MIN" ]; then
	say "Node.js $(node --version 2>/dev/null || echo '(none)') is older than the $NODE_MIN the agents' CLIs need; install Node.js $NODE_MIN or later (a release from the Node.js project, or your distribution's newer nodejs package) and run make test-setup again."
	exit 1
fi

mkdir -p "$cache/bin" "$cache/log"

# --- The slow steps, side by side ----------------------------------------
# On a fresh machine the set-up is npm's downloads and three Go builds (bd
# alone is most of it). One after the other they took 29 minutes at load
# 11 to 19; npm waits on the network and the builds on the CPU, so each
# runs as a background job and the script waits for all of them. Every
# job runs in a process group of its own (set -m), so that a failed or
# interrupted set-up stops the others rather than leaving them running;
# a job's output goes to its file in log/, shown when it fails.
set -m
job_pids=() job_names=() job_logs=()
stop_jobs() {
	local p
	# (The +-form: bash before 4.4 takes an empty array for unset under -u.)
	for p in ${job_pids[@]+"${job_pids[@]}"}; do kill -- "-$p" 2>/dev/null || true; done
}
trap stop_jobs EXIT
trap 'exit 130' INT TERM

# start NAME WHAT FUNCTION [ARGS...]: run FUNCTION as a background job;
# WHAT says what it does, for the one sentence a failure prints.
start() {
	local name=$1 what=$2
	shift 2
	"$@" >"$cache/log/$name.log" 2>&1 &
	job_pids+=("$!") job_names+=("$what") job_logs+=("$cache/log/$name.log")
}

# wait_jobs: wait for every job; if one failed, show the end of its
# output and say in one sentence which step failed and where its whole
# output is, then fail.
wait_jobs() {
	local i failed=()
	for i in "${!job_pids[@]}"; do
		wait "${job_pids[$i]}" || failed+=("$i")
	done
	job_pids=()
	[ ${#failed[@]} -eq 0 ] && return 0
	for i in "${failed[@]}"; do
		tail -n 20 "${job_logs[$i]}" >&2
		say "${job_names[$i]} failed; its output is in ${job_logs[$i]}."
	done
	exit 1
}

# --- npm: the agents' CLIs and the MCP servers ---------------------------
# One prefix per list of versions: a new list installs beside the old
# and the links move to it once it is complete.
npm_key=$(printf '%s\n' "${NPM_PACKAGES[@]}" | { sha256sum 2>/dev/null || shasum -a 256; } | cut -c1-12)
npm_dir="$cache/npm-$npm_key"
install_npm() {
	if [ ! -f "$npm_dir/.complete" ]; then
		rm -rf "$npm_dir" && mkdir -p "$npm_dir"
		echo '{"private":true}' >"$npm_dir/package.json"
		npm install --prefix "$npm_dir" --no-audit --no-fund --no-update-notifier --loglevel=error --save-exact "${NPM_PACKAGES[@]}"
		touch "$npm_dir/.complete"
	fi
}

# --- Reference copies (see CODEX_REFERENCE above) ------------------------
ref_dir="$cache/codex-$CODEX_REFERENCE"
sdk_dir="$cache/claude-agent-sdk-$AGENT_SDK_REFERENCE"
install_references() {
	if [ ! -f "$ref_dir/.complete" ]; then
		rm -rf "$ref_dir" && mkdir -p "$ref_dir"
		echo '{"private":true}' >"$ref_dir/package.json"
		npm install --prefix "$ref_dir" --no-audit --no-fund --no-update-notifier --loglevel=error --save-exact "@openai/codex@$CODEX_REFERENCE"
		touch "$ref_dir/.complete"
	fi
	if [ ! -f "$sdk_dir/sdk-tools.d.ts" ]; then
		rm -rf "$sdk_dir.tmp" && mkdir -p "$sdk_dir.tmp"
		(cd "$sdk_dir.tmp" && npm pack --silent --no-update-notifier "@anthropic-ai/claude-agent-sdk@$AGENT_SDK_REFERENCE" >/dev/null &&
			tar -xzf ./*.tgz package/sdk-tools.d.ts && mv package/sdk-tools.d.ts . && rm -rf package ./*.tgz)
		rm -rf "$sdk_dir" && mv "$sdk_dir.tmp" "$sdk_dir"
	fi
}

# --- Go: bd, the Temporal dev server and gopls ---------------------------
# Each is built once per version into its own directory of the cache: the
# build writes into DIR.tmp, and the program is renamed into DIR only
# once it is whole, so an interrupted build is never taken for a done one.
# What a fresh build need not do, it does not: no paths of the build
# machine (-trimpath), no debug information, neither the linker's (-s -w)
# nor the compiler's (-dwarf=false) nor the C compiler's (CGO_CFLAGS
# without -g), and no cgo where the program has no C of its own.
go_flags=(-trimpath "-ldflags=-s -w" "-gcflags=all=-dwarf=false")

# go_build NAME VERSION BUILD: unless the cache holds NAME at VERSION,
# run BUILD TMPDIR, which writes TMPDIR/NAME, and rename it into place.
go_build() {
	local name=$1 dir="$cache/$1-$2" build=$3
	[ -x "$dir/$name" ] && return 0
	rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
	"$build" "$dir.tmp"
	mkdir -p "$dir" && mv "$dir.tmp/$name" "$dir/$name"
	rm -rf "$dir.tmp"
}

# Beads' bd (e2e/beads_test.go). No registry ships a binary; the module
# proxy serves the source, which builds an embedded-database bd. bd keeps
# cgo: its embedded Dolt, which the tests use, is built only with cgo
# (//go:build cgo; without it bd can only reach a Dolt server). The C it
# compiles (zstd, SQLite) stays at -O2, only without -g.
build_bd() {
	local json src
	json=$(go mod download -json "github.com/steveyegge/beads@v$BD_VERSION") || { echo "$json"; return 1; }
	src=$(echo "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	(cd "$src" && CGO_ENABLED=1 CGO_CFLAGS=-O2 go build "${go_flags[@]}" -buildvcs=false \
		-tags=gms_pure_go -o "$1/bd" ./cmd/bd)
}

# The Temporal dev server (e2e/temporal_test.go, temporal_serve_test.go).
# Pure Go (its SQLite is modernc's), as its own releases are built.
build_temporal() {
	(cd / && CGO_ENABLED=0 GOBIN="$1" go install "${go_flags[@]}" "$TEMPORAL_CLI@v$TEMPORAL_VERSION")
}

# gopls, the Go language server (e2e/lsp_*_test.go, BenchmarkEditGoLSP).
build_gopls() {
	(cd / && CGO_ENABLED=0 GOBIN="$1" go install "${go_flags[@]}" "golang.org/x/tools/gopls@v$GOPLS_VERSION")
}

# git-lfs (TestUndoPutsBackFilesGitsFiltersConvert), from the module proxy
# rather than Debian's package: that package's install writes its filter
# into /etc/gitconfig, which every git of the machine then reads, and the
# tests of a git without filters (attack_firstlook_test.go) would find one.
build_gitlfs() {
	(cd / && CGO_ENABLED=0 GOBIN="$1" go install "${go_flags[@]}" "github.com/git-lfs/git-lfs/v3@v$GIT_LFS_VERSION")
}

todo=()
[ -f "$npm_dir/.complete" ] || todo+=("npm's ${#NPM_PACKAGES[@]} packages")
{ [ -f "$ref_dir/.complete" ] && [ -f "$sdk_dir/sdk-tools.d.ts" ]; } || todo+=("the reference copies")
[ -x "$cache/bd-$BD_VERSION/bd" ] || todo+=("bd $BD_VERSION")
[ -x "$cache/temporal-$TEMPORAL_VERSION/temporal" ] || todo+=("temporal $TEMPORAL_VERSION")
[ -x "$cache/gopls-$GOPLS_VERSION/gopls" ] || todo+=("gopls $GOPLS_VERSION")
[ -x "$cache/git-lfs-$GIT_LFS_VERSION/git-lfs" ] || todo+=("git-lfs $GIT_LFS_VERSION")
if [ ${#todo[@]} -gt 0 ]; then
	say "making ${todo[*]} into $cache side by side (on a fresh machine about a quarter of an hour; once per version; output in $cache/log)"
fi
start npm "installing npm's packages into $npm_dir" install_npm
start references "installing the reference copies ($ref_dir, $sdk_dir)" install_references
start bd "building bd $BD_VERSION" go_build bd "$BD_VERSION" build_bd
start temporal "building the Temporal dev server $TEMPORAL_VERSION" go_build temporal "$TEMPORAL_VERSION" build_temporal
start gopls "building gopls $GOPLS_VERSION" go_build gopls "$GOPLS_VERSION" build_gopls
start gitlfs "building git-lfs $GIT_LFS_VERSION" go_build git-lfs "$GIT_LFS_VERSION" build_gitlfs
wait_jobs

# --- Links: every program in bin/ ----------------------------------------
for b in "${NPM_BINS[@]}"; do
	[ -e "$npm_dir/node_modules/.bin/$b" ] || { say "npm installed no $b in $npm_dir"; exit 1; }
	ln -sfn "$npm_dir/node_modules/.bin/$b" "$cache/bin/$b"
done
for l in "${NPM_LIBRARIES[@]}"; do
	[ -d "$npm_dir/node_modules/${l%@*}" ] || { say "npm installed no ${l%@*} in $npm_dir"; exit 1; }
done
mkdir -p "$cache/lib" && ln -sfn "$npm_dir/node_modules" "$cache/lib/node_modules"
[ -e "$ref_dir/node_modules/.bin/codex" ] || { say "npm installed no codex in $ref_dir"; exit 1; }
ln -sfn "$ref_dir/node_modules/.bin/codex" "$cache/bin/codex-0.77"
mkdir -p "$cache/ref"
ln -sfn "$sdk_dir/sdk-tools.d.ts" "$cache/ref/sdk-tools.d.ts"
ln -sfn "$cache/bd-$BD_VERSION/bd" "$cache/bin/bd"
ln -sfn "$cache/temporal-$TEMPORAL_VERSION/temporal" "$cache/bin/temporal"
ln -sfn "$cache/gopls-$GOPLS_VERSION/gopls" "$cache/bin/gopls"
ln -sfn "$cache/git-lfs-$GIT_LFS_VERSION/git-lfs" "$cache/bin/git-lfs"
