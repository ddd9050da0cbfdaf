package rootfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/afero"
)

// TestProjectsRoutesToEachDoor: the view across projects reads each
// project's records through that project's door, so a record a command
// linked out of its project is not followed, while the person's own
// files outside every project read as they are.
func TestProjectsRoutesToEachDoor(t *testing.T) {
	base := t.TempDir()
	proj, state, secret := filepath.Join(base, "proj"), filepath.Join(base, "state"), filepath.Join(base, "id_rsa")
	sessions := filepath.Join(proj, ".ralph", "sessions", "s1")
	for _, d := range []string{sessions, state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(secret, "PRIVATE KEY")
	write(filepath.Join(state, "registry.json"), "{}")
	write(filepath.Join(sessions, "events.jsonl"), "{}\n")
	write(filepath.Join(proj, "AGENTS.md"), "ours")
	for _, l := range []string{filepath.Join(sessions, "transcript.md"), filepath.Join(proj, "RALPH_TASKS.md")} {
		if err := os.Symlink(secret, l); err != nil {
			t.Fatal(err)
		}
	}

	p := NewProjects()
	read := func(name string) (string, error) {
		b, err := afero.ReadFile(p, name)
		return string(b), err
	}
	if s, err := read(filepath.Join(sessions, "events.jsonl")); err != nil || s != "{}\n" {
		t.Fatalf("a project's record: %q, %v", s, err)
	}
	if s, err := read(filepath.Join(sessions, "transcript.md")); err == nil {
		t.Fatalf("a record linked out of its project was read: %q", s)
	}
	// The project is known by now (its .ralph was read): its other files
	// go through its door too.
	if s, err := read(filepath.Join(proj, "RALPH_TASKS.md")); err == nil {
		t.Fatalf("a task list linked out of its project was read: %q", s)
	}
	if s, err := read(filepath.Join(proj, "AGENTS.md")); err != nil || s != "ours" {
		t.Fatalf("a project's own file: %q, %v", s, err)
	}
	if s, err := read(filepath.Join(state, "registry.json")); err != nil || s != "{}" {
		t.Fatalf("the person's own file: %q, %v", s, err)
	}
	if err := p.Rename(filepath.Join(sessions, "events.jsonl"), filepath.Join(state, "x")); err == nil || !errors.Is(err, os.ErrInvalid) {
		t.Fatalf("a rename out of a project: %v", err)
	}
}
