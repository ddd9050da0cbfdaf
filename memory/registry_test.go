package memory

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"
)

func TestRegistryDir(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		getenv func(string) string
		want   string
	}{
		{env("RALPH_HOME", "/r", "XDG_STATE_HOME", "/x", "HOME", "/h"), "/r"},
		{env("XDG_STATE_HOME", "/x", "HOME", "/h"), "/x/ralph"},
		{env("XDG_STATE_HOME", "relative/state", "HOME", "/h"), "/h/.local/state/ralph"},
		{env("HOME", "/h"), "/h/.local/state/ralph"},
	} {
		if got := RegistryDir(c.getenv); got != c.want {
			t.Errorf("RegistryDir = %q, want %q", got, c.want)
		}
	}
	if got := RegistryDir(env()); got == "" || !filepath.IsAbs(got) {
		t.Errorf("RegistryDir without HOME = %q, want some absolute directory", got)
	}
}

// projectDirs makes n project roots that exist.
func projectDirs(t *testing.T, n int) []string {
	t.Helper()
	base := t.TempDir()
	roots := make([]string, n)
	for i := range roots {
		roots[i] = filepath.Join(base, fmt.Sprintf("p%02d", i))
		if err := os.Mkdir(roots[i], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return roots
}

func listRoots(t *testing.T, r *Registry) []string {
	t.Helper()
	es, err := r.List()
	if err != nil {
		t.Fatal(err)
	}
	var roots []string
	for _, e := range es {
		roots = append(roots, e.Root)
	}
	return roots
}

func mustUpdate(t *testing.T, r *Registry, e RegistryEntry) {
	t.Helper()
	if err := r.Update(e); err != nil {
		t.Fatal(err)
	}
}

func TestRegistryUpsertAndOrder(t *testing.T) {
	fs, dir := afero.NewOsFs(), filepath.Join(t.TempDir(), "state")
	r := OpenRegistry(fs, dir)
	if es, err := r.List(); err != nil || len(es) != 0 {
		t.Fatalf("empty registry: %v, %v", es, err)
	}
	p := projectDirs(t, 3)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, root := range p {
		mustUpdate(t, r, RegistryEntry{Root: root, SessionID: fmt.Sprint("s", i), Status: StatusRunning, UpdatedAt: t0.Add(time.Duration(i) * time.Minute)})
	}
	if got, want := listRoots(t, r), []string{p[2], p[1], p[0]}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("order = %v, want newest first %v", got, want)
	}
	// An unclean path names the same project, and its entry moves up.
	mustUpdate(t, r, RegistryEntry{Root: p[0] + "/./", SessionID: "s9", Status: StatusCompleted, Mode: "loop", UpdatedAt: t0.Add(time.Hour)})
	es, err := r.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 || es[0].Root != p[0] || es[0].SessionID != "s9" || es[0].Status != StatusCompleted || es[0].Mode != "loop" {
		t.Fatalf("after upsert: %+v", es)
	}
	b, err := os.ReadFile(filepath.Join(dir, "projects.json"))
	if err != nil || !strings.HasPrefix(string(b), "[\n  {") {
		t.Fatalf("projects.json is not an indented array: %v\n%s", err, b)
	}

	// A relative root is stored absolute; a zero time means now.
	wd, _ := os.Getwd()
	mustUpdate(t, r, RegistryEntry{Root: ".", SessionID: "s10", Status: StatusRunning})
	es, _ = r.List()
	if es[0].Root != wd || time.Since(es[0].UpdatedAt) > time.Minute {
		t.Fatalf("relative root recorded as %+v, want %s and now", es[0], wd)
	}
}

func TestRegistryDropsVanishedRoots(t *testing.T) {
	fs, dir := afero.NewOsFs(), t.TempDir()
	r := OpenRegistry(fs, dir)
	p := projectDirs(t, 3)
	for _, root := range p[:2] {
		mustUpdate(t, r, RegistryEntry{Root: root, SessionID: "s", Status: StatusRunning})
	}
	if err := os.Remove(p[1]); err != nil {
		t.Fatal(err)
	}
	if got := listRoots(t, r); len(got) != 1 || got[0] != p[0] {
		t.Fatalf("List = %v, want only %s", got, p[0])
	}
	mustUpdate(t, r, RegistryEntry{Root: p[2], SessionID: "s", Status: StatusRunning})
	b, _ := os.ReadFile(filepath.Join(dir, "projects.json"))
	if strings.Contains(string(b), p[1]) || !strings.Contains(string(b), p[2]) {
		t.Fatalf("Update kept a vanished root or lost the new one:\n%s", b)
	}
}

func TestRegistryCorruptFileSetAside(t *testing.T) {
	fs, dir := afero.NewOsFs(), t.TempDir()
	r := OpenRegistry(fs, dir)
	path := filepath.Join(dir, "projects.json")
	if err := os.WriteFile(path, []byte(`[{"root": "/x", `), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.List(); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("List of a corrupt registry: %v; want an error naming %s", err, path)
	}
	p := projectDirs(t, 1)
	mustUpdate(t, r, RegistryEntry{Root: p[0], SessionID: "s", Status: StatusRunning})
	if got := listRoots(t, r); len(got) != 1 || got[0] != p[0] {
		t.Fatalf("List after recovery = %v", got)
	}
	aside, _ := filepath.Glob(path + ".corrupt-*")
	if len(aside) != 1 {
		t.Fatalf("corrupt file set aside as %v", aside)
	}
	if b, _ := os.ReadFile(aside[0]); string(b) != `[{"root": "/x", ` {
		t.Fatalf("set-aside file holds %q", b)
	}
}

// TestRegistryMemMapFs runs concurrent updates through the O_EXCL lock
// used where files have no descriptor.
func TestRegistryMemMapFs(t *testing.T) {
	for round := range 5 {
		fs := afero.NewMemMapFs()
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for i := range 20 {
			root := fmt.Sprintf("/projects/p%02d", i)
			if err := fs.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				errs <- OpenRegistry(fs, "/state").Update(RegistryEntry{Root: root, SessionID: "s", Status: StatusRunning})
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := listRoots(t, OpenRegistry(fs, "/state")); len(got) != 20 {
			t.Fatalf("round %d: %d entries after 20 concurrent updates: %v", round, len(got), got)
		}
		if ok, _ := afero.Exists(fs, "/state/registry.lock.excl"); ok {
			t.Fatal("registry lock left behind")
		}
	}
}

// TestRegistryTwentyProcesses: 20 ralphs finishing at once must all be
// listed; a lost update would drop one.
func TestRegistryTwentyProcesses(t *testing.T) {
	dir := t.TempDir()
	roots := projectDirs(t, 20)
	hs := make([]*helper, len(roots))
	for i, root := range roots {
		hs[i] = startHelper(t, "registry", root, "RALPH_REG_DIR="+dir)
	}
	for _, h := range hs {
		if l := h.line(t); l != "ready" {
			t.Fatalf("helper said %q", l)
		}
	}
	for _, h := range hs {
		_ = h.stdin.Close()
	}
	for _, h := range hs {
		if err := h.cmd.Wait(); err != nil {
			t.Fatalf("helper failed: %v: %s", err, h.stderr.String())
		}
	}
	got := listRoots(t, OpenRegistry(afero.NewOsFs(), dir))
	seen := map[string]bool{}
	for _, r := range got {
		seen[r] = true
	}
	for _, r := range roots {
		if !seen[r] {
			t.Errorf("entry for %s lost", r)
		}
	}
	if len(got) != 20 {
		t.Fatalf("%d entries, want 20", len(got))
	}
}
