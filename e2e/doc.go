// Package e2e holds ralph's end-to-end tests and benchmarks; beside this
// comment its files are all tests. TestMain (helpers_test.go) builds the
// ralph binary once from the module's root, with the race detector when
// the tests run with it, and every test drives that binary, as a person or
// a script would, against servers the tests start on 127.0.0.1: the
// stand-in model (coordinator/llm/fakemodel), MCP servers, a Temporal dev
// server. Their fixtures are in the module's testdata/.
//
// Files are named by face: oneshot_*, chat_*, run_*, agents_*, control_*,
// records_*, git_*, mcp_*, sandbox_*; bench_* are the benchmarks
// `make bench` prints as a table.
//
//	go test -race ./e2e/
//	go test -run '^$' -bench . -benchtime 1x ./e2e/
package e2e
