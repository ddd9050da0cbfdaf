package git

import (
	"context"
	"fmt"
	"strings"
)

// statusLines bounds how much of `git status --short` the system prompt
// carries: a tree with thousands of changes would otherwise fill the
// model's context with file names.
const statusLines = 50

// recentCommits is how many commit subjects the system prompt carries.
const recentCommits = 10

// Context describes where the repository stands, for the system prompt:
// the branch and how it compares with its upstream, the changes in the
// work tree (bounded), and the latest commit subjects. It runs in dir,
// any directory of the work tree, so that it needs nothing Open finds
// and can run beside it: this is on the way to the first request, and
// its two git commands run side by side too, with no listing of the
// configuration before them where none is needed (quickGuard). clean reports a work tree
// and index that match HEAD, with no untracked files. exclude are paths
// (relative to dir) left out of the status: ralph's own state directory.
func Context(ctx context.Context, dir string, exclude ...string) (text string, clean bool, err error) {
	return StartContext(ctx, dir, exclude...)()
}

// StartContext is Context in two halves: the look at the repository's
// files and the start of its git processes happen on the caller's
// goroutine, and the function it returns waits for them and describes
// the repository as Context does. The caller is on the way to a
// one-shot's first request, which waits for the description: started
// from a goroutine of its own, the status waited up to 2 ms for a
// processor on a 2-core machine while the caller ran on the other, and
// git's own 2 ms began only then. Where the guard needs git's listing of
// the configuration first (quickGuard: a configuration that mentions a
// filter, as Git LFS's global one does, or includes a file), the whole
// look runs on a goroutine of its own instead, as the listing is a git
// process the caller would otherwise wait for.
func StartContext(ctx context.Context, dir string, exclude ...string) func() (text string, clean bool, err error) {
	// Outside any work tree both commands can only fail; starting them
	// cost milliseconds of every one-shot in a scratch directory.
	if !mayBeInWorkTree(dir) {
		return func() (string, bool, error) { return "", false, ErrNoRepo }
	}
	look := lookedRepo(dir)
	if g := quickGuard(look); g != nil {
		st, err := startStatus(ctx, dir, g, exclude)
		if err != nil {
			return func() (string, bool, error) { return "", false, err }
		}
		return func() (string, bool, error) { return describe(ctx, dir, look, g, st) }
	}
	var (
		text  string
		clean bool
		err   error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		g := guardFor(ctx, dir)
		st, serr := startStatus(ctx, dir, g, exclude)
		if serr != nil {
			err = serr
			return
		}
		text, clean, err = describe(ctx, dir, look, g, st)
	}()
	return func() (string, bool, error) {
		<-done
		return text, clean, err
	}
}

// startStatus starts the look's git status: the whole work tree (":/"),
// whatever dir is, with paths relative to its top, but exclude.
func startStatus(ctx context.Context, dir string, g *guard, exclude []string) (*proc, error) {
	args := []string{"-c", "status.relativePaths=false", "status", "--short", "--branch", "--untracked-files=normal", "--ignore-submodules=dirty", "--", ":/"}
	for _, x := range exclude {
		args = append(args, ":(exclude,literal)"+x)
	}
	return startGuarded(ctx, Timeout, g, dir, []string{"GIT_OPTIONAL_LOCKS=0"}, args...)
}

// describe is the second half of StartContext: the commit subjects, read
// while the status runs, and the description once it has ended.
func describe(ctx context.Context, dir string, look *lookRepo, g *guard, st *proc) (text string, clean bool, err error) {
	// The subjects are read from the repository's files where they can
	// be (nativelog.go), and git lists them otherwise.
	log, native := []byte(nil), false
	if look != nil {
		log, native = nativeSubjects(look.gitDir, look.common, recentCommits)
	}
	if !native {
		// --no-show-signature: log.showSignature would run gpg.program
		// (or gpg.ssh.program) on every commit, and the subjects need
		// no signature.
		lg, err := startGuarded(ctx, Timeout, g, dir, nil, "log", fmt.Sprintf("-%d", recentCommits), "--no-show-signature", "--format=%s")
		if err == nil {
			// A repository without commits has no log; that is not
			// an error.
			log, _ = lg.finish(nil)
		}
	}
	status, err := st.finish(nil)
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	lines := strings.Split(strings.TrimRight(string(status), "\n"), "\n")
	branch := strings.TrimPrefix(lines[0], "## ")
	fmt.Fprintf(&b, "Branch: %s\n", branch)
	changes := lines[1:]
	switch {
	case len(changes) == 0 || (len(changes) == 1 && changes[0] == ""):
		clean = true
		b.WriteString("Work tree: clean\n")
	default:
		fmt.Fprintf(&b, "Work tree changes (git status --short, %d):\n", len(changes))
		for i, l := range changes {
			if i == statusLines {
				fmt.Fprintf(&b, "… and %d more\n", len(changes)-statusLines)
				break
			}
			b.WriteString(l + "\n")
		}
	}
	if subjects := strings.TrimRight(string(log), "\n"); subjects != "" {
		b.WriteString("Recent commits (newest first):\n")
		for _, s := range strings.Split(subjects, "\n") {
			b.WriteString("- " + s + "\n")
		}
	}
	return b.String(), clean, nil
}

// quickGuard is the guard of the first look's two gits (status and log)
// where it can be decided without git's listing of the configuration,
// so that the look's gits start at once: the listing ran before them, in
// series, on the way to every first request in a repository. It is nil
// where only the listing can decide; the guard is then the directory's
// listed one (guardFor), as for every other git.
//
// Those two gits run few of the programs configuration can name, and all
// but one kind are off for every git ralph runs, whoever configured them
// (safeConfig): core.fsmonitor (status refreshes the index), the hooks,
// pager and editors, askPass and credential helpers, and every transport
// (protocol.allow=never, so core.sshCommand, core.gitProxy and ext:: have
// no remote to run for). log is given --no-show-signature (gpg.program),
// and the guard turns off textconv and external diffs (neither reads a
// diff). Nothing else they read runs a program: no merge, no alias of a
// builtin, no pager on a pipe.
//
// The one kind left is a clean filter (filter.<driver>.clean or
// .process), which status runs on a file whose size is unchanged but
// whose time stamp moved. Its driver's name is the model's to choose, so
// only git's listing can say which to turn off. When no configuration
// file mentions "filter" at all and none includes another (configMayName,
// a search for the word, not a parser: a mention in a comment counts),
// there is no filter to turn off and no listing is needed. Otherwise, or
// when git's discovery may not be the plain one (discover), it is nil.
func quickGuard(look *lookRepo) *guard {
	if look == nil || configMayName(look.common, look.gitDir, "filter") {
		return nil
	}
	return &guard{noDiffDrivers: true, noHooks: true, env: look.env}
}

// lookRepo is the repository git reads in a directory, as the first look
// finds it.
type lookRepo struct {
	gitDir, common string
	env            []string // the pinned repository's, for git
}

// lookedRepo is the repository git reads in dir: the one a session
// recorded, to which git is pinned and whose files are the ones read,
// else the plain discovery's; nil when git's discovery may not be the
// plain one, and only git can say.
func lookedRepo(dir string) *lookRepo {
	r := discover(dir)
	if r == nil {
		return nil
	}
	if p := pinFor(dir); p != nil && !p.unpinned {
		return &lookRepo{gitDir: p.gitDir, common: p.common, env: p.env()}
	}
	return &lookRepo{gitDir: r.GitDir, common: commonDir(r.GitDir)}
}
