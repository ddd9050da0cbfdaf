//go:build unix

package agentdefs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// TestLinkedPersonFolderIsFollowed: a folder under ~/.claude/agents that
// is a link to a clone elsewhere (awesome-claude-agents' recommended
// install) gives its agents; the same link under the project's
// .claude/agents gives none, and a link of the person's into the
// project is not followed.
func TestLinkedPersonFolderIsFollowed(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, home, clone := filepath.Join(base, "proj"), filepath.Join(base, "home"), filepath.Join(base, "src", "awesome-claude-agents", "agents")
	def := func(name string) string {
		return "---\nname: " + name + "\ndescription: Use for " + name + " work.\n---\nYou are " + name + ".\n"
	}
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, at string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, at); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(clone, "core", "code-reviewer.md"), def("code-reviewer"))
	write(filepath.Join(root, "planted", "planted.md"), def("planted"))
	write(filepath.Join(base, "projclone", "project-linked.md"), def("project-linked"))
	link(clone, filepath.Join(home, ".claude", "agents", "awesome-claude-agents"))
	link(filepath.Join(root, "planted"), filepath.Join(home, ".claude", "agents", "into-project"))
	link(filepath.Join(base, "projclone"), filepath.Join(root, ".claude", "agents", "linked"))
	door, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	// Everything here lies in the temporary directory: only tmp is the
	// model's, as TMPDIR is outside the home in the attack layout.
	s := loadWith(nil, door, root, home, func(p string) bool { return within(filepath.Join(base, "tmp"), p) })
	if _, ok := s.Lookup("code-reviewer"); !ok {
		t.Errorf("the linked clone's agent was not found; warnings %q", s.Warnings)
	}
	for _, name := range []string{"planted", "project-linked"} {
		if _, ok := s.Lookup(name); ok {
			t.Errorf("agent %s was read through a link ralph must not follow", name)
		}
	}
	if !strings.Contains(strings.Join(s.Warnings, "\n"), "into-project is a link to") {
		t.Errorf("the link into the project was not said: %q", s.Warnings)
	}
}
