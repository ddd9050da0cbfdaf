// Package e2e holds ralph's end-to-end tests and benchmarks; beside this
// comment its files are all tests. TestMain (helpers_test.go) builds the
// ralph binary once from the module's root, with the race detector when
// the tests run with it, and every test drives that binary, as a person or
// a script would, against servers the tests start on 127.0.0.1: the
// stand-in model (coordinator/llm/llmtest), MCP servers, a Temporal dev
// server. Their fixtures are in the module's testdata/.
//
// The real programs the tests drive (the agents' CLIs, MCP servers from
// npm, bd, the Temporal dev server, Chromium, tmux, …) are made ready by
// setup.sh (`make test-setup`), whose cache's bin/ TestMain puts first on
// PATH; a missing one fails its test. Every test runs in parallel
// (t.Parallel) but for the few in serialTests (parallel_test.go).
//
// What a room of the code does on its own is unit-tested in its package
// (coordinator/undo, coordinator/taskgit, coordinator/project, …); these
// tests say the binary wires it up, as a person meets it.
//
// Files are named by face: oneshot_*, chat_*, run_*, agents_*, control_*,
// records_*, git_*, mcp_*, sandbox_*; bench_* are the benchmarks
// `make bench` prints as a table. The slow groups (browser_*, temporal_*,
// attack_*, agents_real_*) are selected by file: `make e2e GROUP=browser`,
// `make e2e SKIP_GROUP='browser temporal'`. A file is never named by the
// issue it came from (attack59_, ecosystem2_): TestFilesAreNamedByFace
// fails on such a name.
//
//	make test-setup && go test -race -parallel 6 ./e2e/
//	go test -run '^$' -bench . -benchtime 1x ./e2e/
package e2e
