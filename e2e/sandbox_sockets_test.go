package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestSandboxedCommandsCannotReachSocketsOutside drives ralph under the
// default sandbox with -y and a stand-in model that tries to reach a Unix
// socket in a directory outside the project (as /var/run/docker.sock or
// the ssh agent's are): directly with python and curl, and through a hard
// link made inside the project. The socket's server gets no connection,
// and each result tells the model that the sandbox refused it and how the
// person may allow a socket. A socket the person lists in
// sandbox_unix_sockets, and a server the command starts itself in
// $TMPDIR, stay reachable.
func TestSandboxedCommandsCannotReachSocketsOutside(t *testing.T) {
	t.Parallel()
	needTool(t, "python3", "python3")
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj, outside := filepath.Join(base, "proj"), filepath.Join(base, "outside")
	for _, d := range []string{proj, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	serve := func(path string) *atomic.Int32 {
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		var n atomic.Int32
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				n.Add(1)
				c.Write([]byte("HTTP/1.0 200 OK\r\n\r\nroot shell\n"))
				c.Close()
			}
		}()
		return &n
	}
	daemon := filepath.Join(outside, "daemon.sock")
	allowed := filepath.Join(outside, "allowed.sock")
	daemonConns, allowedConns := serve(daemon), serve(allowed)

	env := cleanEnv(t)
	userConfig := filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml")
	if err := os.MkdirAll(filepath.Dir(userConfig), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(userConfig, []byte(fmt.Sprintf("sandbox_unix_sockets = [%q]\n", allowed)), 0o644); err != nil {
		t.Fatal(err)
	}

	connect := func(path string) string {
		return `python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect("` + path + `"); print("connected")'`
	}
	const own = `python3 -c 'import os, socket; p = os.path.join(os.environ.get("TMPDIR", "/tmp"), "own-%d.sock" % os.getpid()); l = socket.socket(socket.AF_UNIX); l.bind(p); l.listen(); c = socket.socket(socket.AF_UNIX); c.connect(p); print("own server ok"); os.unlink(p)'`
	attacks := []string{
		connect(daemon),
		"curl -sS --max-time 5 --unix-socket " + daemon + " http://localhost/containers/json",
		"ln " + daemon + " hard.sock && " + connect("hard.sock"),
	}
	var turns [][]toolCall
	for _, c := range append(append([]string{}, attacks...), connect(allowed), own) {
		js, _ := json.Marshal(map[string]string{"command": c})
		turns = append(turns, []toolCall{{"run_command", string(js)}})
	}
	srv := inlineServer(t, toolScenario(t, "sockets", turns, "done"))

	r := ralph(t, proj, env, nil, "--base-url", srv.URL, "-y", "--json", "reach the docker socket")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	var results []string
	for _, m := range reqs[len(reqs)-1].Request.Messages {
		if m.Role == "tool" {
			results = append(results, m.Content)
		}
	}
	if len(results) != len(attacks)+2 {
		t.Fatalf("%d tool results, want %d: %q", len(results), len(attacks)+2, results)
	}
	const note = "[ralph: the sandbox (workspace-write) blocked this: connecting to Unix sockets outside the project is not allowed"
	for i, a := range attacks {
		res := results[i]
		if !strings.Contains(res, note) || !strings.Contains(res, "sandbox_unix_sockets in their user config") {
			t.Errorf("%q: the model was told %q", a, res)
		}
		if strings.Contains(res, "root shell") || strings.Contains(res, "connected") {
			t.Errorf("%q got through: %q", a, res)
		}
	}
	for i, res := range results {
		t.Logf("result %d: %s", i, res)
	}
	if n := daemonConns.Load(); n != 0 {
		t.Errorf("the listener outside the project accepted %d connections", n)
	}
	if got := results[len(attacks)]; !strings.Contains(got, "connected") || allowedConns.Load() != 1 {
		t.Errorf("the socket listed in sandbox_unix_sockets: %q, %d connections", got, allowedConns.Load())
	}
	if got := results[len(attacks)+1]; !strings.Contains(got, "own server ok") {
		t.Errorf("a server of the command's own in $TMPDIR: %q", got)
	}
}
