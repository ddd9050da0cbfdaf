package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// patchModel is a stand-in model that sends one apply_patch call with
// patch, then answers; it keeps the names of the tools each request
// offered and the tool results it was sent.
func patchModel(t *testing.T, patch string) (*llmtest.Server, func() (offered [][]string, results []string)) {
	var mu sync.Mutex
	var offered [][]string
	var results []string
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		mu.Lock()
		defer mu.Unlock()
		var names []string
		for _, tl := range r.Request.Tools {
			if tl.Function != nil {
				names = append(names, tl.Function.Name)
			}
		}
		offered = append(offered, names)
		msgs := r.Request.Messages
		if last := msgs[len(msgs)-1]; last.Role == "tool" {
			results = append(results, last.Content)
			return llmtest.Response{Text: "done"}
		}
		args, _ := json.Marshal(map[string]string{"input": patch})
		return llmtest.Response{ToolCalls: []llmtest.ToolCall{{ID: "p", Name: "apply_patch", Arguments: string(args)}}}
	})
	t.Cleanup(srv.Close)
	return srv, func() ([][]string, []string) {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(offered), slices.Clone(results)
	}
}

// TestApplyPatchFromGPT5AddsUpdatesMovesAndUndoes: a gpt-5.1 session (on
// chat completions here) is offered codex's apply_patch, as a function,
// beside shell_command and without edit_file; its patch adds a file in a new
// directory, updates one with two chunks and moves another with a
// change; the turn's one checkpoint covers the whole patch, so ralph
// undo takes all of it back.
func TestApplyPatchFromGPT5AddsUpdatesMovesAndUndoes(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t) // b.txt "b1\nb2\nb3\n", c.txt "c\n", committed
	patch := strings.Join([]string{
		"*** Begin Patch",
		"*** Add File: src/new.txt",
		"+hello",
		"+world",
		"*** Update File: b.txt",
		"@@",
		" b1",
		"-b2",
		"+B2",
		"@@",
		"-b3",
		"+B3",
		"*** Update File: c.txt",
		"*** Move to: moved/c.txt",
		"@@",
		"-c",
		"+c moved",
		"*** End Patch",
	}, "\n")
	srv, seen := patchModel(t, patch)
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--model", "gpt-5.1", "--output-format", "stream-json", "patch it")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	offered, results := seen()
	if len(offered) == 0 || !slices.Contains(offered[0], "apply_patch") || !slices.Contains(offered[0], "shell_command") || slices.Contains(offered[0], "edit_file") {
		t.Fatalf("gpt-5.1 was offered %v, want codex's apply_patch and shell_command", offered)
	}
	if len(results) != 1 || !strings.HasPrefix(results[0], "Success.") {
		t.Fatalf("apply_patch's result = %q", results)
	}
	for f, want := range map[string]string{"src/new.txt": "hello\nworld\n", "b.txt": "b1\nB2\nB3\n", "moved/c.txt": "c moved\n"} {
		if got := readFileT(t, filepath.Join(dir, f)); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "c.txt")); !os.IsNotExist(err) {
		t.Errorf("c.txt is still there after its move: %v", err)
	}

	u := ralph(t, dir, env, nil, "undo")
	if u.code != 0 {
		t.Fatalf("ralph undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	for f, want := range map[string]string{"b.txt": "b1\nb2\nb3\n", "c.txt": "c\n"} {
		if got := readFileT(t, filepath.Join(dir, f)); got != want {
			t.Errorf("%s after undo = %q, want %q", f, got, want)
		}
	}
	for _, f := range []string{"src/new.txt", "moved/c.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s, which the patch made, is still there after undo (%v)\n%s", f, err, u.stdout)
		}
	}
}

// TestApplyPatchOutsideTheProjectIsRefused: a patch that names
// ../outside, or a path through a link that leads out of the project, is
// refused whole: not even its first, harmless hunk is written, and
// nothing appears outside. A model not trained on the format (the
// default gpt-4o-mini) is not offered apply_patch, but a call of it, a
// trained name of another family, goes through the same door.
func TestApplyPatchOutsideTheProjectIsRefused(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	for _, tc := range []struct{ name, path string }{
		{"dot-dot", "../outside.txt"},
		{"link out", "out/escaped.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
				t.Fatal(err)
			}
			patch := "*** Begin Patch\n*** Add File: inside.txt\n+fine\n*** Add File: " + tc.path + "\n+escaped\n*** End Patch"
			srv, seen := patchModel(t, patch)
			r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--model", "gpt-5", "-y", "patch it")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			_, results := seen()
			if len(results) != 1 || !strings.Contains(results[0], "outside the project") || !strings.Contains(results[0], "nothing was changed") {
				t.Fatalf("apply_patch's result = %q, want a refusal of the path outside the project", results)
			}
			if _, err := os.Stat(filepath.Join(dir, "inside.txt")); !os.IsNotExist(err) {
				t.Errorf("the refused patch's first hunk was written (%v)", err)
			}
			entries, _ := os.ReadDir(outside)
			if len(entries) != 0 {
				t.Errorf("the patch wrote outside the project: %v", entries)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "outside.txt")); !os.IsNotExist(err) {
				t.Errorf("../outside.txt was written (%v)", err)
			}
		})
	}
	t.Run("not offered to other models, who may call it", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		srv, seen := patchModel(t, "*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch")
		r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--model", "gpt-4o-mini", "-y", "patch it")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		offered, _ := seen()
		if len(offered) == 0 || slices.Contains(offered[0], "apply_patch") || !slices.Contains(offered[0], "edit_file") {
			t.Fatalf("gpt-4o-mini was offered %v, want edit_file and no apply_patch", offered)
		}
		if got := readFileT(t, filepath.Join(dir, "x.txt")); got != "x\n" {
			t.Errorf("gpt-4o-mini's call of apply_patch wrote x.txt = %q", got)
		}
	})
}
