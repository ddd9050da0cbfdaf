//go:build linux

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestACPClientFilesServeTheTools: with the editor's file system offered,
// read_file reads the editor's buffer, not the disk; write_file and
// edit_file write through fs/write_text_file, and the disk stays as it
// was (this editor keeps what it is sent in its buffers).
func TestACPClientFilesServeTheTools(t *testing.T) {
	t.Parallel()
	dir, env, _ := acpProject(t, toolScenario(t, "acp-fs", [][]toolCall{
		{{"read_file", `{"path":"a.txt"}`}},
		{{"write_file", `{"path":"b.txt","content":"new\n"}`}},
		{{"edit_file", `{"path":"a.txt","old_string":"buffer","new_string":"edited"}`}},
	}, "done"))
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	mustWrite(t, a, "disk text\n")
	s := acpEditor(t, dir, env, acpPlan{
		FS: acpFS{Read: true, Write: true}, Buffers: map[string]string{a: "buffer text\n"},
		Steps: []acpStep{{Op: "new", Cwd: dir}, {Op: "prompt", Text: "read and write"}},
	})
	if out := s.toolText(); !strings.Contains(out, "buffer text") || strings.Contains(out, "disk text") {
		t.Errorf("read_file's result is not the buffer's:\n%s", out)
	}
	writes := map[string]string{}
	for _, e := range s.requests("fs/write_text_file") {
		var p struct{ Path, Content string }
		_ = jsonUnmarshal(e.Params, &p)
		writes[p.Path] = p.Content
	}
	if writes[b] != "new\n" || writes[a] != "edited text\n" {
		t.Errorf("the editor was asked to write %v", writes)
	}
	if got := readFileT(t, a); got != "disk text\n" {
		t.Errorf("a.txt on the disk = %q", got)
	}
	if exists(b) {
		t.Error("b.txt was written on the disk, not through the editor")
	}
	if len(s.requests("terminal/create")) > 0 {
		t.Error("ralph sent a command to the editor's terminal")
	}
}

// TestACPPathsCannotLeaveThroughTheEditor: a path the model chooses that
// leads out of the project or into what it may not touch — `..`, an
// absolute path outside, a link to a directory outside, .git/config,
// .ralph/config.toml, a nested repository's .git/config, a file a deny
// rule keeps — reaches the editor's fs/* by no tool (read_file,
// write_file, edit_file), and every such file is untouched; a file of
// the project still goes through the editor.
func TestACPPathsCannotLeaveThroughTheEditor(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	outside, outDir := filepath.Join(base, "outside.txt"), filepath.Join(base, "outdir")
	mustWrite(t, outside, "outside\n")
	mustWrite(t, filepath.Join(outDir, "x"), "outside x\n")
	paths := []string{"../outside.txt", outside, "link/x", ".git/config", ".ralph/config.toml", "sub/.git/config", ".env"}
	var calls []toolCall
	for _, p := range paths {
		calls = append(calls,
			toolCall{"read_file", fmt.Sprintf(`{"path":%q}`, p)},
			toolCall{"write_file", fmt.Sprintf(`{"path":%q,"content":"pwned\n"}`, p)},
			toolCall{"edit_file", fmt.Sprintf(`{"path":%q,"old_string":"[","new_string":"pwned"}`, p)})
	}
	dir, env, _ := acpProject(t, toolScenario(t, "acp-escapes", [][]toolCall{calls, {{"read_file", `{"path":"ok.txt"}`}}}, "done"))
	if err := os.Symlink(outDir, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "ok.txt"), "ok\n")
	mustWrite(t, filepath.Join(dir, ".ralph", "config.toml"), "# the project's [config]\n")
	mustWrite(t, filepath.Join(dir, ".env"), "[TOKEN]=secret\n")
	gitInitT(t, filepath.Join(dir, "sub"))
	home := envValue(env, "HOME")
	mustWrite(t, filepath.Join(home, ".claude", "settings.json"), `{"permissions":{"deny":["Read(./.env)"]}}`)
	files := map[string]string{}
	for _, f := range []string{outside, filepath.Join(outDir, "x"), filepath.Join(dir, ".git", "config"), filepath.Join(dir, ".ralph", "config.toml"),
		filepath.Join(dir, "sub", ".git", "config"), filepath.Join(dir, ".env")} {
		files[f] = readFileT(t, f)
	}
	s := acpEditor(t, dir, env, acpPlan{
		FS: acpFS{Read: true, Write: true}, WriteDisk: true,
		Steps: []acpStep{{Op: "new", Cwd: dir}, {Op: "prompt", Text: "try them all"}},
	})
	if r := s.stopReason(t, 0); r != "end_turn" {
		t.Fatalf("stop reason %q", r)
	}
	if got, want := s.fsPaths(), []string{"fs/read_text_file " + filepath.Join(dir, "ok.txt")}; !slices.Equal(got, want) {
		t.Errorf("ralph asked the editor for %q, want only %q; results:\n%s", got, want, s.toolText())
	}
	for f, was := range files {
		if got := readFileT(t, f); got != was {
			t.Errorf("%s changed: %q", f, got)
		}
	}
	if out := s.toolText(); strings.Contains(out, "outside x") || strings.Contains(out, "secret") {
		t.Errorf("a tool read a file it may not:\n%s", out)
	}
}
