package e2e

import (
	"strings"
	"testing"
)

// TestBadFlagGivesTheErrorResult: a flag cobra refuses before --json is
// parsed (a mistyped name, a value that is no number or duration) still
// gives the error result object docs/oneshot.md promises for every
// error, in json and stream-json however the format is asked for (and
// for ralph exec and ralph run), with exit 2 and the same one sentence
// in ralph's words on stderr, never Go's strconv wording; text mode gets
// that sentence and nothing on stdout.
func TestBadFlagGivesTheErrorResult(t *testing.T) {
	t.Parallel()
	rs := contractSchema(t)
	dir := t.TempDir()
	const verbos, turns = "unknown flag --verbos; did you mean --verbose?", `--max-turns wants a whole number, not "abc"`
	for _, c := range []struct {
		args   []string
		stream bool
		want   string
	}{
		{[]string{"--json", "--verbos", "hi"}, false, verbos},
		{[]string{"--json", "--max-turns", "abc", "hi"}, false, turns},
		{[]string{"--max-turns", "abc", "--json", "hi"}, false, turns},
		{[]string{"--output-format", "json", "--verbos", "hi"}, false, verbos},
		{[]string{"--output-format=json", "--max-turns=abc", "hi"}, false, turns},
		{[]string{"--output-format", "stream-json", "--verbos", "hi"}, true, verbos},
		{[]string{"--output-format=stream-json", "--idle-timeout", "soon", "hi"}, true, `--idle-timeout wants a duration such as 90s, 5m or 1h30m, not "soon"`},
		{[]string{"--json", "--max-turns"}, false, "--max-turns needs a value (--max-turns VALUE)"},
		{[]string{"exec", "--json", "--verbos", "hi"}, false, verbos},
		{[]string{"run", "--json", "--max-turns", "abc"}, false, turns},
	} {
		name := strings.Join(c.args, " ")
		r := ralph(t, dir, cleanEnv(t), nil, c.args...)
		if r.code != 2 {
			t.Errorf("ralph %s: exit %d, want 2\n%s", name, r.code, r.stderr)
			continue
		}
		if strings.TrimSpace(r.stdout) == "" {
			t.Errorf("ralph %s: nothing on stdout, want the error result object; stderr:\n%s", name, r.stderr)
			continue
		}
		lines := contractLines(t, rs, "ralph "+name, r.stdout, false)
		if c.stream && lines[0]["type"] != "init" {
			t.Errorf("ralph %s: the stream begins with %v, want its init line", name, lines[0])
		}
		res := lines[len(lines)-1]
		if res["type"] != "result" || res["is_error"] != true || res["subtype"] != "error_during_execution" || res["result"] != c.want || res["error"] != c.want {
			t.Errorf("ralph %s: result %v\nwant an error result saying %q", name, res, c.want)
		}
		if !strings.HasPrefix(r.stderr, "ralph: "+c.want+"\n") || strings.Contains(r.stderr, "strconv") {
			t.Errorf("ralph %s: stderr %q, want the one sentence %q", name, r.stderr, c.want)
		}
	}
	r := ralph(t, dir, cleanEnv(t), nil, "--max-turns", "abc", "hi")
	if r.code != 2 || r.stdout != "" || !strings.HasPrefix(r.stderr, "ralph: "+turns+"\n") || strings.Contains(r.stderr, "strconv") {
		t.Errorf("text mode: exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout and %q", r.code, r.stdout, r.stderr, turns)
	}
}
