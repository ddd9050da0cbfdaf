//go:build unix

package tools

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/workers"
)

// fakeEditor is an editor (ACP's fs/read_text_file and
// fs/write_text_file) that holds its buffers in memory and records every
// call. Each call checks what a real editor cannot: that the path it was
// given leads nowhere through a link (the editor would follow it).
type fakeEditor struct {
	mu     sync.Mutex
	text   map[string]string // abs → buffer
	calls  []string
	linked []string // paths that held a link when the editor was asked
	err    error    // every call fails with it, when set
	// onWrite, when set, is what the editor does besides keeping the
	// buffer (saving it, or something worse).
	onWrite func(abs, content string)
}

func newFakeEditor() *fakeEditor { return &fakeEditor{text: map[string]string{}} }

func (e *fakeEditor) record(op, abs string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, op+" "+abs)
	for p := abs; p != filepath.Dir(p); p = filepath.Dir(p) {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			e.linked = append(e.linked, abs)
		}
	}
}

func (e *fakeEditor) ReadTextFile(_ context.Context, abs string) (string, error) {
	e.record("read", abs)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return "", e.err
	}
	s, ok := e.text[abs]
	if !ok {
		return "", workers.ErrEditorNoFile
	}
	return s, nil
}

func (e *fakeEditor) WriteTextFile(_ context.Context, abs, content string) error {
	e.record("write", abs)
	e.mu.Lock()
	if e.err != nil {
		e.mu.Unlock()
		return e.err
	}
	e.text[abs] = content
	on := e.onWrite
	e.mu.Unlock()
	if on != nil {
		on(abs, content)
	}
	return nil
}

func (e *fakeEditor) made() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.calls...)
}

func (e *fakeEditor) buffer(abs string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.text[abs]
	return s, ok
}

// evalRoot is a fresh project root, spelled with its links resolved as
// the editor is given paths.
func evalRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// editorTools is a Toolset on root whose file tools go through ed.
//
// The tests that use it are not parallel: every editor call holds still
// all the processes of the test binary's (proctree.Freeze, as ralph holds
// the model's), and beside the package's other tests, whose commands fork
// and wait on the disk, a loaded machine could keep them from standing
// still within Freeze's two seconds, failing the call with ErrNotHeldStill
// (seen once in a full `make test`). Run alone, nothing else of the
// binary's is running, and each freeze is a read of its child lists.
func editorTools(t *testing.T, root string, ed workers.EditorFiles, opts Options) *Toolset {
	t.Helper()
	opts.Root, opts.Editor = root, ed
	return newTestToolset(t, opts)
}

