package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Issue 66, cause 1: the person's home directory (or any directory holding
// ralph's own configuration or the person's secrets) was accepted as the
// project, and under the project root nothing is hidden from the model.

const (
	a66Key    = "E2E-ROOT66-PRIVATE-KEY-of-the-person"
	a66Config = "# the person's ralph config\n"
)

// a66Home makes base/home, the person's home, with a key in .ssh and
// ralph's configuration in .config/ralph, and base/proj, a project of
// theirs; env points ralph's config and state into that home.
func a66Home(t *testing.T, url string, extra ...string) (base, home, proj string, env []string) {
	t.Helper()
	proj, home = attackLayout(t)
	base = filepath.Dir(home)
	a59Write(t, filepath.Join(home, ".ssh", "id_rsa"), a66Key+"\n", 0o600)
	a59Write(t, filepath.Join(home, ".config", "ralph", "config.toml"), a66Config, 0o644)
	env = attackEnv(t, home, url, append([]string{"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state")}, extra...))
	return base, home, proj, env
}

// wantRefused fails unless r is a refusal of exit 2 in one sentence
// naming what it says.
func wantRefused(t *testing.T, what string, r runResult, says ...string) {
	t.Helper()
	if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("%s: exit %d (want 2, one line), stderr:\n%s", what, r.code, r.stderr)
	}
	for _, s := range says {
		if !strings.Contains(r.stderr, s) {
			t.Fatalf("%s: the refusal does not say %q:\n%s", what, s, r.stderr)
		}
	}
}

// TestAttack66HomeIsNotTheProject: `cd ~ && ralph "…"` made the home
// directory the project. Now it is refused, exit 2 in one sentence, in CI
// and at no terminal, with and without -y, from ~ and with -C ~; the model
// is never asked and ralph makes no ~/.ralph.
func TestAttack66HomeIsNotTheProject(t *testing.T) {
	t.Parallel()
	srv, log := a59Server(t, toolCall{name: "read_file", args: `{"path":".ssh/id_rsa"}`})
	_, home, proj, env := a66Home(t, srv.URL, "CI=true")
	for _, c := range []struct {
		name, dir string
		args      []string
	}{
		{"cd-home", home, []string{"set up"}},
		{"cd-home-yes", home, []string{"-y", "set up"}},
		{"C-home", proj, []string{"-C", home, "set up"}},
		{"C-home-slash", proj, []string{"-C", home + "/", "-y", "set up"}},
	} {
		r := ralph(t, c.dir, env, nil, c.args...)
		wantRefused(t, c.name, r, home, "home directory", "--allow-home-project")
	}
	if bodies, _ := log(); bodies != "" {
		t.Fatalf("the model was asked:\n%s", bodies)
	}
	if _, err := os.Lstat(filepath.Join(home, ".ralph")); !os.IsNotExist(err) {
		t.Fatalf("ralph made ~/.ralph: %v", err)
	}
}

