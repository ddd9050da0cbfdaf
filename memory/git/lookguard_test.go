package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lookGuard is the guard StartContext gives the first look's gits:
// quickGuard's, else the listed one.
func lookGuard(ctx context.Context, dir string, look *lookRepo) *guard {
	if g := quickGuard(look); g != nil {
		return g
	}
	return guardFor(ctx, dir)
}

// TestFirstLookListsNoConfigurationWithoutAFilter: the first look's guard
// (lookGuard) needs no listing of the configuration where no file can name
// a filter, and takes the listed guard where one could: a filter in the
// repository's config, a file it includes, or the person's global config.
// Not parallel: it sets the environment git reads, and the guards are
// cached process-wide.
func TestFirstLookListsNoConfigurationWithoutAFilter(t *testing.T) {
	trustEnv(t)
	ctx := context.Background()
	dir := repo(t)
	if g := lookGuard(ctx, dir, lookedRepo(dir)); g.entries != nil || cachedGuard(dir) != nil {
		t.Fatalf("a plain repository's first look listed the configuration: %+v", g)
	}
	listed := func(why string) {
		t.Helper()
		forgetGuards()
		if g := lookGuard(ctx, dir, lookedRepo(dir)); g.entries == nil {
			t.Fatalf("with %s, the first look did not take the listed guard", why)
		}
	}
	sh(t, dir, "git config filter.x.clean cat")
	listed("a filter in the repository's config")
	sh(t, dir, "git config --unset filter.x.clean && git config include.path ../other.config")
	listed("an include in the repository's config")
	sh(t, dir, "git config --unset include.path")
	forgetGuards()
	if g := lookGuard(ctx, dir, lookedRepo(dir)); g.entries != nil {
		t.Fatalf("the repository's config is plain again, yet the first look listed it")
	}
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte("[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	listed("a filter in the person's global config")
}

// TestFirstLookWithoutAListingRunsNoFsmonitor: the first look without a
// listing still runs no core.fsmonitor of the repository's config, nor a
// signature check of log.showSignature (gpg.program); its status and
// subjects are what git says. Not parallel: see above.
func TestFirstLookWithoutAListingRunsNoFsmonitor(t *testing.T) {
	trustEnv(t)
	dir := repo(t)
	tmp := t.TempDir()
	ran, gpg := filepath.Join(tmp, "ran"), filepath.Join(tmp, "gpg")
	write(t, gpg, "#!/bin/sh\necho gpg >> "+ran+"\nexit 1\n")
	if err := os.Chmod(gpg, 0o755); err != nil {
		t.Fatal(err)
	}
	// HEAD gets a signature (not a valid one: git log runs gpg.program
	// to check it all the same).
	sh(t, dir, `c=$(git cat-file commit HEAD | awk '{print} /^committer/ {print "gpgsig -----BEGIN PGP SIGNATURE-----"; print " x"; print " -----END PGP SIGNATURE-----"}' | git hash-object -t commit -w --stdin) && git update-ref HEAD $c`)
	sh(t, dir, "git config core.fsmonitor 'echo fsmonitor >> "+ran+"; false' && git config log.showSignature true && git config gpg.program "+gpg+" && echo changed >> README.md")
	if g := lookGuard(context.Background(), dir, lookedRepo(dir)); g.entries != nil {
		t.Fatal("the test needs the first look without a listing")
	}
	text, clean, err := Context(context.Background(), dir)
	if err != nil || clean || !strings.Contains(text, "README.md") {
		t.Fatalf("Context = %q, %v, %v", text, clean, err)
	}
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("the first look ran the repository's programs: %s", b)
	}
}

// TestFirstLookWithAListingDescribes: where the guard needs git's
// listing (a filter named in the person's global config, as Git LFS's
// is), StartContext leaves the listing and the status to a goroutine of
// its own; the description it waits for then has the work tree's
// changes. Not parallel: see above.
func TestFirstLookWithAListingDescribes(t *testing.T) {
	trustEnv(t)
	forgetGuards()
	dir := repo(t)
	global := filepath.Join(t.TempDir(), "gitconfig")
	write(t, global, "[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	sh(t, dir, "echo changed >> README.md")
	if quickGuard(lookedRepo(dir)) != nil {
		t.Fatal("the test needs the first look with a listing")
	}
	describe := StartContext(context.Background(), dir)
	text, clean, err := describe()
	if err != nil || clean || !strings.Contains(text, "Branch: ") || !strings.Contains(text, "README.md") {
		t.Fatalf("StartContext's description = %q, clean %v, %v", text, clean, err)
	}
}
