package e2e

import (
	"encoding/json"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/workers"
)

// threatRows is the first cell of every row of the threat table in
// docs/sandbox.md (the table under "## The threat model").
func threatRows(t *testing.T) (rows []string, tests [][]string) {
	t.Helper()
	doc := readFileT(t, filepath.Join(moduleRoot, "docs", "sandbox.md"))
	_, section, ok := strings.Cut(doc, "\n## The threat model\n")
	if !ok {
		t.Fatal("docs/sandbox.md has no section \"## The threat model\"")
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(line, " | ")
		rows = append(rows, strings.TrimPrefix(cells[0], "| "))
		tests = append(tests, testNameRe.FindAllStringSubmatch(cells[len(cells)-1], -1)...)
	}
	if len(rows) < 10 {
		t.Fatalf("the threat table has %d rows", len(rows))
	}
	return rows, tests
}

// testNameRe is a test the threat table cites: `TestName`, or
// `TestPrefix*` for a family of them.
var testNameRe = regexp.MustCompile("`(Test[A-Za-z0-9_]+)(\\*?)`")

// sessionIDRe matches a session's id in a path, which the table writes
// as <id>.
var sessionIDRe = regexp.MustCompile(`\d{8}T\d{6}Z-[0-9a-f]{12}`)

// threatTableModel works on the task it is given with every tool that
// writes ralph's own files, then completes it.
func threatTableModel(r llmtest.RecordedRequest) llmtest.Response {
	msgs := r.Request.Messages
	var id string
	for _, m := range msgs {
		if sm := taskPromptRe.FindStringSubmatch(m.Content); m.Role == "user" && sm != nil {
			id = sm[1]
		}
	}
	tools := 0
	for _, m := range msgs {
		if m.Role == "tool" {
			tools++
		}
	}
	call := func(name string, args map[string]string) llmtest.ToolCall {
		js, _ := json.Marshal(args)
		return llmtest.ToolCall{Name: name, Arguments: string(js)}
	}
	switch {
	case id == "":
		return llmtest.Response{Text: "done"}
	case tools == 0:
		return llmtest.Response{ToolCalls: []llmtest.ToolCall{
			call("write_file", map[string]string{"path": "made.txt", "content": "made\n"}),
			call("remember", map[string]string{"note": "the tests run with go test"}),
			call("record_decision", map[string]string{"decision": "keep it small", "why": "a test"}),
			call("run_command", map[string]string{"command": "echo hi > said.txt"}),
		}}
	case tools == 4:
		return llmtest.Response{ToolCalls: []llmtest.ToolCall{call("complete_task", map[string]string{"id": id, "summary": "made it"})}}
	}
	return llmtest.Response{Text: "done"}
}

// TestThreatTableHasEveryDoor: docs/sandbox.md's threat table lists every
// tool the model can call, every kind of program ralph starts for itself
// (workers.ProgramRules) and every file ralph itself writes under a
// project in a task loop's run, so that a new tool, program or path
// cannot come without its row (issue 56).
func TestThreatTableHasEveryDoor(t *testing.T) {
	t.Parallel()
	rows, tests := threatRows(t)
	// Every test the table cites exists.
	var sources strings.Builder
	filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			sources.WriteString(readFileT(t, path))
		}
		return nil
	})
	for _, m := range tests {
		decl := "func " + m[1]
		if m[2] == "" {
			decl += "("
		}
		if !strings.Contains(sources.String(), decl) {
			t.Errorf("docs/sandbox.md's threat table cites %s%s, which no test is", m[1], m[2])
		}
	}
	listed := func(s string) bool {
		return slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, s) })
	}

	var tools []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(readFileT(t, filepath.Join(moduleRoot, "workers", "tools", "testdata", "tools.golden.json"))), &tools); err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if !listed("`" + tool.Name + "`") {
			t.Errorf("the tool %s has no row in docs/sandbox.md's threat table", tool.Name)
		}
	}
	for _, p := range workers.ProgramRules {
		if !listed(string(p.Program)) {
			t.Errorf("the program %q (workers.ProgramRules) has no row in docs/sandbox.md's threat table", p.Program)
		}
	}

	// Every file a run leaves under the project, but the model's own.
	proj, home := attackLayout(t)
	srv := llmtest.NewServerFunc(threatTableModel)
	t.Cleanup(srv.Close)
	env := attackEnv(t, home, srv.URL, nil)
	mustWrite(t, filepath.Join(proj, "RALPH_TASKS.md"), "# Tasks\n\n- [ ] one <!-- ralph:id=t1 -->\n  Verify: `test -f made.txt`\n")
	gitCommitAll(t, proj)
	if r := ralph(t, proj, env, nil, "-y", "run", "--retries", "0"); r.code != 0 {
		t.Fatalf("ralph run: exit %d\n%s", r.code, r.stderr)
	}
	if r := ralph(t, proj, env, nil, "-y", "-c", "what now?"); r.code != 0 {
		t.Fatalf("ralph -c: exit %d\n%s", r.code, r.stderr)
	}
	// The model's files, and the person's README.md (attackLayout's).
	models := map[string]bool{"made.txt": true, "said.txt": true, "README.md": true}
	var paths []string
	err := filepath.WalkDir(proj, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(proj, path)
		if d.IsDir() {
			if rel == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if models[rel] {
			return nil
		}
		rel = sessionIDRe.ReplaceAllString(filepath.ToSlash(rel), "<id>")
		if !slices.Contains(paths, rel) {
			paths = append(paths, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if !listed("`" + p + "`") {
			t.Errorf("ralph wrote %s, which has no row in docs/sandbox.md's threat table", p)
		}
	}
	t.Logf("%d tools, %d programs and %d paths, each a row: %v", len(tools), len(workers.ProgramRules), len(paths), paths)
}
