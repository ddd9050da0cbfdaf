package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// firstResults are the tool results the model was sent in its second
// request: what became of the first turn's calls.
func firstResults(t *testing.T, srv *llmtest.Server) string {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests; the model never saw its tools' results", len(reqs))
	}
	var b strings.Builder
	for _, m := range reqs[1].Request.Messages {
		if m.Role == "tool" {
			b.WriteString(m.Content + "\n")
		}
	}
	return b.String()
}

// Each flag people bring from claude and codex does what
// docs/conventions.md says, against the built binary and real files.
func TestConventionFlags(t *testing.T) {
	t.Parallel()
	other := t.TempDir()
	otherFile := filepath.Join(other, "y.txt")
	type check func(t *testing.T, dir string, srv *llmtest.Server, r runResult)
	cases := []struct {
		name  string
		calls []toolCall // the model's first turn; none: it just answers
		args  []string
		stdin string
		code  int
		check check
	}{
		{name: "print", args: []string{"-p", "say hi"}, check: func(t *testing.T, _ string, _ *llmtest.Server, r runResult) {
			if strings.TrimSpace(r.stdout) != "done" {
				t.Fatalf("stdout %q", r.stdout)
			}
		}},
		{name: "print without a task", args: []string{"-p"}, code: 2, check: stderrHas("no task given")},
		{name: "allowedTools", calls: []toolCall{{"run_command", `{"command":"echo ran-ok"}`}},
			args: []string{"--no-wait", "--allowedTools", "Bash(echo:*)", "go"}, check: resultsHave("ran-ok")},
		{name: "no rule, no run", calls: []toolCall{{"run_command", `{"command":"echo ran-ok"}`}},
			args: []string{"--no-wait", "go"}, check: resultsHave("needs approval")},
		{name: "disallowed-tools", calls: []toolCall{{"run_command", `{"command":"echo ran-ok"}`}},
			args: []string{"-y", "--disallowed-tools", "Bash(echo:*)", "go"}, check: resultsHave(`--disallowed-tools "echo"`)},
		{name: "disallowedTools Write", calls: []toolCall{{"write_file", `{"path":"w.txt","content":"x"}`}},
			args: []string{"--disallowedTools", "Write", "go"}, check: both(resultsHave("--disallowed-tools"), noFile("w.txt"))},
		{name: "permission-mode bypassPermissions", calls: []toolCall{{"run_command", `{"command":"echo ran-ok"}`}},
			args: []string{"--permission-mode", "bypassPermissions", "go"}, check: resultsHave("ran-ok")},
		{name: "permission-mode dontAsk", calls: []toolCall{{"run_command", `{"command":"echo ran-ok"}`}},
			args: []string{"--permission-mode", "dontAsk", "go"}, check: resultsHave("needs approval")},
		{name: "permission-mode plan", calls: []toolCall{{"write_file", `{"path":"w.txt","content":"x"}`}},
			args: []string{"--permission-mode", "plan", "go"}, check: both(resultsHave("read-only"), noFile("w.txt"))},
		{name: "permission-mode unknown", args: []string{"--permission-mode", "yolo", "go"}, code: 2, check: stderrHas("is not one of")},
		{name: "append-system-prompt", args: []string{"--append-system-prompt", "ZEBRA-RULE", "go"},
			check: func(t *testing.T, _ string, srv *llmtest.Server, _ runResult) {
				if sys := srv.Requests()[0].Request.Messages[0].Content; !strings.HasSuffix(sys, "ZEBRA-RULE") {
					t.Fatalf("system prompt does not end with the appended text:\n%s", sys)
				}
			}},
		{name: "add-dir", calls: []toolCall{{"write_file", `{"path":"` + otherFile + `","content":"added\n"}`}},
			args: []string{"--add-dir", other, "go"}, check: func(t *testing.T, _ string, _ *llmtest.Server, _ runResult) {
				if got, err := os.ReadFile(otherFile); err != nil || string(got) != "added\n" {
					t.Fatalf("%s = %q, %v", otherFile, got, err)
				}
				_ = os.Remove(otherFile)
			}},
		{name: "no add-dir, no write outside", calls: []toolCall{{"write_file", `{"path":"` + otherFile + `","content":"added\n"}`}},
			args: []string{"go"}, check: func(t *testing.T, _ string, srv *llmtest.Server, _ runResult) {
				if _, err := os.Stat(otherFile); err == nil {
					t.Fatal("a directory nobody added was written")
				}
				resultsHave("outside")(t, "", srv, runResult{})
			}},
		{name: "add-dir that is not a directory", args: []string{"--add-dir", filepath.Join(other, "missing"), "go"}, code: 2,
			check: stderrHas("--add-dir " + filepath.Join(other, "missing") + " is not a directory")},
		{name: "verbose", calls: []toolCall{{"list_files", `{}`}}, args: []string{"-v", "go"}, check: stderrHas("• list")},
		{name: "read-only refuses write_file and edit_file",
			calls: []toolCall{{"write_file", `{"path":"w.txt","content":"x"}`}, {"edit_file", `{"path":"keep.txt","old_string":"same","new_string":"changed"}`}},
			args:  []string{"-s", "read-only", "-y", "go"}, check: func(t *testing.T, dir string, srv *llmtest.Server, r runResult) {
				noFile("w.txt")(t, dir, srv, r)
				if got, _ := os.ReadFile(filepath.Join(dir, "keep.txt")); string(got) != "same\n" {
					t.Fatalf("keep.txt = %q: edit_file wrote under read-only", got)
				}
				if res := firstResults(t, srv); strings.Count(res, "the sandbox is read-only") != 2 {
					t.Fatalf("both calls should be refused as read-only:\n%s", res)
				}
			}},
		{name: "a task that starts with a command name", args: []string{"continue", "working", "on", "the", "parser"}, code: 2,
			check: stderrHas("did you mean `ralph -- continue working on the parser`?")},
		{name: "subcommand help without global flags", args: []string{"status", "--help"}, check: func(t *testing.T, _ string, _ *llmtest.Server, r runResult) {
			if strings.Contains(r.stdout, "OpenAI-compatible endpoint") || !strings.Contains(r.stdout, "ralph --help lists them") {
				t.Fatalf("status --help:\n%s", r.stdout)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var js string
			if len(tc.calls) > 0 {
				js = toolScenario(t, "conv", [][]toolCall{tc.calls}, "done")
			} else {
				js = textScenario(t, "done")
			}
			srv := inlineServer(t, js)
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("same\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r := ralph(t, dir, cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), strings.NewReader(tc.stdin), tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			tc.check(t, dir, srv, r)
		})
	}
}

func stderrHas(s string) func(*testing.T, string, *llmtest.Server, runResult) {
	return func(t *testing.T, _ string, _ *llmtest.Server, r runResult) {
		t.Helper()
		if !strings.Contains(r.stderr, s) {
			t.Fatalf("stderr lacks %q:\n%s", s, r.stderr)
		}
	}
}

func resultsHave(s string) func(*testing.T, string, *llmtest.Server, runResult) {
	return func(t *testing.T, _ string, srv *llmtest.Server, _ runResult) {
		t.Helper()
		if res := firstResults(t, srv); !strings.Contains(res, s) {
			t.Fatalf("the tool results lack %q:\n%s", s, res)
		}
	}
}

func noFile(name string) func(*testing.T, string, *llmtest.Server, runResult) {
	return func(t *testing.T, dir string, _ *llmtest.Server, _ runResult) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Fatalf("%s was written", name)
		}
	}
}

func both(a, b func(*testing.T, string, *llmtest.Server, runResult)) func(*testing.T, string, *llmtest.Server, runResult) {
	return func(t *testing.T, dir string, srv *llmtest.Server, r runResult) {
		t.Helper()
		a(t, dir, srv, r)
		b(t, dir, srv, r)
	}
}
