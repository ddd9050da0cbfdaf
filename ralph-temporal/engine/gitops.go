package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory"
	rgit "github.com/ralph-dev/ralph/memory/git"
)

// A worker keeps, under its --dir, one directory per remote: a clone the
// task worktrees are added to ("cache"), the worktrees ("wt/<task-id>")
// and the clone the integration works in ("integrate").

// stateFiles are written on the target branch by the integration only;
// an attempt's changes to them are left out of its commit.
var stateFiles = memory.LoopFiles()

type repoDirs struct {
	root string
	mu   sync.Mutex // one fetch or worktree change at a time in cache
}

type gitRepos struct {
	dir string
	mu  sync.Mutex
	m   map[string]*repoDirs
}

func (g *gitRepos) of(remote string) *repoDirs {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]*repoDirs{}
	}
	sum := sha256.Sum256([]byte(remote))
	key := hex.EncodeToString(sum[:6])
	if g.m[key] == nil {
		g.m[key] = &repoDirs{root: filepath.Join(g.dir, key)}
	}
	return g.m[key]
}

// gitError is a failed git command with what it printed.
type gitError struct {
	args   []string
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.args, " "), msg)
}

func (e *gitError) Unwrap() error { return e.err }

// asRalph reports whether a worker commits as ralph: when its
// environment names no author, so that a fresh worker machine, without
// user.name and user.email, can commit.
func asRalph() bool { return os.Getenv("GIT_AUTHOR_NAME") == "" }

// runGit runs git in dir. Commits get ralph's identity where git has none
// configured, so a fresh worker machine can commit.
func runGit(ctx context.Context, dir string, args ...string) (string, error) {
	var env []string
	if asRalph() {
		env = []string{"GIT_AUTHOR_NAME=ralph", "GIT_COMMITTER_NAME=ralph",
			"GIT_AUTHOR_EMAIL=ralph@localhost", "GIT_COMMITTER_EMAIL=ralph@localhost"}
	}
	cmd := rgit.RemoteCommand(ctx, dir, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), &gitError{args: args, stderr: errb.String(), err: err}
	}
	return strings.TrimSpace(out.String()), nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// clone makes dir a clone of remote, or fetches into it when it is one.
func clone(ctx context.Context, remote, dir string, noCheckout bool) error {
	if !exists(filepath.Join(dir, ".git")) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return err
		}
		_ = os.RemoveAll(dir) // a clone cut short
		args := []string{"clone", "--quiet"}
		if noCheckout {
			args = append(args, "--no-checkout")
		}
		if _, err := runGit(ctx, filepath.Dir(dir), append(args, remote, dir)...); err != nil {
			return err
		}
		// ralph's records of each attempt stay on the worker.
		f, err := os.OpenFile(filepath.Join(dir, ".git", "info", "exclude"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		_, err = f.WriteString("\n.ralph/\n")
		return errors.Join(err, f.Close())
	}
	_, err := runGit(ctx, dir, "fetch", "--quiet", "--prune", "origin")
	return err
}

// worktree prepares the worktree of an attempt at task id on branch
// ralph/<id>: from the remote's ralph/<id> when an earlier attempt pushed
// one (its work goes on), else from the target branch.
func (r *repoDirs) worktree(ctx context.Context, p Project, id string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cache := filepath.Join(r.root, "cache")
	if err := clone(ctx, p.Remote, cache, true); err != nil {
		return "", err
	}
	base := "origin/" + p.Branch
	if _, err := runGit(ctx, cache, "rev-parse", "--verify", "--quiet", "origin/"+rgit.TaskBranch(id)); err == nil {
		base = "origin/" + rgit.TaskBranch(id)
	}
	wt := filepath.Join(r.root, "wt", id)
	_, _ = runGit(ctx, cache, "worktree", "remove", "--force", wt)
	_ = os.RemoveAll(wt)
	_, _ = runGit(ctx, cache, "worktree", "prune")
	if _, err := runGit(ctx, cache, "worktree", "add", "--quiet", "-B", rgit.TaskBranch(id), wt, base); err != nil {
		return "", err
	}
	return wt, nil
}

// pushAttempt commits what the attempt changed (the state files left
// out) on ralph/<id> and pushes the branch. It returns the branch's head.
// The commit is memory/git's one task commit (Repo.CommitWork), made
// here without hooks, as ralph when the worker's environment names no
// author (asRalph).
func pushAttempt(ctx context.Context, wt, id string, attempt int, summary string) (string, error) {
	repo, err := rgit.Open(ctx, wt)
	if err != nil {
		return "", fmt.Errorf("the worktree of task %s: %w", id, err)
	}
	msg := fmt.Sprintf("ralph: %s attempt %d", id, attempt)
	if s := strings.TrimSpace(summary); s != "" {
		msg += "\n\n" + s
	}
	if _, err := repo.CommitWork(ctx, msg, rgit.WorkCommit{Leave: stateFiles, NoHooks: true, AsRalph: asRalph()}); err != nil {
		return "", err
	}
	if err := repo.Push(ctx, "origin", "HEAD:refs/heads/"+rgit.TaskBranch(id), true); err != nil {
		return "", err
	}
	return runGit(ctx, wt, "rev-parse", "HEAD")
}
