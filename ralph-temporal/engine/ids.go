package engine

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	rgit "github.com/ralph-dev/ralph/memory/git"
)

// Project names the repository and branch a run works on. The workflow id
// comes from both, so two starts of the same project are one run.
type Project struct {
	// Remote is the git remote every worker fetches from and pushes to.
	Remote string `json:"remote"`
	// Branch is the target branch: finished tasks are merged into it.
	Branch string `json:"branch"`
}

// WorkflowID is the run's workflow id. Credentials in a remote's URL are
// left out: the id is shown in Temporal's UI and logs.
func (p Project) WorkflowID() string {
	return "ralph:" + redactURL(p.Remote) + "#" + p.Branch
}

func redactURL(remote string) string {
	u, err := url.Parse(remote)
	if err != nil || u.User == nil {
		return remote
	}
	u.User = nil
	return u.String()
}

// Discover finds the project of the git checkout at dir: the URL of its
// remote "origin" and its current branch. remote and branch, when given,
// win.
func Discover(ctx context.Context, dir, remote, branch string) (Project, error) {
	p := Project{Remote: remote, Branch: branch}
	if p.Remote == "" {
		out, err := gitOut(ctx, dir, "remote", "get-url", "origin")
		if err != nil || out == "" {
			return p, fmt.Errorf("%w: the project has no git remote \"origin\" for the workers to fetch from (or give --remote URL)", ErrConfig)
		}
		p.Remote = out
	}
	if p.Branch == "" {
		out, err := gitOut(ctx, dir, "symbolic-ref", "--short", "HEAD")
		if err != nil || out == "" {
			return p, fmt.Errorf("%w: the project is on no branch (or give --branch NAME)", ErrConfig)
		}
		p.Branch = out
	}
	return p, nil
}

func gitOut(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := rgit.RemoteCommand(ctx, dir, nil, args...).Output()
	return strings.TrimSpace(string(out)), err
}
