package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The language-server tests (issue 91) drive the real gopls, pyright and
// typescript-language-server that e2e/setup.sh installs into its cache's
// bin/ (TestMain puts it first on PATH). A server that is missing fails
// the test in one sentence naming the command that installs it: the
// tests are about those very programs, so a quiet skip would hide a
// machine that tests nothing.
//
// Each test edits a file through the stand-in model's edit_file calls and
// reads the tool result the model received in its next request, where
// the diagnostics block follows the edit's own output:
//
//	diagnostics from gopls for main.go (errors first; 1 of 1):
//	main.go:6:14: error: undefined: foo
//
// and "diagnostics from gopls for main.go: none" once the fix clears it.

// lspContentWait is the diagnostics wait of the tests about what a real
// server says: a cold gopls or tsserver on a busy 2-core machine takes
// seconds to load the project, and those tests are about the content,
// not the bound (TestLSPHangingServerIsBounded tests the bound).
const lspContentWait = "90s"

// needServer returns the path of a language server the test drives, and
// fails the test when setup.sh has not installed it.
func needServer(t *testing.T, name string) string {
	t.Helper()
	return needTool(t, name, "a language server e2e/setup.sh installs")
}

// lspProject makes a git repository for a language-server test, with a
// home and a temporary directory of the test's own beside it, writes
// files (relative paths to contents) and commits them, and returns the
// project and ralph's environment against the stand-in model at url.
// The person's ralph config gets config (TOML) after the diagnostics
// wait line. Go's caches are in the test's temporary directory, which the
// sandbox lets commands write, and the module proxy is off: gopls runs
// `go list` on a module without dependencies, which needs neither the
// network nor the person's own caches.
func lspProject(t testing.TB, url string, files map[string]string, config string) (proj string, env []string) {
	t.Helper()
	base := realPath(t, t.TempDir())
	proj, home, tmp := filepath.Join(base, "proj"), filepath.Join(base, "home"), filepath.Join(base, "tmp")
	for _, d := range []string{proj, home, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range files {
		mustWrite(t, filepath.Join(proj, name), content)
	}
	shIn(t, proj, "git init -q -b main && git add -A && git commit -qm 'the project'")
	env = cleanEnv(t, append([]string{"HOME=" + home, "TMPDIR=" + tmp, "OPENAI_API_KEY=sk-e2e-lsp", "OPENAI_BASE_URL=" + url,
		"GOCACHE=" + filepath.Join(tmp, "gocache"), "GOMODCACHE=" + filepath.Join(tmp, "gomodcache"),
		"GOPATH=" + filepath.Join(tmp, "gopath"), "GOPROXY=off", "GOTOOLCHAIN=local", "GOTELEMETRY=off"}, gitEnv...)...)
	mustWrite(t, filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml"), config)
	return proj, env
}

// lspOffConfig is the config that turns every language server off.
const lspOffConfig = "lsp_enabled = false\n"

// lspWaitConfig is the config lines that set the diagnostics waits: the
// first of each server (lsp_first_wait, which includes its start) and
// every later one (lsp_wait).
func lspWaitConfig(first, wait string) string {
	return fmt.Sprintf("lsp_first_wait = %q\nlsp_wait = %q\n", first, wait)
}

// editTurns is the stand-in model's scenario: one edit_file call of path
// per edit (old, new pairs), then a final answer.
func editTurns(t *testing.T, name, path string, edits ...[2]string) *llmtest.Server {
	t.Helper()
	var turns [][]toolCall
	for _, e := range edits {
		turns = append(turns, []toolCall{{"edit_file", editArgs(path, e[0], e[1])}})
	}
	return inlineServer(t, toolScenario(t, name, turns, "Done."))
}

// editArgs is edit_file's JSON arguments.
func editArgs(path, old, new string) string {
	return fmt.Sprintf(`{"path":%s,"old_string":%s,"new_string":%s}`, quoteJSON(path), quoteJSON(old), quoteJSON(new))
}

// runEdits runs the one-shot, fails the test unless it succeeded, and
// returns the tool result of each of the model's turns (the last message
// of each request after the first).
func runEdits(t *testing.T, srv *llmtest.Server, proj string, env []string) []string {
	t.Helper()
	r := ralph(t, proj, env, nil, "-y", "edit the project")
	if r.code != 0 {
		t.Fatalf("ralph exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var results []string
	for i, req := range srv.Requests() {
		if i == 0 {
			continue
		}
		msgs := req.Request.Messages
		if len(msgs) == 0 {
			t.Fatalf("model request %d has no messages", i)
		}
		results = append(results, msgs[len(msgs)-1].Content)
	}
	return results
}

// wantResult fails the test unless the tool result holds a line starting
// with each of want: a server's message may go on past what the test
// pins (pyright adds a line of why).
func wantResult(t *testing.T, what, result string, want ...string) {
	t.Helper()
	lines := strings.Split(result, "\n")
	for _, w := range want {
		found := false
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), w) {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("%s: the tool result has no line starting %q:\n%s", what, w, result)
		}
	}
}

// realPath is path with its links resolved, or the test fails.
func realPath(t testing.TB, path string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// writeScript writes an executable script and returns its path.
func writeScript(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
