package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/retention"
	"github.com/ralph-dev/ralph/memory/text"
)

// PruneResult is what `ralph sessions prune` did, or would do.
type PruneResult struct {
	DryRun    bool                `json:"dry_run"`
	Policy    string              `json:"policy"`
	Pruned    []retention.Session `json:"pruned"`
	Protected []retention.Session `json:"protected"`
	Kept      int                 `json:"kept"`
}

// Prune deletes the sessions the policy lets go, with their git
// checkpoint refs; with dryRun it only says which. The running and the
// latest session always stay.
func (r Records) Prune(ctx context.Context, policy retention.Policy, dryRun bool) error {
	now := time.Now()
	plan, err := retention.MakePlan(r.Fs, r.Root, policy, now)
	if err != nil {
		return err
	}
	res := PruneResult{DryRun: dryRun, Policy: policy.String(), Pruned: plan.Prune, Protected: plan.Protected, Kept: plan.Kept}
	var rmErr error
	if !dryRun && len(plan.Prune) > 0 {
		ids := make([]string, len(plan.Prune))
		for i, s := range plan.Prune {
			ids[i] = s.ID
		}
		removed, err := retention.Remove(ctx, r.Fs, r.Root, ids, checkpointRefs(ctx, r.Root))
		rmErr = err
		gone := map[string]bool{}
		for _, id := range removed {
			gone[id] = true
		}
		res.Pruned = res.Pruned[:0]
		for _, s := range plan.Prune {
			if gone[s.ID] {
				res.Pruned = append(res.Pruned, s)
			} else {
				res.Kept++
			}
		}
	}
	if r.JSON {
		if err := r.writeJSON(res); err != nil {
			return err
		}
		return rmErr
	}
	verb := "pruned"
	if dryRun {
		verb = "would prune"
	}
	fmt.Fprintf(r.Out, "%s %d %s (%s); %d kept\n", verb, len(res.Pruned), text.Plural(len(res.Pruned), "session", "sessions"), res.Policy, res.Kept)
	for _, s := range res.Pruned {
		fmt.Fprintf(r.Out, "  %s  %-11s  updated %s  %s\n", s.ID, s.Status, s.Updated.Local().Format("2006-01-02"), s.Why)
	}
	for _, s := range res.Protected {
		fmt.Fprintf(r.Out, "kept %s: it is the %s session\n", s.ID, s.Why)
	}
	return rmErr
}

// Archive packs a session into .ralph/archive/<id>.tar.gz, keeps its
// summary in the registry and removes it with its git checkpoint refs.
func (r Records) Archive(ctx context.Context, id string) error {
	reg := memory.OpenRegistry(r.person(), memory.RegistryDir(os.Getenv))
	res, err := retention.Archive(ctx, r.Fs, r.Root, id, checkpointRefs(ctx, r.Root), reg, time.Now())
	if err != nil {
		return err
	}
	if r.JSON {
		return r.writeJSON(res)
	}
	fmt.Fprintf(r.Out, "archived %s to %s (%s, %s)\n", id, text.StripControls(res.Path), text.Counted(res.Files, "file", "files"), text.Size(res.Bytes))
	return nil
}

// checkpointRefs is the project's git repository, whose refs hold the
// sessions' checkpoints; nil outside git.
func checkpointRefs(ctx context.Context, root string) retention.RefPruner {
	repo, err := git.Open(ctx, root)
	if err != nil {
		return nil
	}
	return repo
}