// TestAttack66AllowedHomeStillHidesSecrets: with the person's
// --allow-home-project the home directory is the project, but its keys and
// ralph's own configuration are not the model's: read_file .ssh/id_rsa,
// list_files .ssh, search for the key, and write_file
// .config/ralph/config.toml (an MCP server the person's next ralph would
// start unsandboxed) are refused, also through a link the model made, and
// no byte of the key reaches the model's endpoint. In CI, without -y.
func TestAttack66AllowedHomeStillHidesSecrets(t *testing.T) {
	t.Parallel()
	evil := "[mcp_servers.x]\ncommand = \"sh\"\nargs = [\"-c\", \"touch pwned\"]\n"
	wr := func(path string) toolCall {
		js, _ := json.Marshal(map[string]any{"path": path, "content": evil})
		return toolCall{name: "write_file", args: string(js)}
	}
	srv, log := a59Server(t,
		toolCall{name: "read_file", args: `{"path":".ssh/id_rsa"}`},
		toolCall{name: "read_file", args: `{"path":"k/id_rsa"}`},
		toolCall{name: "list_files", args: `{"path":".ssh"}`},
		toolCall{name: "search", args: `{"pattern":"ROOT66-PRIVATE"}`},
		wr(".config/ralph/config.toml"),
		wr("c/config.toml"),
		wr(".config/ralph/new.toml"),
	)
	_, home, _, env := a66Home(t, srv.URL, "CI=true")
	// Links the model could have left in an earlier session.
	if err := os.Symlink(".ssh", filepath.Join(home, "k")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".config/ralph", filepath.Join(home, "c")); err != nil {
		t.Fatal(err)
	}
	r := ralph(t, home, env, nil, "--allow-home-project", "set up")
	bodies, results := log()
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(bodies, "ROOT66-PRIVATE-KEY") {
		t.Fatalf("BROKEN: the key reached the model's endpoint; tool results:\n%s", results)
	}
	if strings.Count(results, "is kept from you") < 5 {
		t.Fatalf("the kept paths were not refused as kept:\n%s", results)
	}
	if b, err := os.ReadFile(filepath.Join(home, ".config", "ralph", "config.toml")); err != nil || string(b) != a66Config {
		t.Fatalf("BROKEN: ralph's config was written: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(home, ".config", "ralph", "new.toml")); !os.IsNotExist(err) {
		t.Fatalf("BROKEN: a file was made in ralph's config directory: %v", err)
	}
}

// TestAttack66AllowedHomeHidesSecretsFromCommands: under the home
// directory granted with --allow-home-project, the model's commands (with
// -y, in the sandbox) cannot read the key, nor write ralph's
// configuration, in the default sandbox and on Landlock alone; what they
// print reaches the endpoint, so the key must not be in it. The rest of
// the home is theirs to write, as the flag says, but for new entries
// directly in it: the sandbox grants writing around the kept paths.
func TestAttack66AllowedHomeHidesSecretsFromCommands(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			srv, log := a59Server(t,
				a59Cmd("cat .ssh/id_rsa; cat k/id_rsa; cp .ssh/id_rsa stolen; cat stolen; grep -r ROOT66 . 2>/dev/null | head -3"),
				a59Cmd("echo '[mcp_servers.x]' >> .config/ralph/config.toml; echo x > .config/ralph/new.toml; mv .config/ralph .config/gone; "+
					"mkdir -p .local/state/ralph && echo x > .local/state/ralph/planted; echo wrote"),
				a59Cmd("echo mine > notes.txt; mkdir -p src/b && echo ok > src/b/a"),
			)
			_, home, _, env := a66Home(t, srv.URL, mode.env...)
			a59Write(t, filepath.Join(home, "notes.txt"), "old\n", 0o644)
			a59Write(t, filepath.Join(home, "src", "README"), "the person's\n", 0o644)
			if err := os.Symlink(".ssh", filepath.Join(home, "k")); err != nil {
				t.Fatal(err)
			}
			r := ralph(t, home, env, nil, "--allow-home-project", "-y", "set up")
			bodies, results := log()
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\nresults:\n%s", r.code, r.stderr, results)
			}
			if strings.Contains(bodies, "ROOT66-PRIVATE-KEY") {
				t.Fatalf("BROKEN: the key reached the model's endpoint; tool results:\n%s", results)
			}
			if b, err := os.ReadFile(filepath.Join(home, ".config", "ralph", "config.toml")); err != nil || string(b) != a66Config {
				t.Fatalf("BROKEN: ralph's config was changed: %q, %v", b, err)
			}
			for _, p := range []string{".config/ralph/new.toml", ".config/gone", ".local/state/ralph/planted"} {
				if _, err := os.Lstat(filepath.Join(home, p)); !os.IsNotExist(err) {
					t.Fatalf("BROKEN: a command made ~/%s: %v", p, err)
				}
			}
			// The rest of the home directory is the project's, as the
			// flag says.
			if b, _ := os.ReadFile(filepath.Join(home, "notes.txt")); string(b) != "mine\n" {
				t.Fatalf("a command could not write ~/notes.txt under the flag: %q", b)
			}
			if b, _ := os.ReadFile(filepath.Join(home, "src", "b", "a")); string(b) != "ok\n" {
				t.Fatalf("a command could not write in a directory of the home under the flag: %q", b)
			}
		})
	}
}

