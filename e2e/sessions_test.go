package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Chat items of issue 10: `ralph sessions` lists every session
// (--project, --limit), --session takes any unique part of an id, and
// every result object in stream-json carries is_error.

type sessionsOut struct {
	Sessions []struct {
		Root      string `json:"root"`
		SessionID string `json:"session_id"`
		Status    string `json:"status"`
	} `json:"sessions"`
}

func listSessions(t *testing.T, dir string, env []string, args ...string) sessionsOut {
	t.Helper()
	r := ralph(t, dir, env, nil, append([]string{"sessions", "--json"}, args...)...)
	var out sessionsOut
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil {
		t.Fatalf("sessions %v: exit %d\n%s\n%s", args, r.code, r.stdout, r.stderr)
	}
	return out
}

func TestSessionsListEverySessionAndIDParts(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"loop":true,"responses":[{"text":"ok"}]}`)
	env := cleanEnv(t)
	a, b := t.TempDir(), t.TempDir()
	var ids []string
	for _, dir := range []string{a, a, b} {
		r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "hi")
		ids = append(ids, resultLine(t, r.stdout)["session_id"].(string))
	}
	all := listSessions(t, a, env)
	if len(all.Sessions) != 3 {
		t.Fatalf("%d sessions listed, want all 3: %+v", len(all.Sessions), all.Sessions)
	}
	if all.Sessions[0].SessionID != ids[2] {
		t.Fatalf("newest first: %+v, want %s first", all.Sessions, ids[2])
	}
	onlyA := listSessions(t, b, env, "--project", a)
	if len(onlyA.Sessions) != 2 || onlyA.Sessions[0].Root != onlyA.Sessions[1].Root || !strings.Contains(ids[0]+ids[1], onlyA.Sessions[0].SessionID) {
		t.Fatalf("--project: %+v", onlyA.Sessions)
	}
	if one := listSessions(t, a, env, "--limit", "1"); len(one.Sessions) != 1 || one.Sessions[0].SessionID != ids[2] {
		t.Fatalf("--limit 1: %+v", one.Sessions)
	}
	if r := ralph(t, a, env, nil, "sessions", "--limit", "-1"); r.code != 2 {
		t.Fatalf("--limit -1: exit %d", r.code)
	}

	// A part from the middle of the first session's id, which the second
	// does not contain.
	part := ""
	for i := 1; i+5 < len(ids[0]) && part == ""; i++ {
		if p := ids[0][i : i+5]; !strings.Contains(ids[1], p) {
			part = p
		}
	}
	if part == "" {
		t.Fatalf("no distinguishing part of %s against %s", ids[0], ids[1])
	}
	r := ralph(t, a, env, nil, "--base-url", srv.URL, "--json", "--session", part, "again")
	if m := resultLine(t, r.stdout); r.code != 0 || m["session_id"] != ids[0] {
		t.Fatalf("--session %s: exit %d, %v: %s", part, r.code, m, r.stderr)
	}
}

func TestEveryStreamJSONResultHasIsError(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"loop":true,"responses":[{"text":"ok"}]}`)
	check := func(what, stdout string, want int) {
		t.Helper()
		n := 0
		for _, m := range streamLines(t, stdout) {
			if m["type"] != "result" {
				continue
			}
			n++
			if _, ok := m["is_error"].(bool); !ok {
				t.Fatalf("%s: a result without is_error: %v", what, m)
			}
		}
		if n != want {
			t.Fatalf("%s: %d results, want %d\n%s", what, n, want, stdout)
		}
	}
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--output-format", "stream-json", "hi")
	check("one-shot", r.stdout, 1)
	r = ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", "http://127.0.0.1:1/v1", "--max-retries", "0", "--output-format", "stream-json", "hi")
	check("one-shot that fails", r.stdout, 1)

	dir := t.TempDir()
	file := filepath.Join(dir, "steps.txt")
	os.WriteFile(file, []byte("hi\n/nosuchcommand\nhello\n"), 0o644)
	r = ralph(t, dir, cleanEnv(t), nil, "script", "--keep-going", "--output-format", "stream-json", file, "--base-url", srv.URL)
	check("script", r.stdout, 3)

	dir = t.TempDir()
	writeTasks(t, dir, "one task")
	r = ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "--output-format", "stream-json", "run", "--max-iterations", "1")
	check("run", r.stdout, 1)
}
