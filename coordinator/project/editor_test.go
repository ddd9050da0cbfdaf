package project

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/workers"
)

// recordingEditor is an editor that keeps what it was asked to write.
type recordingEditor struct {
	mu     sync.Mutex
	writes map[string]string
}

func (e *recordingEditor) ReadTextFile(context.Context, string) (string, error) {
	return "", workers.ErrEditorNoFile
}

func (e *recordingEditor) WriteTextFile(_ context.Context, abs, content string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.writes[abs] = content
	return nil
}

// TestTheEditorReachesEveryWorkspace: the editor a face gives Open is
// the one every Workspace of the session writes through: the session's
// own (and so its children's, which share its Toolset) and a task's
// rooted one. Not parallel: env sets the process's XDG_CONFIG_HOME.
func TestTheEditorReachesEveryWorkspace(t *testing.T) {
	dir := t.TempDir()
	ed := &recordingEditor{writes: map[string]string{}}
	p, err := Open(context.Background(), Options{Dir: dir, Getenv: env(t), Mode: ModeOneShot, Yes: true, Editor: ed})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if got := p.Tools.Workspace().Options().Editor; got != ed {
		t.Errorf("the session's Workspace has editor %v", got)
	}
	rooted, err := p.Tools.Rooted(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer rooted.Close()
	if got := rooted.Workspace().Options().Editor; got != ed {
		t.Errorf("a task's rooted Workspace has editor %v", got)
	}
	args, _ := json.Marshal(map[string]string{"path": "a.txt", "content": "a\n"})
	if res := p.Tools.Call(context.Background(), "write_file", args); res.IsError {
		t.Fatalf("write_file: %s", res.Output)
	}
	real, _ := filepath.EvalSymlinks(dir)
	ed.mu.Lock()
	defer ed.mu.Unlock()
	if got := ed.writes[filepath.Join(real, "a.txt")]; got != "a\n" {
		t.Errorf("the editor was asked to write %q", ed.writes)
	}
}