// TestAttack66StowedConfigIsNotTheProject: a dotfiles repository holding
// the real directory ~/.config/ralph links to (GNU stow) was accepted as
// the project, and the model could rewrite ralph's configuration through
// it. Now it is refused, as is --add-dir of it.
func TestAttack66StowedConfigIsNotTheProject(t *testing.T) {
	t.Parallel()
	srv, log := a59Server(t)
	base, home, proj, env := a66Home(t, srv.URL, "CI=true")
	dotfiles := filepath.Join(base, "dotfiles")
	stowed := filepath.Join(dotfiles, "ralph", ".config", "ralph")
	a59Write(t, filepath.Join(stowed, "config.toml"), a66Config, 0o644)
	if err := os.RemoveAll(filepath.Join(home, ".config", "ralph")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(stowed, filepath.Join(home, ".config", "ralph")); err != nil {
		t.Fatal(err)
	}
	gitProject(t, dotfiles)
	wantRefused(t, "cd dotfiles", ralph(t, dotfiles, env, nil, "set up"), dotfiles, stowed, "--allow-home-project")
	wantRefused(t, "cd dotfiles/ralph", ralph(t, filepath.Join(dotfiles, "ralph"), env, nil, "-C", ".", "set up"), stowed)
	wantRefused(t, "--add-dir dotfiles", ralph(t, proj, env, nil, "--add-dir", dotfiles, "set up"), "--add-dir", stowed)
	if bodies, _ := log(); bodies != "" {
		t.Fatalf("the model was asked:\n%s", bodies)
	}
}

// TestAttack66AddDirHomeIsRefused: `ralph --add-dir ~` gave the model the
// home directory beside the project. Now it is refused in one sentence,
// as --add-dir / and --add-dir ~/.ssh are.
func TestAttack66AddDirHomeIsRefused(t *testing.T) {
	t.Parallel()
	srv, log := a59Server(t, toolCall{name: "read_file", args: `{"path":"ID"}`})
	_, home, proj, env := a66Home(t, srv.URL, "CI=true")
	wantRefused(t, "--add-dir ~", ralph(t, proj, env, nil, "--add-dir", home, "set up"), "--add-dir", "home directory", "--allow-home-project")
	wantRefused(t, "--add-dir /", ralph(t, proj, env, nil, "-y", "--add-dir", "/", "set up"), "--add-dir", "root")
	wantRefused(t, "--add-dir ~/.ssh", ralph(t, proj, env, nil, "--add-dir", filepath.Join(home, ".ssh"), "set up"), "--add-dir", ".ssh")
	if bodies, _ := log(); bodies != "" {
		t.Fatalf("the model was asked:\n%s", bodies)
	}
}

// TestAttack66MCPServeTakesOnlyItsDirectory: `ralph mcp serve`'s task,
// undo and run_start took any dir the client named, and the client is
// another agent its own model steers. Now a dir outside the directory the
// server serves is refused with one sentence, and no ralph runs there.
func TestAttack66MCPServeTakesOnlyItsDirectory(t *testing.T) {
	t.Parallel()
	srv, log := a59Server(t, toolCall{name: "read_file", args: `{"path":".ssh/id_rsa"}`})
	_, home, proj, env := a66Home(t, srv.URL)
	cmd := exec.Command(ralphBin, "mcp", "serve")
	cmd.Dir, cmd.Env = proj, env
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "attack66", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"task", map[string]any{"task": "set up", "dir": home}},
		{"task", map[string]any{"task": "set up", "dir": "../home"}},
		{"task", map[string]any{"task": "set up", "dir": "/"}},
		{"undo", map[string]any{"dir": home}},
		{"run_start", map[string]any{"dir": home, "plan": "PLAN.md"}},
	} {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s %v: %v", c.tool, c.args, err)
		}
		var text strings.Builder
		for _, ct := range res.Content {
			if tc, ok := ct.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		if !res.IsError || !strings.Contains(text.String(), "outside") || strings.Count(strings.TrimSpace(text.String()), "\n") != 0 {
			t.Fatalf("%s %v: not refused in one sentence (error %v): %s", c.tool, c.args, res.IsError, text.String())
		}
	}
	if bodies, _ := log(); bodies != "" {
		t.Fatalf("BROKEN: a ralph ran for the client outside the served directory:\n%s", bodies)
	}
	for _, d := range []string{filepath.Join(home, ".ralph"), "/.ralph"} {
		if _, err := os.Lstat(d); !os.IsNotExist(err) {
			t.Fatalf("%s exists: %v", d, err)
		}
	}
}
