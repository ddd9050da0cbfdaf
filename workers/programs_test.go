package workers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPersonEnvTakesTheProjectOffSearchPaths: a person's program loses
// the project's entries (and relative ones) on PATH, NODE_PATH and
// PYTHONPATH, and NODE_OPTIONS' options naming a file in it, and gets
// PYTHONSAFEPATH=1; everything else stays.
func TestPersonEnvTakesTheProjectOffSearchPaths(t *testing.T) {
	root := t.TempDir()
	sep := string(os.PathListSeparator)
	env := []string{
		"PATH=" + strings.Join([]string{filepath.Join(root, "bin"), "/usr/bin", ".", filepath.Join(root, "node_modules", ".bin"), "/bin"}, sep),
		"NODE_PATH=" + filepath.Join(root, "node_modules") + sep + "/usr/lib/node_modules",
		"PYTHONPATH=" + root + sep + "/opt/py",
		"NODE_OPTIONS=--max-old-space-size=4096 --require " + filepath.Join(root, "x.js") + " -r ./y.js --import=" + filepath.Join(root, "z.mjs") + " --enable-source-maps",
		"PYTHONSAFEPATH=0",
		"GITHUB_TOKEN=keep",
	}
	got := PersonEnv(env, root)
	want := []string{
		"PATH=/usr/bin" + sep + "/bin",
		"NODE_PATH=/usr/lib/node_modules",
		"PYTHONPATH=/opt/py",
		"NODE_OPTIONS=--max-old-space-size=4096 --enable-source-maps",
		"GITHUB_TOKEN=keep",
		"PYTHONSAFEPATH=1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("PersonEnv:\n got %q\nwant %q", got, want)
	}
}

// TestServerTouchesProject: a server that starts in the project, in a
// directory the model's commands may write (the temporary directory) or
// in one that holds the project, or whose command or arguments name a
// path in one of those, touches it; one started elsewhere with arguments
// outside does not.
func TestServerTouchesProject(t *testing.T) {
	root := t.TempDir()
	// Neither the project nor a directory commands may write: the
	// temporary directory, /dev/shm and /var/tmp are all the model's, and
	// so is this test's own directory when the module lies in /tmp (a
	// clean clone on CI). The check reads paths, so one that does not
	// exist serves.
	elsewhere := filepath.Join(string(filepath.Separator), "opt", "ralph-test-elsewhere")
	tmp := t.TempDir()
	for _, c := range []struct {
		cwd, command string
		args         []string
		want         bool
	}{
		{"", "npx", []string{"-y", "server"}, true},
		{"sub", "node", nil, true},
		{elsewhere, "node", []string{"srv.js"}, false},
		{elsewhere, "node", []string{filepath.Join(root, "tools", "srv.js")}, true},
		{elsewhere, "node", []string{"--dir=" + root}, true},
		{elsewhere, filepath.Join(root, "bin", "srv"), nil, true},
		{elsewhere, "uvx", []string{"mcp-server-time"}, false},
		{elsewhere, "python3", []string{filepath.Join(tmp, "srv.py")}, true},
		{tmp, "python3", []string{"-m", "mcp_server_time"}, true},
		{"..", "python3", []string{"-m", filepath.Base(root) + ".tools.srv"}, true},
		{"/var/tmp", "uvx", []string{"mcp-server-time"}, true},
	} {
		if got := ServerTouchesProject(root, c.cwd, c.command, c.args); got != c.want {
			t.Errorf("cwd %q, %s %q: touches the project %v, want %v", c.cwd, c.command, c.args, got, c.want)
		}
	}
}

// TestUserServerCommandLooksUpItsOwnPath: the program of a person's
// server is found on its own PATH, without the project's bin/, not on
// ralph's.
func TestUserServerCommandLooksUpItsOwnPath(t *testing.T) {
	root, other := t.TempDir(), t.TempDir()
	for _, d := range []string{filepath.Join(root, "bin"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "srvtool"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := "PATH=" + filepath.Join(root, "bin") + string(os.PathListSeparator) + other
	cmd := UserServerCommand(root, other, []string{path}, "srvtool")
	if cmd.Path != filepath.Join(other, "srvtool") || cmd.Dir != other || cmd.Err != nil {
		t.Errorf("path %q, dir %q, err %v", cmd.Path, cmd.Dir, cmd.Err)
	}
	cmd = UserServerCommand(root, other, []string{"PATH=" + filepath.Join(root, "bin")}, "srvtool")
	if cmd.Err == nil {
		t.Errorf("srvtool found only in the project's bin/ was taken: %q", cmd.Path)
	}
}
