package beads

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorded is a file of real bd 1.3.0 output, under testdata/beads.
func recorded(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "beads", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestParseBothShapes: bd's raw array (1.x) and the {schema_version,
// data} envelope (BD_JSON_ENVELOPE=1, bd 2.0's default) read the same,
// from real bd output of the same database.
func TestParseBothShapes(t *testing.T) {
	for _, pair := range [][2]string{{"list.json", "list.envelope.json"}, {"ready.json", "ready.envelope.json"}, {"show.json", "show.envelope.json"}} {
		raw, err := Parse(recorded(t, pair[0]))
		if err != nil {
			t.Fatalf("%s: %v", pair[0], err)
		}
		env, err := Parse(recorded(t, pair[1]))
		if err != nil {
			t.Fatalf("%s: %v", pair[1], err)
		}
		if len(raw) == 0 || len(raw) != len(env) {
			t.Fatalf("%s: %d issues, %s: %d", pair[0], len(raw), pair[1], len(env))
		}
		for i := range raw {
			if raw[i].ID != env[i].ID || raw[i].Title != env[i].Title || raw[i].Status != env[i].Status {
				t.Errorf("%s/%s issue %d: %+v vs %+v", pair[0], pair[1], i, raw[i], env[i])
			}
		}
	}
}

// TestParseRecordedList: bd list --json of an epic of three tasks, one
// depending on another, closed and claimed ones among them.
func TestParseRecordedList(t *testing.T) {
	is, err := Parse(recorded(t, "list.json"))
	if err != nil {
		t.Fatal(err)
	}
	var deps, epics int
	for _, i := range is {
		if i.IssueType == TypeEpic {
			epics++
		}
		for _, d := range i.Dependencies {
			if d.Blocks() && d.Target() != "" {
				deps++
			}
		}
	}
	if deps == 0 {
		t.Errorf("no blocking dependency read from %+v", is)
	}
}

// TestDecodeErrors: bd's JSON error object, raw or in the envelope, is
// an error with bd's words; a database that is not there is
// ErrNoDatabase.
func TestDecodeErrors(t *testing.T) {
	for _, out := range []string{
		`{"error": "no active beads workspace found", "hint": "run 'bd init'", "schema_version": 1}`,
		`{"schema_version": 1, "data": {"error": "no active beads workspace found"}}`,
	} {
		_, err := decode([]byte(out))
		var be *bdError
		if !errors.As(err, &be) || !strings.Contains(be.msg, "no active beads workspace") || !noDatabase(be.msg) {
			t.Errorf("%s: %v", out, err)
		}
	}
	if _, err := decode([]byte("")); err == nil {
		t.Error("empty output decoded")
	}
	if _, err := decode([]byte("Warning: not JSON")); err == nil {
		t.Error("text decoded")
	}
	// An object with a data key that is no envelope is an issue.
	is, err := Parse([]byte(`{"id": "rt-1", "title": "t", "data": 3}`))
	if err != nil || len(is) != 1 || is[0].ID != "rt-1" {
		t.Errorf("%v %v", is, err)
	}
}

// TestMissingBd: no bd on PATH is ErrMissing, before anything runs.
func TestMissingBd(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	c := &Client{Dir: t.TempDir()}
	if _, err := c.List(t.Context(), ""); !errors.Is(err, ErrMissing) {
		t.Fatalf("%v", err)
	}
}

// TestStderrOfRecordedFailures: what real bd printed on stderr when it
// failed reads as one sentence: a claim another actor holds (bd update
// prints words, then a JSON object), and no database.
func TestStderrOfRecordedFailures(t *testing.T) {
	claim := stderrMessage(string(recorded(t, "claim-conflict.stderr")))
	if claim != "Error updating rt-xqf.1: issue already claimed by ralph:/tmp/beads-record" {
		t.Errorf("claim conflict: %q", claim)
	}
	stderr := string(recorded(t, "no-database.stderr"))
	if msg := stderrMessage(stderr); msg != "no beads database found" || !noDatabase(msg) {
		t.Errorf("no database: %q", msg)
	}
}
