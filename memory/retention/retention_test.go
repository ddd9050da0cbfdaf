package retention

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// makeSessions creates n sessions in root, the i-th (oldest first)
// created and last updated n-1-i days before now, all completed; it
// returns their ids, oldest first.
func makeSessions(t testing.TB, fs afero.Fs, root string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		age := time.Duration(n-1-i) * day
		ids[i] = fmt.Sprintf("%s-%012x", now.Add(-age).Format("20060102T150405Z"), i)
		s, err := memory.CreateSession(fs, root, ids[i], memory.State{Status: memory.StatusRunning, Mode: "run", StartedAt: now.Add(-age)})
		must(t, err)
		must(t, s.AppendEvent(map[string]string{"type": "session_started"}))
		must(t, s.SaveState(func(st *memory.State) { st.Status = memory.StatusCompleted }))
		must(t, s.Close())
		setUpdated(t, fs, root, ids[i], now.Add(-age))
	}
	return ids
}

// setUpdated backdates a session's record, which SaveState stamps now.
func setUpdated(t testing.TB, fs afero.Fs, root, id string, at time.Time) {
	t.Helper()
	path := filepath.Join(memory.SessionDir(root, id), "session.json")
	data, err := afero.ReadFile(fs, path)
	must(t, err)
	var m map[string]any
	must(t, json.Unmarshal(data, &m))
	m["updated_at"] = at
	data, err = json.Marshal(m)
	must(t, err)
	must(t, afero.WriteFile(fs, path, data, 0o644))
	st, err := memory.LoadSessionState(fs, root, id)
	must(t, err)
	if !st.UpdatedAt.Equal(at) {
		t.Fatalf("updated_at %v, want %v", st.UpdatedAt, at)
	}
}

func setStatus(t testing.TB, fs afero.Fs, root, id, status string) {
	t.Helper()
	s, _, err := memory.OpenSession(fs, root, id)
	must(t, err)
	st := s.State()
	must(t, s.SaveState(func(x *memory.State) { x.Status = status }))
	must(t, s.Close())
	setUpdated(t, fs, root, id, st.UpdatedAt)
}

// tree lists every file under root with its contents, to prove that a
// dry run changed nothing.
func tree(t testing.TB, fs afero.Fs, root string) string {
	t.Helper()
	var b strings.Builder
	must(t, afero.Walk(fs, root, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, err := afero.ReadFile(fs, path)
		fmt.Fprintf(&b, "%s %d %x\n", path, len(data), data)
		return err
	}))
	return b.String()
}

type fakeRefs struct {
	mu     sync.Mutex
	pruned []string
	fail   string
}

func (f *fakeRefs) Prune(_ context.Context, session, _ string) error {
	if session == f.fail {
		return errors.New("git broke")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pruned = append(f.pruned, session)
	return nil
}

func ids(ss []Session) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	sort.Strings(out)
	return out
}

func TestPruneFiftySessions(t *testing.T) {
	fs := afero.NewMemMapFs()
	const root = "/p"
	all := makeSessions(t, fs, root, 50) // all[49] is the newest, 0 days old
	runningOld := all[49-40]             // 40 days old, but its record says running
	setStatus(t, fs, root, runningOld, memory.StatusRunning)
	policy := Policy{OlderThan: 30 * day, Keep: 20}

	before := tree(t, fs, root)
	plan, err := MakePlan(fs, root, policy, now)
	must(t, err)
	if tree(t, fs, root) != before {
		t.Fatal("planning changed the sessions")
	}
	// Sessions 31 to 49 days old go (19), except the running one.
	var want []string
	for age := 31; age <= 49; age++ {
		if id := all[49-age]; id != runningOld {
			want = append(want, id)
		}
	}
	sort.Strings(want)
	if got := ids(plan.Prune); !slices.Equal(got, want) {
		t.Fatalf("plan prunes %d sessions:\n%v\nwant %d:\n%v", len(got), got, len(want), want)
	}
	if len(plan.Protected) != 1 || plan.Protected[0].ID != runningOld || plan.Protected[0].Why != WhyRunning {
		t.Errorf("protected: %+v", plan.Protected)
	}
	if plan.Kept != 32 || !strings.Contains(plan.Prune[0].Why, "older than 30d, beyond the newest 20") {
		t.Errorf("kept %d, why %q", plan.Kept, plan.Prune[0].Why)
	}

	refs := &fakeRefs{}
	removed, err := Remove(context.Background(), fs, root, ids(plan.Prune), refs)
	must(t, err)
	sort.Strings(removed)
	if !slices.Equal(removed, want) || !slices.Equal(refs.pruned, want) {
		t.Errorf("removed %v, refs pruned %v", removed, refs.pruned)
	}
	left, err := memory.ListSessions(fs, root)
	must(t, err)
	if len(left) != 32 || !slices.Contains(left, runningOld) || !slices.Contains(left, all[49]) {
		t.Errorf("%d sessions left: %v", len(left), left)
	}
	infos, err := afero.ReadDir(fs, filepath.Join(root, memory.SessionsDir))
	must(t, err)
	for _, fi := range infos {
		if strings.HasPrefix(fi.Name(), ".") {
			t.Errorf("left behind: %s", fi.Name())
		}
	}
	// Pruning again finds nothing more to do.
	plan, err = MakePlan(fs, root, policy, now)
	must(t, err)
	if len(plan.Prune) != 0 {
		t.Errorf("second plan prunes %v", ids(plan.Prune))
	}
}

