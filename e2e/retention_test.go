package e2e

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// oldSessions makes n sessions in the project, the i-th (oldest first)
// last updated n-1-i days ago, each with a git checkpoint ref; it returns
// their ids, oldest first.
func oldSessions(t *testing.T, dir string, n int) []string {
	t.Helper()
	fsys := afero.NewOsFs()
	now := time.Now().UTC()
	ids := make([]string, n)
	var refs strings.Builder
	for i := range ids {
		// An hour younger than whole days, so that a session of 30 days is
		// still within --older-than 30d however long the test takes; the
		// newest a minute old, so that a session started now is newer.
		days := n - 1 - i
		at := now.Add(-time.Duration(days)*24*time.Hour + time.Hour)
		if days == 0 {
			at = now.Add(-time.Minute)
		}
		ids[i] = fmt.Sprintf("%s-%012x", at.Format("20060102T150405Z"), i)
		s, err := memory.CreateSession(fsys, dir, ids[i], memory.State{Status: memory.StatusCompleted, Mode: "oneshot", StartedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AppendEvent(map[string]any{"type": "session_started", "time": at}); err != nil {
			t.Fatal(err)
		}
		s.Close()
		backdate(t, dir, ids[i], at)
		fmt.Fprintf(&refs, "create refs/ralph/%s/turn-1 HEAD\n", ids[i])
	}
	shIn(t, dir, "git update-ref --stdin <<'EOF'\n"+refs.String()+"EOF")
	return ids
}

// backdate sets a session's last update, which every save stamps now.
func backdate(t *testing.T, dir, id string, at time.Time) {
	t.Helper()
	path := filepath.Join(memory.SessionDir(dir, id), "session.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["updated_at"] = at
	data, _ = json.Marshal(m)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fingerprint is every file under .ralph with its contents' hash, and
// every ref: what a dry run must leave exactly as it was.
func fingerprint(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(filepath.Join(dir, ".ralph"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		fmt.Fprintf(&b, "%s %x\n", path, sha256.Sum256(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String() + shIn(t, dir, "git for-each-ref --format='%(refname)'")
}

func refsOf(t *testing.T, dir, id string) string {
	return strings.TrimSpace(shIn(t, dir, "git for-each-ref --format='%(refname)' refs/ralph/"+id+"/"))
}

// TestSessionsPruneAndArchive: of 50 sessions, one a day, prune with
// --older-than 30d --keep 20 deletes those 31 days old and older, with
// their git checkpoint refs, but not the one a live ralph holds; a dry
// run changes nothing; archive packs one away and the registry lists it;
// the latest and the running session cannot be archived.
func TestSessionsPruneAndArchive(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	env := cleanEnv(t)
	ids := oldSessions(t, dir, 50) // ids[49] is the newest, today's
	age := func(days int) string { return ids[49-days] }
	running := age(40)
	lock, err := memory.AcquireLock(afero.NewOsFs(), dir, running, false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Release() }()

	before := fingerprint(t, dir)
	dry := ralph(t, dir, env, nil, "sessions", "prune", "--older-than", "30d", "--keep", "20", "--dry-run", "--json")
	if dry.code != 0 {
		t.Fatalf("dry run: exit %d\n%s", dry.code, dry.stderr)
	}
	if fingerprint(t, dir) != before {
		t.Fatal("--dry-run changed the sessions or the refs")
	}
	var plan struct {
		DryRun    bool `json:"dry_run"`
		Pruned    []struct{ ID string }
		Protected []struct{ ID, Why string }
		Kept      int
	}
	if err := json.Unmarshal([]byte(dry.stdout), &plan); err != nil {
		t.Fatalf("%v\n%s", err, dry.stdout)
	}
	var want []string
	for days := 31; days <= 49; days++ {
		if age(days) != running {
			want = append(want, age(days))
		}
	}
	slices.Sort(want)
	var got []string
	for _, s := range plan.Pruned {
		got = append(got, s.ID)
	}
	slices.Sort(got)
	if !plan.DryRun || !slices.Equal(got, want) || len(plan.Protected) != 1 || plan.Protected[0].ID != running || plan.Kept != 32 {
		t.Fatalf("dry run plan: %+v\nwant to prune %v", plan, want)
	}

	r := ralph(t, dir, env, nil, "sessions", "prune", "--older-than", "30d", "--keep", "20")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "pruned 18 sessions (--older-than 30d --keep 20); 32 kept\n") ||
		!strings.Contains(r.stdout, "kept "+running+": it is the running session") {
		t.Fatalf("prune: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	left, err := memory.ListSessions(afero.NewOsFs(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		gone := slices.Contains(want, id)
		if slices.Contains(left, id) == gone {
			t.Errorf("session %s: present %v, want %v", id, !gone, !gone)
		}
		if refs := refsOf(t, dir, id); (refs == "") != gone {
			t.Errorf("session %s: refs %q after pruning (pruned %v)", id, refs, gone)
		}
	}

	// Archive a kept session of 25 days ago.
	old := age(25)
	a := ralph(t, dir, env, nil, "sessions", "archive", old)
	tarball := filepath.Join(dir, ".ralph", "archive", old+".tar.gz")
	if a.code != 0 || !strings.Contains(a.stdout, "archived "+old+" to "+tarball) {
		t.Fatalf("archive: exit %d\n%s\n%s", a.code, a.stdout, a.stderr)
	}
	if _, err := os.Stat(tarball); err != nil {
		t.Errorf("no archive: %v", err)
	}
	if _, err := os.Stat(memory.SessionDir(dir, old)); !os.IsNotExist(err) || refsOf(t, dir, old) != "" {
		t.Errorf("the archived session or its refs stayed: %v %q", err, refsOf(t, dir, old))
	}
	list := ralph(t, dir, env, nil, "sessions", "--json", "--project", dir)
	if !strings.Contains(list.stdout, `"session_id": "`+old+`",`+"\n"+`      "status": "archived"`) {
		t.Errorf("sessions does not list the archive:\n%s", list.stdout)
	}
	for _, id := range []string{ids[49], running} {
		if r := ralph(t, dir, env, nil, "sessions", "archive", id); r.code != 2 || !strings.Contains(r.stderr, "only older sessions are archived") {
			t.Errorf("archiving %s: exit %d, %s", id, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(memory.SessionDir(dir, ids[49])); err != nil {
		t.Errorf("the latest session is gone: %v", err)
	}
	if r := ralph(t, dir, env, nil, "sessions", "prune"); r.code != 2 || !strings.Contains(r.stderr, "nothing to prune by") {
		t.Errorf("prune without a policy: exit %d, %s", r.code, r.stderr)
	}
	if r := ralph(t, dir, env, nil, "sessions", "prune", "--older-than", "soon"); r.code != 2 || !strings.Contains(r.stderr, `"soon" is not an age`) {
		t.Errorf("prune --older-than soon: exit %d, %s", r.code, r.stderr)
	}
}

// TestRetentionPrunesWhenASessionStarts: with [retention] keep = 5 in the
// config, a new session leaves the five newest sessions (itself one of
// them), the git refs of the others gone, and says so in its decisions.
func TestRetentionPrunesWhenASessionStarts(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	env := cleanEnv(t)
	ids := oldSessions(t, dir, 12)
	if err := os.WriteFile(filepath.Join(dir, ".ralph", "config.toml"), []byte("[retention]\nkeep = 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := inlineServer(t, `{"responses":[{"text":"hello"}]}`)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "say hello")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	newID, _ := resultLine(t, r.stdout)["session_id"].(string)
	left, err := memory.ListSessions(afero.NewOsFs(), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(ids[8:]), newID)
	if !slices.Equal(left, want) {
		t.Fatalf("sessions left %v, want %v", left, want)
	}
	for _, id := range ids[:8] {
		if refs := refsOf(t, dir, id); refs != "" {
			t.Errorf("pruned session %s kept its refs %q", id, refs)
		}
	}
	decisions, _ := os.ReadFile(memory.LogPath(dir, newID, memory.DecisionsLog))
	if !strings.Contains(string(decisions), `"kind":"retention"`) || !strings.Contains(string(decisions), "pruned 8 old sessions by the retention policy (--keep 5)") {
		t.Errorf("decisions.jsonl:\n%s", decisions)
	}
}
