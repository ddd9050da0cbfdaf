package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeServer is a language server in Python that speaks just enough of
// the protocol: it answers initialize and shutdown, then does what its
// first argument says: "die" exits 3 at once after answering initialize;
// "hang" answers nothing more and publishes no diagnostics.
const fakeServer = `import json, sys

mode = sys.argv[1]
inp, out = sys.stdin.buffer, sys.stdout.buffer

def read():
    length = None
    while True:
        line = inp.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    return json.loads(inp.read(length))

def send(msg):
    body = json.dumps(msg).encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()

while True:
    msg = read()
    method = msg.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": {"textDocumentSync": 1}}})
        if mode == "die":
            sys.exit(3)
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
    elif method == "exit":
        sys.exit(0)
`

// serverConfig is the person's config of one language server named name
// for .foo files, after the diagnostics wait line.
func serverConfig(first, wait, name, command string, args ...string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = quoteJSON(a)
	}
	return lspWaitConfig(first, wait) + fmt.Sprintf("\n[lsp.%s]\ncommand = %s\nargs = [%s]\nfiletypes = [\"foo\"]\nroot_markers = [\"marker.txt\"]\n",
		name, quoteJSON(command), strings.Join(quoted, ", "))
}

// fooProject is the project the failing servers are configured for.
var fooProject = map[string]string{"marker.txt": "the root\n", "a.foo": "one\n"}

// TestLSPBrokenServerDoesNotFailTheEdit: a configured server that is not
// on PATH, one that exits at once and one that dies after answering
// initialize: each time the edit succeeds, and one line of the tool
// result names the server and why it stopped.
func TestLSPBrokenServerDoesNotFailTheEdit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, command string
		args          []string
	}{
		{"missing", "ralph-no-such-language-server", nil},
		{"exits", "sh", []string{"-c", "exit 3"}},
		{"dies", "python3", []string{"SCRIPT", "die"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			needTool(t, "python3", "the fake language server's interpreter")
			srv := editTurns(t, "broken-"+c.name, "a.foo", [2]string{"one", "two"})
			script := writeScript(t, t.TempDir(), "server.py", fakeServer)
			args := append([]string(nil), c.args...)
			for i, a := range args {
				if a == "SCRIPT" {
					args[i] = script
				}
			}
			proj, env := lspProject(t, srv.URL, fooProject, serverConfig("20s", "20s", c.name, c.command, args...))
			results := runEdits(t, srv, proj, env)
			if got := readFileT(t, filepath.Join(proj, "a.foo")); got != "two\n" {
				t.Fatalf("a.foo = %q, want the edit made", got)
			}
			wantResult(t, "the edit", results[0], "edited a.foo", "language server "+c.name+" stopped: ")
			var named []string
			for _, l := range strings.Split(results[0], "\n") {
				if strings.Contains(l, c.name) {
					named = append(named, l)
				}
			}
			if len(named) != 1 {
				t.Fatalf("%d lines name the server, want one:\n%s", len(named), results[0])
			}
			if _, why, _ := strings.Cut(named[0], " stopped: "); strings.TrimSpace(why) == "" {
				t.Fatalf("the line does not say why the server stopped: %q", named[0])
			}
			if c.name == "missing" && !strings.Contains(named[0], c.command) {
				t.Fatalf("the line does not name the missing command %s: %q", c.command, named[0])
			}
		})
	}
}

// TestLSPHangingServerIsBounded: a server that answers initialize and
// then never publishes diagnostics holds an edit's result no longer than
// the configured wait, which the result names: the first edit's
// lsp_first_wait (4s here), the second's lsp_wait (2s). The edits are
// made.
func TestLSPHangingServerIsBounded(t *testing.T) {
	t.Parallel()
	needTool(t, "python3", "the fake language server's interpreter")
	srv := editTurns(t, "hanging", "a.foo", [2]string{"one", "two"}, [2]string{"two", "three"})
	script := writeScript(t, t.TempDir(), "server.py", fakeServer)
	proj, env := lspProject(t, srv.URL, fooProject, serverConfig("4s", "2s", "hang", "python3", script, "hang"))
	results := runEdits(t, srv, proj, env)
	if got := readFileT(t, filepath.Join(proj, "a.foo")); got != "three\n" {
		t.Fatalf("a.foo = %q, want both edits made", got)
	}
	wantResult(t, "the first edit", results[0], "diagnostics from hang for a.foo: no answer within 4s")
	wantResult(t, "the second edit", results[1], "diagnostics from hang for a.foo: no answer within 2s")
	reqs := srv.Requests()
	for i, wait := range []time.Duration{4 * time.Second, 2 * time.Second} {
		if took := turnTime(reqs[i], reqs[i+1]); took < wait || took > wait+15*time.Second {
			t.Fatalf("edit %d's turn took %s, want its %s wait and not much more", i+1, took, wait)
		}
	}
}

// TestLSPLandlockFallbackStartsNoServer: where user namespaces are off,
// the Landlock-only sandbox cannot hold a program that lives across
// commands, so gopls does not start: the person is told once, with why,
// and the edits are made and their results carry no diagnostics.
func TestLSPLandlockFallbackStartsNoServer(t *testing.T) {
	t.Parallel()
	needServer(t, "gopls")
	srv := editTurns(t, "go-landlock", "main.go", goBreak, goMend)
	proj, env := lspProject(t, srv.URL, goProject, lspWaitConfig(lspContentWait, lspContentWait))
	env = append(env, "RALPH_SANDBOX_NO_USERNS=1")
	r := ralph(t, proj, env, nil, "-y", "edit the project")
	if r.code != 0 {
		t.Fatalf("ralph exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got := readFileT(t, filepath.Join(proj, "main.go")); !strings.Contains(got, `fmt.Println("mended")`) {
		t.Fatalf("main.go = %q, want both edits made", got)
	}
	for i, req := range srv.Requests()[1:] {
		msgs := req.Request.Messages
		if last := msgs[len(msgs)-1].Content; !strings.HasPrefix(last, "edited main.go") || strings.Contains(last, "diagnostics") ||
			strings.Contains(last, "language server") {
			t.Fatalf("edit %d's result: %q, want the edit's own output alone", i+1, last)
		}
	}
	const said = "ralph starts no language server here: the Landlock-only sandbox cannot hold"
	if n := strings.Count(r.stdout+r.stderr, said); n != 1 {
		t.Fatalf("the person was told %d times that no language server starts, want once:\nstdout:\n%s\nstderr:\n%s", n, r.stdout, r.stderr)
	}
}