// TestEditorBufferIsWhatTheFileToolsSee: with an editor, read_file shows
// its buffer, not the disk; write_file, edit_file and apply_patch change
// its buffer, not the disk, by the absolute path ralph resolved; and the
// change records are made as for the disk.
func TestEditorBufferIsWhatTheFileToolsSee(t *testing.T) {
	root := evalRoot(t)
	writeTestFile(t, filepath.Join(root, "a.txt"), "on disk\n")
	writeTestFile(t, filepath.Join(root, "b.txt"), "one\ntwo\n")
	ed := newFakeEditor()
	a, b := filepath.Join(root, "a.txt"), filepath.Join(root, "b.txt")
	ed.text[a] = "in the buffer\nunsaved\n"
	ed.text[b] = "one\ntwo\nthree\n"
	ts := editorTools(t, root, ed, Options{})

	if out := mustOK(t, call(t, ts, "read_file", map[string]any{"path": "a.txt"})); out != "[a.txt: lines 1-2 of 2]\nin the buffer\nunsaved\n" {
		t.Errorf("read_file: %q", out)
	}
	res := call(t, ts, "edit_file", map[string]any{"path": "a.txt", "old_string": "unsaved", "new_string": "edited"})
	mustOK(t, res)
	if s, _ := ed.buffer(a); s != "in the buffer\nedited\n" {
		t.Errorf("edit_file left the buffer %q", s)
	}
	if res.Changed == nil || res.Changed.Path != "a.txt" || res.Changed.Added != 1 || res.Changed.Deleted != 1 {
		t.Errorf("edit_file's change: %+v", res.Changed)
	}
	res = call(t, ts, "write_file", map[string]any{"path": "new/c.txt", "content": "c\n"})
	mustOK(t, res)
	if s, ok := ed.buffer(filepath.Join(root, "new", "c.txt")); !ok || s != "c\n" {
		t.Errorf("write_file left the buffer %q, %v", s, ok)
	}
	if res.Changed == nil || res.Changed.Path != "new/c.txt" || res.Changed.Added != 1 {
		t.Errorf("write_file's change: %+v", res.Changed)
	}
	// The lines write_file replaced are the buffer's.
	res = call(t, ts, "write_file", map[string]any{"path": "b.txt", "content": "1\n"})
	if mustOK(t, res); res.Changed == nil || res.Changed.Deleted != 3 {
		t.Errorf("write_file over the buffer: %+v", res.Changed)
	}
	mustOK(t, call(t, ts, "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n-edited\n+patched\n*** End Patch"}))
	if s, _ := ed.buffer(a); s != "in the buffer\npatched\n" {
		t.Errorf("apply_patch left the buffer %q", s)
	}

	if got := readTestFile(t, a); got != "on disk\n" {
		t.Errorf("the disk's a.txt was changed: %q", got)
	}
	if got := readTestFile(t, b); got != "one\ntwo\n" {
		t.Errorf("the disk's b.txt was changed: %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, "new", "c.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("write_file wrote the disk: %v", err)
	}
	if len(ed.linked) > 0 {
		t.Errorf("the editor was given paths through a link: %q", ed.linked)
	}
}

// attack is a path the model chooses to leave the project through the
// editor, or to change what it may not.
type attack struct {
	name, path string
	setup      func(t *testing.T, root, outside string)
	opts       func(root string) Options
}

