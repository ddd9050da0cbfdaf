package sessionhooks

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/workers/agents"
	"github.com/ralph-dev/ralph/workers/approval"
)

// TestProjectEnvWaitsForApproval: the env of a project's settings file
// reaches nothing until the person approves it (`ralph hooks approve`
// records it as a hook's approval is recorded); then it reaches the
// sandbox's layer only, a credential in it withheld and named; a change
// of it waits for approval again.
func TestProjectEnvWaitsForApproval(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root, userDir := filepath.Join(base, "p"), filepath.Join(base, "cfg")
	settings := filepath.Join(root, agents.HookSettingsFiles()[0].Shared)
	write(t, settings, `{"env":{"NODE_ENV":"development","GITHUB_TOKEN":"ghp_notarealtokenbutlongenough1234","RETRIES":3}}`)
	door, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	src := Sources{Root: root, Fs: door, Person: rootfs.Person(), UserConfigDir: userDir}
	l := Load(src)
	if len(l.ProjectEnvs) != 1 || l.ProjectEnvs[0].Approved {
		t.Fatalf("the project's env before approval: %+v", l.ProjectEnvs)
	}
	e := l.ProjectEnvs[0]
	if strings.Contains(e.Review.Command, "ghp_") || !strings.Contains(e.Review.Command, `NODE_ENV="development"`) {
		t.Errorf("what the person approves: %q", e.Review.Command)
	}
	if !slices.ContainsFunc(l.Ignored, func(s string) bool {
		return strings.Contains(s, "ralph hooks approve") && strings.Contains(s, "NODE_ENV")
	}) {
		t.Errorf("the person is not told how to approve it: %q", l.Ignored)
	}
	s := &childenv.Session{}
	AddProjectEnv(s, l.ProjectEnvs, "", nil, nil)
	if v := s.Vars(childenv.SandboxLayer); len(v) != 0 {
		t.Fatalf("an env not approved reached the commands: %q", v)
	}

	if err := approval.TrustHook(src.Person, userDir, root, e.Review); err != nil {
		t.Fatal(err)
	}
	l = Load(src)
	if len(l.ProjectEnvs) != 1 || !l.ProjectEnvs[0].Approved {
		t.Fatalf("the project's env after approval: %+v", l.ProjectEnvs)
	}
	var said []string
	s = &childenv.Session{}
	AddProjectEnv(s, l.ProjectEnvs, "", nil, func(m string) { said = append(said, m) })
	if got := s.Vars(childenv.SandboxLayer); !slices.Equal(got, []string{"NODE_ENV=development", "RETRIES=3"}) {
		t.Errorf("the sandbox's layer: %q", got)
	}
	if got := s.Vars(childenv.PersonLayer); len(got) != 0 {
		t.Errorf("the project's env reached the person's layer, which commands outside the sandbox get: %q", got)
	}
	if env := s.Apply([]string{"HOME=/h"}, false); slices.Contains(env, "NODE_ENV=development") {
		t.Errorf("a command outside the sandbox got the project's env: %q", env)
	}
	if len(said) != 1 || !strings.Contains(said[0], "GITHUB_TOKEN") || strings.Contains(said[0], "ghp_") {
		t.Errorf("the withheld credential is not named once, by name only: %q", said)
	}

	write(t, settings, `{"env":{"NODE_ENV":"production","LD_PRELOAD":"/tmp/x.so"}}`)
	if l = Load(src); len(l.ProjectEnvs) != 1 || l.ProjectEnvs[0].Approved {
		t.Fatalf("a changed env counts as approved: %+v", l.ProjectEnvs)
	}
}
