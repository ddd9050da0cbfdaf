package project

import (
	"context"

	"github.com/ralph-dev/ralph/memory/git"
)

// finishGitSteps finishes, as soon as ralph's git is pinned and before
// any other git of the session's runs, the merge or commit a killed ralph
// left half-applied in the work tree (git.FinishPending): the branch holds
// the task's work while the person's index and work tree still hold the
// files from before it, which git status shows as changes to undo and
// the person's next commit would revert. What it did is told to the
// person. One it could not finish is told too; the run's next merge or
// commit tries again and fails with it, so it never passes unseen.
func (p *Project) finishGitSteps(ctx context.Context, repo *git.Repo) {
	if repo == nil {
		return
	}
	note, err := repo.FinishPending(ctx)
	if note != "" {
		p.notify(note)
	}
	if err != nil {
		p.notify("warning: " + err.Error())
	}
}