// editorAttacks are the paths a model could try. Each project holds the
// attacked file with the content "a\n" where it exists.
func editorAttacks() []attack {
	file := func(rel string) func(t *testing.T, root, outside string) {
		return func(t *testing.T, root, _ string) { writeTestFile(t, filepath.Join(root, rel), "a\n") }
	}
	return []attack{
		{name: "parent", path: "../x"},
		{name: "absolute outside", path: "OUTSIDE/x"},
		{name: "linked directory out", path: "out/x", setup: func(t *testing.T, root, outside string) {
			if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "linked file out", path: "x", setup: func(t *testing.T, root, outside string) {
			if err := os.Symlink(filepath.Join(outside, "x"), filepath.Join(root, "x")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "git config", path: ".git/config", setup: file(".git/config")},
		{name: "link to git config", path: "cfg", setup: func(t *testing.T, root, outside string) {
			file(".git/config")(t, root, outside)
			if err := os.Symlink(filepath.Join(".git", "config"), filepath.Join(root, "cfg")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "git hook", path: ".git/hooks/pre-commit", setup: file(".git/hooks/pre-commit")},
		{name: "ralph state", path: ".ralph/config.toml", setup: file(".ralph/config.toml")},
		{name: "nested repository's config", path: "sub/.git/config", setup: file("sub/.git/config")},
		{name: "separate git directory", path: "gd/config", setup: func(t *testing.T, root, _ string) {
			writeTestFile(t, filepath.Join(root, "gd", "HEAD"), "ref: refs/heads/main\n")
			writeTestFile(t, filepath.Join(root, "gd", "config"), "a\n")
			if err := os.MkdirAll(filepath.Join(root, "gd", "objects"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "kept file", path: ".config/ralph/config.toml", setup: file(".config/ralph/config.toml"),
			opts: func(root string) Options {
				return Options{Options: workers.Options{Kept: []string{filepath.Join(root, ".config", "ralph")}}}
			}},
		{name: "secret the sandbox hides", path: ".ssh/id_ed25519", setup: file(".ssh/id_ed25519"),
			opts: func(root string) Options {
				return Options{Options: workers.Options{Kept: []string{filepath.Join(root, ".ssh")}}}
			}},
		{name: "link to a secret", path: "k", setup: func(t *testing.T, root, outside string) {
			file(".ssh/id_ed25519")(t, root, outside)
			if err := os.Symlink(filepath.Join(".ssh", "id_ed25519"), filepath.Join(root, "k")); err != nil {
				t.Fatal(err)
			}
		},
			opts: func(root string) Options {
				return Options{Options: workers.Options{Kept: []string{filepath.Join(root, ".ssh")}}}
			}},
		{name: "Read deny rule", path: ".env", setup: file(".env"),
			opts: func(root string) Options {
				d := kept.New(kept.Options{Root: root})
				r, err := kept.ParseRule("./.env", `permissions.deny "Read(./.env)" in a test`, "")
				if err != nil {
					panic(err)
				}
				d.Deny(r)
				return Options{Options: workers.Options{Door: d}}
			}},
	}
}

// TestEditorAttacksNeverReachTheEditor: for every path a model could
// choose to leave the project or to change what it may not, through
// every file tool, the editor is never asked and the result is the very
// refusal the disk route gives (reads of what the disk route may read,
// .git's files, come from the disk as they do without an editor).
func TestEditorAttacksNeverReachTheEditor(t *testing.T) {
	calls := func(p string) []struct {
		tool string
		args map[string]any
	} {
		return []struct {
			tool string
			args map[string]any
		}{
			{"read_file", map[string]any{"path": p}},
			{"write_file", map[string]any{"path": p, "content": "planted\n"}},
			{"edit_file", map[string]any{"path": p, "old_string": "a", "new_string": "planted"}},
			{"apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: " + p + "\n@@\n-a\n+planted\n*** End Patch"}},
			{"apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: " + p + "\n+planted\n*** End Patch"}},
		}
	}
	for _, a := range editorAttacks() {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			outside := t.TempDir()
			writeTestFile(t, filepath.Join(outside, "x"), "a\n")
			path := strings.Replace(a.path, "OUTSIDE", outside, 1)
			project := func(ed workers.EditorFiles) (*Toolset, string) {
				root := evalRoot(t)
				if a.setup != nil {
					a.setup(t, root, outside)
				}
				var opts Options
				if a.opts != nil {
					opts = a.opts(root)
				}
				return editorTools(t, root, ed, opts), root
			}
			ed := newFakeEditor()
			onDisk, diskRoot := project(nil)
			viaEditor, edRoot := project(ed)
			for _, c := range calls(path) {
				want := call(t, onDisk, c.tool, c.args)
				got := call(t, viaEditor, c.tool, c.args)
				if c.tool != "read_file" && !want.IsError {
					t.Fatalf("self-test: %s of %s on the disk was not refused: %s", c.tool, path, want.Output)
				}
				w := strings.ReplaceAll(want.Output, diskRoot, "<root>")
				g := strings.ReplaceAll(got.Output, edRoot, "<root>")
				if g != w || got.IsError != want.IsError {
					t.Errorf("%s %s through the editor:\n%s\nwant the disk's:\n%s", c.tool, path, g, w)
				}
			}
			if made := ed.made(); len(made) > 0 {
				t.Errorf("the editor was asked: %q", made)
			}
			if got := readTestFile(t, filepath.Join(outside, "x")); got != "a\n" {
				t.Errorf("the file outside was changed: %q", got)
			}
		})
	}
}

// TestEditorReadsAreRedactedAsDiskReads: a buffer holding the person's
// key comes back redacted exactly as the same file read from the disk.
func TestEditorReadsAreRedactedAsDiskReads(t *testing.T) {
	const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
	content := "API_KEY=" + key + "\nother line\n"
	red := memory.NewRedactor(key)

	diskRoot := evalRoot(t)
	writeTestFile(t, filepath.Join(diskRoot, "cfg.env"), content)
	want := call(t, newTestToolset(t, Options{Redact: red, Options: workers.Options{Root: diskRoot}}), "read_file", map[string]any{"path": "cfg.env"})

	root := evalRoot(t)
	writeTestFile(t, filepath.Join(root, "cfg.env"), "API_KEY=placeholder\n")
	ed := newFakeEditor()
	ed.text[filepath.Join(root, "cfg.env")] = content
	got := call(t, editorTools(t, root, ed, Options{Redact: red}), "read_file", map[string]any{"path": "cfg.env"})

	if strings.Contains(got.Output, key) || !strings.Contains(got.Output, memory.Redacted) {
		t.Errorf("the buffer's key was not redacted:\n%s", got.Output)
	}
	if got.Output != want.Output {
		t.Errorf("through the editor:\n%s\nfrom the disk:\n%s", got.Output, want.Output)
	}
	if len(ed.made()) != 1 {
		t.Errorf("the editor was asked %q, want one read", ed.made())
	}
}

// TestEditorImagesAndBinariesComeFromTheDisk: an editor holds text, so
// an image or a binary file is read from the disk, through the same
// guards, and the editor is not asked.
func TestEditorImagesAndBinariesComeFromTheDisk(t *testing.T) {
	root := evalRoot(t)
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(root, "dot.png"), img.String())
	writeTestFile(t, filepath.Join(root, "blob.bin"), "a\x00b")
	ed := newFakeEditor()
	ts := editorTools(t, root, ed, Options{})
	res := call(t, ts, "read_file", map[string]any{"path": "dot.png"})
	if mustOK(t, res); len(res.Images) != 1 {
		t.Errorf("read_file of an image: %q, %d images", res.Output, len(res.Images))
	}
	mustErr(t, call(t, ts, "read_file", map[string]any{"path": "blob.bin"}), "binary file")
	if made := ed.made(); len(made) > 0 {
		t.Errorf("the editor was asked: %q", made)
	}
}

// TestEditorWithoutTheFileAnswersAsTheDisk: ErrEditorNoFile is the
// disk's "does not exist", for a read and for an edit.
func TestEditorWithoutTheFileAnswersAsTheDisk(t *testing.T) {
	diskRoot := evalRoot(t)
	onDisk := newTestToolset(t, Options{Options: workers.Options{Root: diskRoot}})
	root := evalRoot(t)
	writeTestFile(t, filepath.Join(root, "gone.txt"), "a\n")
	viaEditor := editorTools(t, root, newFakeEditor(), Options{})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": "gone.txt"}},
		{"edit_file", map[string]any{"path": "gone.txt", "old_string": "a", "new_string": "b"}},
	} {
		want, got := call(t, onDisk, c.tool, c.args), call(t, viaEditor, c.tool, c.args)
		if got.Output != want.Output || !got.IsError {
			t.Errorf("%s through the editor: %q, want the disk's %q", c.tool, got.Output, want.Output)
		}
	}
}

// TestEditorThatFailsFailsTheCall: an editor that refuses a write fails
// the call with one sentence naming the editor, and ralph writes nothing
// to the disk instead.
func TestEditorThatFailsFailsTheCall(t *testing.T) {
	root := evalRoot(t)
	writeTestFile(t, filepath.Join(root, "a.txt"), "a\n")
	ed := newFakeEditor()
	ed.err = errors.New("the buffer is read-only")
	ts := editorTools(t, root, ed, Options{})
	mustErr(t, call(t, ts, "write_file", map[string]any{"path": "a.txt", "content": "b\n"}),
		"cannot write a.txt: the editor refused to write it (the buffer is read-only), and ralph wrote nothing to the disk instead")
	mustErr(t, call(t, ts, "read_file", map[string]any{"path": "a.txt"}), "cannot read a.txt: the editor could not read it (the buffer is read-only)")
	if got := readTestFile(t, filepath.Join(root, "a.txt")); got != "a\n" {
		t.Errorf("the disk was written: %q", got)
	}
}
