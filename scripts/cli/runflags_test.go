package cli

import (
	"reflect"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ralph-dev/ralph/memory"
)

// TestRunFlagsCoverTheRunConfiguration: every field of the run
// configuration but the plan (ralph run's argument) has one flag in the
// table, and a resume's flags given are put over the saved
// configuration, those not given left as saved.
func TestRunFlagsCoverTheRunConfiguration(t *testing.T) {
	var parsed memory.RunConfig
	fl := pflag.NewFlagSet("run", pflag.ContinueOnError)
	table := runFlags()
	table.register(fl, &parsed)
	args := []string{"--max-iterations=7", "--on-error=skip", "--retries=5", "--max-cost=1.5", "--until=tasks_done >= 1",
		"--breaker=no_progress >= 1", "--verify=make", "--agent=codex", "--agent-arg=-x", "--task-timeout=3m",
		"--breaker-cooldown=4s", "--commit", "--worktrees", "--review=end", "--review-rounds=1", "--reviewer=claude",
		"--archive-done", "--prompt-template=/t.tmpl"}
	if err := fl.Parse(args); err != nil {
		t.Fatal(err)
	}
	parsed.Parallel = 3 // the root command's flag, taken by the run
	v := reflect.ValueOf(parsed)
	// VerifyFromPlan is ralph's, never a flag's: settle sets it.
	for i := range v.NumField() {
		if name := v.Type().Field(i).Name; v.Field(i).IsZero() && name != "Plan" && name != "VerifyFromPlan" {
			t.Errorf("no flag of the table sets RunConfig.%s", name)
		}
	}
	saved := memory.RunConfig{Plan: "p.md", Verify: "old", Agent: "claude", Parallel: 1}
	all := func(string) bool { return true }
	if got := table.over(saved, parsed, all); got.Plan != "p.md" || !reflect.DeepEqual(func() memory.RunConfig { g := got; g.Plan = ""; return g }(), parsed) {
		t.Fatalf("every flag given: %+v", got)
	}
	onlyVerify := func(name string) bool { return name == "verify" }
	if got := table.over(saved, parsed, onlyVerify); got.Verify != "make" || got.Agent != "claude" || got.Parallel != 1 {
		t.Fatalf("--verify alone over the saved configuration: %+v", got)
	}
}

// TestReviewModeBeforeThePlan: "ralph run --review end PLAN" is the end
// review of PLAN, not two arguments; a bare --review before PLAN is the
// review of each task.
func TestReviewModeBeforeThePlan(t *testing.T) {
	for _, c := range []struct {
		args       []string
		mode, plan string
	}{
		{[]string{"--review", "end", "p.md"}, "end", "p.md"},
		{[]string{"--review", "p.md"}, "task", "p.md"},
		{[]string{"--review=end", "p.md"}, "end", "p.md"},
	} {
		cli := &cli{}
		root := &cobra.Command{Use: "ralph"}
		root.PersistentFlags().IntVar(&cli.f.parallel, "parallel", 0, "")
		var plan string
		cli.addLoopCommands(root)
		run, _, _ := root.Find([]string{"run"})
		run.RunE = func(cmd *cobra.Command, args []string) error {
			args = reviewValue(cmd, args, &cli.f.run.Review)
			plan = args[0]
			return nil
		}
		root.SetArgs(append([]string{"run"}, c.args...))
		if err := root.Execute(); err != nil || cli.f.run.Review != c.mode || plan != c.plan {
			t.Errorf("ralph run %v: review %q, plan %q (%v)", c.args, cli.f.run.Review, plan, err)
		}
	}
}
