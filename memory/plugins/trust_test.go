package plugins

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// trustLayout is a home, a shared directory standing for $TMPDIR (the
// package's ModelMayWrite is pointed at it for the test) and a store.
func trustLayout(t *testing.T) (home, shared, store string) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, shared = filepath.Join(base, "home"), filepath.Join(base, "tmp")
	store = filepath.Join(home, ".local", "share", "ralph", "plugins")
	for _, d := range []string{home, shared, store} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	was := ModelMayWrite
	ModelMayWrite = func(p string) bool { return Within(p, shared) }
	t.Cleanup(func() { ModelMayWrite = was })
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "")
	return home, shared, store
}

func mkdirs(t *testing.T, dirs ...string) {
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPlaceByThePluginsOwnProject: a directory in a git work tree or
// under a .ralph/ is the model's wherever ralph runs; one in the shared
// directory is the model's; one in the home outside every project is the
// person's, and the home itself is never taken for a project.
func TestPlaceByThePluginsOwnProject(t *testing.T) {
	home, shared, _ := trustLayout(t)
	projA := filepath.Join(home, "src", "projA")
	ralphed := filepath.Join(home, "src", "ralphed")
	mine := filepath.Join(home, "plugins", "mine")
	mkdirs(t, filepath.Join(projA, ".git"), filepath.Join(projA, "tools", "plug"), filepath.Join(ralphed, ".ralph"), filepath.Join(ralphed, "p"), mine, filepath.Join(shared, "p"))
	// A dotfiles repository in the home makes no project of the home.
	mkdirs(t, filepath.Join(home, ".git"))
	cases := []struct {
		dir, where string
		persons    bool
	}{
		{filepath.Join(projA, "tools", "plug"), "inside the project " + projA, false},
		{filepath.Join(ralphed, "p"), "inside the project " + ralphed, false},
		{filepath.Join(shared, "p"), "in a temporary directory", false},
		{mine, "", true},
	}
	for _, c := range cases {
		got := Place(c.dir)
		if got.Persons != c.persons || got.Where != c.where || !c.persons && !strings.HasPrefix(got.Why, "it lies "+c.where) {
			t.Errorf("Place(%s) = %+v, want persons=%v where=%q", c.dir, got, c.persons, c.where)
		}
		if w := Whose(c.dir, nil, ""); w != got {
			t.Errorf("Whose(%s, nil) = %+v, want Place's %+v", c.dir, w, got)
		}
	}
}

// TestWhoseMarketplaces: a plugin is the person's only when its
// marketplace is: one cloned by the person into the store, or a
// directory of theirs; one in a project or the shared directory makes
// every plugin it lists the model's, even one ralph cloned.
func TestWhoseMarketplaces(t *testing.T) {
	home, shared, store := trustLayout(t)
	proj := filepath.Join(home, "src", "proj")
	mkdirs(t, filepath.Join(proj, ".git"), filepath.Join(proj, "market", "p"), filepath.Join(home, "markets", "m", "p"),
		filepath.Join(store, "marketplaces", "gh", ".git"), filepath.Join(store, "marketplaces", "gh", "p"), filepath.Join(store, "sources", "gh", "cl", ".git"),
		filepath.Join(shared, "mk", "p"))
	cloned := MarketRecord{Name: "gh", Source: "o/r", URL: "https://github.com/o/r.git", Dir: filepath.Join(store, "marketplaces", "gh")}
	mine := MarketRecord{Name: "m", Source: "~/markets/m", Dir: filepath.Join(home, "markets", "m")}
	inProj := MarketRecord{Name: "mk", Source: "./market", Dir: filepath.Join(proj, "market")}
	inTmp := MarketRecord{Name: "tk", Source: "/tmp/mk", Dir: filepath.Join(shared, "mk")}
	// A record naming a URL whose directory is not ralph's clone is judged by its place.
	forged := MarketRecord{Name: "fg", URL: "https://x/y.git", Dir: filepath.Join(proj, "market")}
	for _, c := range []struct {
		m       MarketRecord
		persons bool
	}{{cloned, true}, {mine, true}, {inProj, false}, {inTmp, false}, {forged, false}} {
		if got := MarketTrust(c.m, store); got.Persons != c.persons {
			t.Errorf("MarketTrust(%s) = %+v, want persons=%v", c.m.Name, got, c.persons)
		}
	}
	for _, c := range []struct {
		dir     string
		m       MarketRecord
		persons bool
	}{
		{filepath.Join(store, "marketplaces", "gh", "p"), cloned, true},
		{filepath.Join(store, "sources", "gh", "cl"), cloned, true},
		{filepath.Join(home, "markets", "m", "p"), mine, true},
		{filepath.Join(proj, "market", "p"), inProj, false},
		// What ralph cloned for a project's marketplace (as an older ralph did) stays the model's.
		{filepath.Join(store, "sources", "mk", "cl"), inProj, false},
		{filepath.Join(shared, "mk", "p"), inTmp, false},
	} {
		got := Whose(c.dir, &c.m, store)
		if got.Persons != c.persons {
			t.Errorf("Whose(%s, %s) = %+v, want persons=%v", c.dir, c.m.Name, got, c.persons)
		}
		if !c.persons && !strings.Contains(got.Why, "marketplace "+c.m.Name) {
			t.Errorf("Whose(%s, %s).Why = %q, names no marketplace", c.dir, c.m.Name, got.Why)
		}
	}
}

// TestModelMarketMayNotClone: a marketplace inside a project that names
// a url source is refused before git runs, with one sentence saying why,
// and nothing is left in the store; a plugin of the person's marketplace
// whose repository holds no plugin leaves no clone behind either.
func TestModelMarketMayNotClone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	home, _, store := trustLayout(t)
	secret := filepath.Join(home, "secret")
	write(t, secret, map[string]string{"bank.gpg": "TOPSECRET"})
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "s"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = secret
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	proj := filepath.Join(home, "src", "proj")
	mkdirs(t, filepath.Join(proj, ".git"))
	listing := `{"name":"mk","plugins":[{"name":"pw","source":{"source":"url","url":"file://` + secret + `"}}]}`
	write(t, filepath.Join(proj, "market"), map[string]string{".claude-plugin/marketplace.json": listing})
	write(t, filepath.Join(home, "markets", "mine"), map[string]string{".claude-plugin/marketplace.json": strings.Replace(listing, `"mk"`, `"mine"`, 1)})
	cfg := t.TempDir()
	a := MarketAdder{Person: rootfs.Person(), UserConfigDir: cfg, Store: store, Now: time.Now}
	for _, dir := range []string{filepath.Join(proj, "market"), filepath.Join(home, "markets", "mine")} {
		if _, _, err := a.AddMarket(context.Background(), dir, home); err != nil {
			t.Fatal(err)
		}
	}
	_, err := a.AddFromMarket(context.Background(), "pw", "mk")
	if !errors.Is(err, ErrModelMarket) || !strings.Contains(err.Error(), "a marketplace inside the project "+proj+" may not make ralph clone") {
		t.Errorf("AddFromMarket(pw@mk) = %v, want ErrModelMarket", err)
	}
	if _, err := a.AddFromMarket(context.Background(), "pw", "mine"); !errors.Is(err, ErrNotPlugin) {
		t.Errorf("AddFromMarket(pw@mine) = %v, want ErrNotPlugin", err)
	}
	var left []string
	_ = filepath.Walk(store, func(p string, _ os.FileInfo, _ error) error {
		if filepath.Base(p) == "bank.gpg" {
			left = append(left, p)
		}
		return nil
	})
	if len(left) != 0 {
		t.Errorf("the secret repository was left in the store: %v", left)
	}
}
