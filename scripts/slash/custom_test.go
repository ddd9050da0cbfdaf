package slash

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/tools"
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
	if got := Customs(h.Fs, "/p"); len(got) != 1 || got[0].Name != "component" {
		t.Fatalf("Customs = %+v", got)
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
// a model alias is said to be the session's model, allowed-tools narrows
// the turn's tools (and approves nothing), and the !` shell lines run
// only when the turn starts, through Host.Command.
func TestCustomFrontMatterNotes(t *testing.T) {
	ctx, h := context.Background(), customHost(t)
	out := h.Out.(*bytes.Buffer)
	_ = afero.WriteFile(h.Fs, "/p/.claude/commands/broken.md", []byte("---\ndescription: never closed\nDo it."), 0o644)
	if o, err := Dispatch(ctx, h, "/broken"); err == nil || o.Send != "" || !strings.Contains(err.Error(), "never closed") {
		t.Fatalf("%v, sent %q", err, o.Send)
	}
	_ = afero.WriteFile(h.Fs, "/p/.claude/commands/commit.md", []byte("---\nallowed-tools: Bash(git add:*)\nmodel: haiku\n---\nStatus: !`git status`\nCommit."), 0o644)
	o, err := Dispatch(ctx, h, "/commit")
	if err != nil || o.Prepare == nil || o.Model != "" || !slices.Contains(o.Tools, "run_command") || slices.Contains(o.Tools, "write_file") || slices.Contains(o.Tools, "spawn_agent") {
		t.Fatalf("%v, outcome %+v", err, o)
	}
	for _, want := range []string{"asks for model haiku", "this turn's tools are run_command only"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := o.Prepare(ctx); !errors.Is(err, ErrShellRefused) {
		t.Errorf("a shell line without Host.Command: %v", err)
	}
	var ran []string
	h.Command = func(_ context.Context, command string) workers.Result {
		ran = append(ran, command)
		if command == "git push" {
			return workers.Result{IsError: true, Output: tools.NotRun + ": nobody could approve it"}
		}
		return workers.Result{Output: "On branch main\n"}
	}
	o, _ = Dispatch(ctx, h, "/commit")
	if msg, err := o.Prepare(ctx); err != nil || msg != "Status: On branch main\nCommit." || !slices.Equal(ran, []string{"git status"}) {
		t.Errorf("prepared %q, %v; ran %q", msg, err, ran)
	}
	_ = afero.WriteFile(h.Fs, "/p/.claude/commands/push.md", []byte("---\nmodel: gpt-push-1\n---\n!`git push` then !`git status`"), 0o644)
	o, _ = Dispatch(ctx, h, "/push")
	if msg, err := o.Prepare(ctx); !errors.Is(err, ErrShellRefused) || msg != "" || !strings.Contains(err.Error(), "nobody could approve it") || o.Model != "gpt-push-1" {
		t.Errorf("a refused shell line: %q, %v, model %q", msg, err, o.Model)
	}
	if slices.Contains(ran, "git status") && len(ran) != 2 {
		t.Errorf("lines after a refused one ran: %q", ran)
	}
}

// A custom command embeds the project files it mentions with @, and a
// name found in several places runs the nearest one, saying once which
// ones do not run.
func TestCustomFilesAndDuplicates(t *testing.T) {
	ctx, h := context.Background(), customHost(t)
	out := h.Out.(*bytes.Buffer)
	_ = afero.WriteFile(h.Fs, "/p/notes.txt", []byte("the notes"), 0o644)
	_ = afero.WriteFile(h.Fs, "/p/.claude/commands/sum.md", []byte("Summarise @notes.txt and @missing.txt for mail@example.com."), 0o644)
	plugin := afero.NewMemMapFs()
	_ = afero.WriteFile(plugin, "/plug/commands/sum.md", []byte("the plugin's"), 0o644)
	h.Plugins = []CommandDir{{Fs: plugin, Path: "/plug/commands", Shown: "plugin tools/commands"}}
	o, err := Dispatch(ctx, h, "/sum")
	if err != nil || !strings.HasPrefix(o.Send, "Summarise @notes.txt and @missing.txt") || !strings.Contains(o.Send, "The file @notes.txt:\n```\nthe notes\n```") || strings.Contains(o.Send, "@missing.txt:") {
		t.Fatalf("%v, sent %q", err, o.Send)
	}
	if !strings.Contains(out.String(), "plugin tools/commands/sum.md of the same name does not run") {
		t.Errorf("the hidden plugin command was not said:\n%s", out)
	}
	out.Reset()
	_, _ = Dispatch(ctx, h, "/sum")
	if strings.Contains(out.String(), "does not run") {
		t.Errorf("said twice:\n%s", out)
	}
	if got := Customs(h.Fs, "/p", h.Plugins...); len(got) != 1 || got[0].Shown != ".claude/commands/sum.md" {
		t.Errorf("Customs = %+v", got)
	}
}

// /agents lists the session's agent definitions after the agents at
// work, by name, description and file.
func TestAgentsListsDefinitions(t *testing.T) {
	h, out, _ := host(t)
	h.Definitions = []agentdefs.Def{{Name: "bug-hunter", Description: "Finds bugs", Shown: ".claude/agents/bug-hunter.md"}}
	if _, err := Dispatch(context.Background(), h, "/agents"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "no agents are running") || !strings.Contains(out.String(), "bug-hunter — Finds bugs (.claude/agents/bug-hunter.md)") {
		t.Fatalf("/agents said:\n%s", out)
	}
}

// A custom command's @ mention of a file outside the project, or of a
// link out of it, embeds nothing through the project's door.
func TestCustomFileMentionsStayInTheProject(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CODEX_HOME", "")
	base := t.TempDir()
	root, outside := filepath.Join(base, "proj"), filepath.Join(base, "secret.txt")
	if err := os.MkdirAll(filepath.Join(root, ".claude", "commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(outside, []byte("SECRET-OUT"), 0o600)
	_ = os.Symlink(outside, filepath.Join(root, "link.txt"))
	_ = os.WriteFile(filepath.Join(root, ".claude", "commands", "leak.md"), []byte("Read @link.txt and @"+outside+" and @../secret.txt"), 0o644)
	door, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	out := &bytes.Buffer{}
	h := &Host{Fs: door, Root: root, Out: out}
	o, err := Dispatch(context.Background(), h, "/leak")
	if err != nil || strings.Contains(o.Send, "SECRET-OUT") {
		t.Fatalf("%v, sent %q", err, o.Send)
	}
	if !strings.Contains(out.String(), "@link.txt is not attached") {
		t.Errorf("the link out was not said:\n%s", out)
	}
}
