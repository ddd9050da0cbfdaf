package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// Two projects in the registry: ids are found in either, --last N takes
// the newest of this project or of all, oldest first.
func TestSelectSessionsAcrossProjects(t *testing.T) {
	home := t.TempDir()
	t.Setenv("RALPH_HOME", filepath.Join(home, "state"))
	fs := afero.NewOsFs()
	a, b := filepath.Join(home, "a"), filepath.Join(home, "b")
	reg := memory.OpenRegistry(fs, memory.RegistryDir(func(k string) string { return filepath.Join(home, "state") }))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(root string, hour int, suffix string) string {
		id := at.Add(time.Duration(hour)*time.Hour).Format("20060102T150405Z") + "-" + suffix
		s, err := memory.CreateSession(fs, root, id, memory.State{Status: memory.StatusCompleted, Mode: "oneshot"})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if err := reg.Update(memory.RegistryEntry{Root: root, SessionID: id, Status: memory.StatusCompleted}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	a1, b1, a2, b2 := mk(a, 1, "aaaa11111111"), mk(b, 2, "bbbb11111111"), mk(a, 3, "aaaa22222222"), mk(b, 4, "bbbb22222222")
	r := Records{Fs: fs, Root: a}
	got := func(refs []SessionRef, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, x := range refs {
			s = append(s, filepath.Base(x.Root)+":"+x.ID)
		}
		return strings.Join(s, " ")
	}
	if g := got(r.SelectSessions([]string{"bbbb1", "aaaa2"}, 0, false)); g != "b:"+b1+" a:"+a2 {
		t.Errorf("ids: %s", g)
	}
	if g := got(r.SelectSessions(nil, 5, false)); g != "a:"+a1+" a:"+a2 {
		t.Errorf("--last 5: %s", g)
	}
	if g := got(r.SelectSessions(nil, 3, true)); g != "b:"+b1+" a:"+a2+" b:"+b2 {
		t.Errorf("--last 3 --all-projects: %s", g)
	}
	if g := got(r.SelectSessions(nil, 0, false)); g != "a:"+a2 {
		t.Errorf("default: %s", g)
	}
	// "2222" is in both projects' newest sessions: a2 here wins, but
	// "bbbb" alone is ambiguous in b.
	if g := got(r.SelectSessions([]string{"22222"}, 0, false)); g != "a:"+a2 {
		t.Errorf("this project first: %s", g)
	}
	if _, err := r.SelectSessions([]string{"bbbb"}, 0, false); !errors.Is(err, ErrBadSelection) || !strings.Contains(err.Error(), `"bbbb" matches 2 sessions in other projects`) {
		t.Errorf("ambiguous: %v", err)
	}
	var out bytes.Buffer
	r.Out, r.JSON = &out, true
	refs, _ := r.SelectSessions(nil, 3, true)
	if err := r.Compare(refs); err != nil {
		t.Fatal(err)
	}
	var c struct {
		Sessions []struct {
			Project   string `json:"project"`
			SessionID string `json:"session_id"`
		}
		Metrics []struct {
			Name   string
			Values []*float64
		}
		Deltas any `json:"deltas"`
	}
	if err := json.Unmarshal(out.Bytes(), &c); err != nil || len(c.Sessions) != 3 || c.Sessions[0].Project != b || c.Deltas != nil || len(c.Metrics[0].Values) != 3 {
		t.Errorf("compare of three: %v %s", err, out.String())
	}
}
