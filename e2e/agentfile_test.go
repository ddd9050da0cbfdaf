package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// AGENT.md, ralph's learnings file, is back (issue 92, item 15): ralph
// init creates it beside the person's instructions, remember adds to it,
// and ralph never writes AGENTS.md or CLAUDE.md unasked.

// TestInitAndRememberKeepToAgentFile: in a project with a CLAUDE.md,
// ralph init creates AGENT.md (with what it detected) and no AGENTS.md,
// and leaves CLAUDE.md byte for byte; the model's remember appends to
// AGENT.md's Learnings, and the next session's system prompt holds the
// learning as ralph's own, and CLAUDE.md as the instructions; neither
// instructions file is written. In a project with the person's AGENTS.md,
// remember leaves that byte for byte too.
func TestInitAndRememberKeepToAgentFile(t *testing.T) {
	t.Parallel()
	env := cleanEnv(t)
	dir := t.TempDir()
	claude := "# House rules\r\n\r\nUse tabs. CLAUDE-MARKER\r\nno final newline"
	mustWrite(t, filepath.Join(dir, "CLAUDE.md"), claude)
	mustWrite(t, filepath.Join(dir, "go.mod"), "module x\n\ngo 1.22\n")
	r := ralph(t, dir, env, nil, "init")
	if r.code != 0 || !strings.Contains(r.stdout, "created  AGENT.md") || !strings.Contains(r.stdout, "kept     CLAUDE.md") ||
		strings.Contains(r.stdout, "AGENTS.md") {
		t.Fatalf("ralph init beside CLAUDE.md: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	agent := readFileT(t, filepath.Join(dir, "AGENT.md"))
	if !strings.HasPrefix(agent, "# AGENT.md\n") || !strings.Contains(agent, "go test ./...") || !strings.HasSuffix(agent, "\n## Learnings\n") {
		t.Fatalf("AGENT.md as ralph init wrote it:\n%s", agent)
	}
	assertUntouched := func(when string) {
		t.Helper()
		if got := readFileT(t, filepath.Join(dir, "CLAUDE.md")); got != claude {
			t.Fatalf("%s: CLAUDE.md changed: %q", when, got)
		}
		if _, err := os.Lstat(filepath.Join(dir, "AGENTS.md")); err == nil {
			t.Fatalf("%s: AGENTS.md was written, unasked", when)
		}
	}
	assertUntouched("after ralph init")

	const note = "The integration tests need a running Postgres"
	args, _ := json.Marshal(map[string]string{"note": note})
	srv := inlineServer(t, toolScenario(t, "remember", [][]toolCall{{{"remember", string(args)}}}, "Noted."))
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "remember that the tests need Postgres"); r.code != 0 {
		t.Fatalf("one-shot: exit %d\n%s", r.code, r.stderr)
	}
	agent = readFileT(t, filepath.Join(dir, "AGENT.md"))
	if !strings.Contains(agent, "\n## Learnings\n\n- "+note+" (") {
		t.Fatalf("remember did not append to AGENT.md's Learnings:\n%s", agent)
	}
	assertUntouched("after remember")
	if told := strings.Join(toolResults(srv.Requests()[1])["remember"], "\n"); !strings.Contains(told, "saved to AGENT.md") {
		t.Errorf("remember told the model %q", told)
	}

	// The next session reads the learning as ralph's own, and CLAUDE.md
	// as the instructions.
	next := inlineServer(t, toolScenario(t, "next", nil, "Hi."))
	if r := ralph(t, dir, env, nil, "--base-url", next.URL, "hi"); r.code != 0 {
		t.Fatalf("second one-shot: exit %d\n%s", r.code, r.stderr)
	}
	system := next.Requests()[0].Request.Messages[0].Content
	for _, want := range []string{"remember saves a lasting learning about the project to AGENT.md", "### AGENT.md",
		"ralph's own learnings about this project", "- " + note + " (", "CLAUDE-MARKER"} {
		if !strings.Contains(system, want) {
			t.Errorf("the system prompt lacks %q:\n%.4000s", want, system)
		}
	}
	assertUntouched("after the next session")

	// The person's AGENTS.md is theirs as well.
	other := t.TempDir()
	mine := "# Agents\n\nOurs. Do not touch.\n"
	mustWrite(t, filepath.Join(other, "AGENTS.md"), mine)
	if r := ralph(t, other, env, nil, "init"); r.code != 0 || !strings.Contains(r.stdout, "kept     AGENTS.md") || !strings.Contains(r.stdout, "created  AGENT.md") {
		t.Fatalf("ralph init beside AGENTS.md: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	again := inlineServer(t, toolScenario(t, "remember", [][]toolCall{{{"remember", string(args)}}}, "Noted."))
	if r := ralph(t, other, env, nil, "--base-url", again.URL, "remember it"); r.code != 0 {
		t.Fatalf("one-shot beside AGENTS.md: exit %d\n%s", r.code, r.stderr)
	}
	if got := readFileT(t, filepath.Join(other, "AGENTS.md")); got != mine {
		t.Errorf("AGENTS.md changed: %q", got)
	}
	if got := readFileT(t, filepath.Join(other, "AGENT.md")); !strings.Contains(got, "- "+note+" (") {
		t.Errorf("the learning is not in AGENT.md:\n%s", got)
	}
}