// Every session is older than the policy allows: all go but the latest and
// the one a live ralph holds the lock for.
func TestPruneNeverTheLatestNorTheLockHolders(t *testing.T) {
	fs := afero.NewOsFs()
	root := t.TempDir()
	all := makeSessions(t, fs, root, 6)
	held := all[2]
	lock, err := memory.AcquireLock(fs, root, held, false)
	must(t, err)
	defer lock.Release()
	plan, err := MakePlan(fs, root, Policy{OlderThan: time.Minute}, now.Add(400*day))
	must(t, err)
	if got, want := ids(plan.Prune), []string{all[0], all[1], all[3], all[4]}; !slices.Equal(got, want) {
		t.Errorf("prune %v, want %v", got, want)
	}
	why := map[string]string{}
	for _, s := range plan.Protected {
		why[s.ID] = s.Why
	}
	if why[held] != WhyRunning || why[all[5]] != WhyLatest {
		t.Errorf("protected %v", why)
	}
	// Asked to remove them anyway (a plan made before they started), the
	// removal checks again.
	removed, err := Remove(context.Background(), fs, root, []string{all[5], held, all[0]}, nil)
	if !errors.Is(err, ErrProtected) || !slices.Equal(removed, []string{all[0]}) {
		t.Errorf("removed %v, err %v", removed, err)
	}
}

func TestRemoveKeepsASessionWhoseRefsCouldNotGo(t *testing.T) {
	fs := afero.NewMemMapFs()
	all := makeSessions(t, fs, "/p", 3)
	removed, err := Remove(context.Background(), fs, "/p", all[:2], &fakeRefs{fail: all[0]})
	if err == nil || !strings.Contains(err.Error(), "git broke") || !slices.Equal(removed, all[1:2]) {
		t.Errorf("removed %v, err %v", removed, err)
	}
	if _, err := fs.Stat(memory.SessionDir("/p", all[0])); err != nil {
		t.Errorf("the session whose refs stayed is gone: %v", err)
	}
}

func TestArchive(t *testing.T) {
	fs := afero.NewMemMapFs()
	all := makeSessions(t, fs, "/p", 3)
	reg := memory.OpenRegistry(fs, "/state")
	refs := &fakeRefs{}
	res, err := Archive(context.Background(), fs, "/p", all[0], refs, reg, now)
	must(t, err)
	// session.json and events.jsonl, with the transcript and messages
	// every session is created with (empty here: nothing ran).
	if res.Path != "/p/.ralph/archive/"+all[0]+".tar.gz" || res.Files != 4 {
		t.Errorf("result %+v", res)
	}
	if _, err := fs.Stat(memory.SessionDir("/p", all[0])); !os.IsNotExist(err) {
		t.Errorf("the archived session is still there: %v", err)
	}
	if !slices.Equal(refs.pruned, all[:1]) {
		t.Errorf("refs pruned: %v", refs.pruned)
	}
	data, err := afero.ReadFile(fs, res.Path)
	must(t, err)
	zr, err := gzip.NewReader(bytes.NewReader(data))
	must(t, err)
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		must(t, err)
		names = append(names, h.Name)
		if h.Name == all[0]+"/session.json" {
			body, _ := io.ReadAll(tr)
			if !strings.Contains(string(body), `"status":"completed"`) {
				t.Errorf("session.json in the archive: %s", body)
			}
		}
	}
	if !slices.Contains(names, all[0]+"/events.jsonl") || !slices.Contains(names, all[0]+"/session.json") {
		t.Errorf("archive holds %v", names)
	}
	arch, err := reg.Archives()
	must(t, err)
	if len(arch) != 1 || arch[0].SessionID != all[0] || arch[0].Archive != res.Path || arch[0].Status != memory.StatusCompleted || arch[0].Mode != "run" {
		t.Errorf("registry: %+v", arch)
	}
	if _, err := Archive(context.Background(), fs, "/p", all[2], refs, reg, now); !errors.Is(err, ErrProtected) {
		t.Errorf("archiving the latest: %v", err)
	}
	if _, err := Archive(context.Background(), fs, "/p", "nope", refs, reg, now); !errors.Is(err, memory.ErrNoSession) {
		t.Errorf("archiving an unknown session: %v", err)
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"30d": 30 * day, "2w": 14 * day, "12h": 12 * time.Hour, "1.5d": 36 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "30", "x d", "-3d", "soon"} {
		if _, err := ParseAge(in); !errors.Is(err, ErrBadAge) {
			t.Errorf("ParseAge(%q): %v, want ErrBadAge", in, err)
		}
	}
	if FormatAge(30*day) != "30d" || FormatAge(90*time.Minute) != "1h30m0s" {
		t.Error("FormatAge")
	}
}
