package slash

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

// customHost is a host whose home has no commands of its own.
func customHost(t *testing.T) *Host {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CODEX_HOME", "")
	h, _, _ := host(t)
	return h
}

// $1 … $9 take the arguments' words (quotes group them), $ARGUMENTS all
// of them, and a $ with two digits stays as written.
func TestCustomPositionalArguments(t *testing.T) {
	ctx, h := context.Background(), customHost(t)
	_ = afero.WriteFile(h.Fs, "/p/.claude/commands/fix-issue.md", []byte("---\r\ndescription: Fix an issue\r\nargument-hint: [number] [priority]\r\n---\r\nFix issue #$1 with priority $2 ($3). All: $ARGUMENTS. Costs $10.\r\n"), 0o644)
	o, err := Dispatch(ctx, h, `/fix-issue 123 "very high"`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `Fix issue #123 with priority very high (). All: 123 "very high". Costs $10.`; o.Send != want {
		t.Fatalf("sent %q\nwant %q", o.Send, want)
	}
}

// A file under a folder of commands is a command of its file's name;
// the folder only groups.
func TestCustomNestedFolders(t *testing.T) {
	ctx, h := context.Background(), customHost(t)
	_ = afero.WriteFile(h.Fs, "/p/.claude/commands/frontend/component.md", []byte("Make a component $ARGUMENTS."), 0o644)
	_ = afero.WriteFile(h.Fs, "/p/.claude/commands/a/b/c/d/too-deep.md", []byte("x"), 0o644)
	o, err := Dispatch(ctx, h, "/component Button")
	if err != nil || o.Send != "Make a component Button." {
		t.Fatalf("%v, sent %q", err, o.Send)
	}
	if got := CustomNames(h.Fs, "/p"); len(got) != 1 || got[0] != "component" {
		t.Fatalf("CustomNames = %q", got)
	}
	if _, err := Dispatch(ctx, h, "/frontend/component"); err == nil {
		t.Fatal("a path ran as a command name")
	}
}

// codex's prompts in ~/.codex/prompts (or $CODEX_HOME/prompts) are the
// person's commands.
func TestCodexPrompts(t *testing.T) {
	home, codex := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", "")
	ctx := context.Background()
	h, out, _ := host(t)
	if err := os.MkdirAll(filepath.Join(home, ".codex", "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(home, ".codex", "prompts", "draftpr.md"), []byte("---\ndescription: Prep a PR\n---\nDraft a PR for $1."), 0o644)
	o, err := Dispatch(ctx, h, "/draftpr feature-x")
	if err != nil || o.Send != "Draft a PR for feature-x." || !strings.Contains(out.String(), "~/.codex/prompts/draftpr.md") {
		t.Fatalf("%v, sent %q, out %q", err, o.Send, out)
	}
	t.Setenv("CODEX_HOME", codex)
	_ = os.MkdirAll(filepath.Join(codex, "prompts"), 0o755)
	_ = os.WriteFile(filepath.Join(codex, "prompts", "moved.md"), []byte("Moved."), 0o644)
	if o, err := Dispatch(ctx, h, "/moved"); err != nil || o.Send != "Moved." {
		t.Fatalf("CODEX_HOME: %v, sent %q", err, o.Send)
	}
}

// /help lists the custom commands with their hints and descriptions,
// controls stripped.
func TestHelpListsCustomCommands(t *testing.T) {
	h := customHost(t)
	_ = afero.WriteFile(h.Fs, "/p/.claude/commands/review.md", []byte("---\ndescription: \"Review \\x1b[31mthe diff\"\nargument-hint: [file]\n---\nReview $1."), 0o644)
	_ = afero.WriteFile(h.Fs, "/p/.claude/commands/quoted.md", []byte("---\nargument-hint: \"<file> [line]\"\n---\nQ."), 0o644)
	_ = afero.WriteFile(h.Fs, "/p/.claude/commands/plain.md", []byte("Plain."), 0o644)
	_ = afero.WriteFile(h.Fs, "/p/.claude/commands/status.md", []byte("shadowed"), 0o644)
	help := CustomHelp(h.Fs, "/p")
	for _, want := range []string{"`/review [file]` — Review the diff (.claude/commands/review.md)", "`/plain` — custom command (.claude/commands/plain.md)", "`/quoted <file> [line]`"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "\x1b") || strings.Contains(help, "/status") {
		t.Errorf("help shows a control or a shadowed command:\n%s", help)
	}
	if CustomHelp(afero.NewMemMapFs(), "/p") != "" {
		t.Error("help section with no custom commands")
	}
}

// A malformed front matter is one error, never the block sent as text;
// model and allowed-tools are said not to apply, and !` shell is said
// not to run.
func TestCustomFrontMatterNotes(t *testing.T) {
	ctx, h := context.Background(), customHost(t)
	out := h.Out.(*bytes.Buffer)
	_ = afero.WriteFile(h.Fs, "/p/.claude/commands/broken.md", []byte("---\ndescription: never closed\nDo it."), 0o644)
	if o, err := Dispatch(ctx, h, "/broken"); err == nil || o.Send != "" || !strings.Contains(err.Error(), "never closed") {
		t.Fatalf("%v, sent %q", err, o.Send)
	}
	_ = afero.WriteFile(h.Fs, "/p/.claude/commands/commit.md", []byte("---\nallowed-tools: Bash(git add:*)\nmodel: haiku\n---\nStatus: !`git status`\nCommit."), 0o644)
	o, err := Dispatch(ctx, h, "/commit")
	if err != nil || !strings.HasPrefix(o.Send, "Status: !`git status`") {
		t.Fatalf("%v, sent %q", err, o.Send)
	}
	for _, want := range []string{"does not apply model and allowed-tools", "embeds shell"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
