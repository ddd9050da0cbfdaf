package tools

import "context"

// Decision is an approver's answer for one command.
type Decision struct {
	Allowed bool
	Reason  string // shown to the model when not allowed
	// Unasked: refused because nobody could be asked, or nobody answered,
	// rather than by a person or a rule; the run's result lists such
	// calls as permission denials, with how to allow them.
	Unasked bool
}

// Approver decides whether run_command may run a command. ralph's one
// implementation is the policy in workers/approval; the interface lives
// here, where run_command calls it, so the tools do not depend on how the
// decision is made.
type Approver interface {
	ApproveCommand(ctx context.Context, command string) Decision
}

// WriteApprover is an Approver that also judges file changes by
// write_file and edit_file (ask_before patterns). paths are the file as
// the model named it and as it resolves, relative to the project root.
// An approver without it lets every write in the project happen.
type WriteApprover interface {
	ApproveWrite(ctx context.Context, tool string, paths ...string) Decision
}

// refuseAll is the approver of a toolset given none: nothing runs, and the
// model and the person are told how to allow commands. Waiting would not
// help (nobody is ever asked), so it names only --yes.
type refuseAll struct{}

func (refuseAll) ApproveCommand(context.Context, string) Decision {
	return Decision{Reason: "run_command needs approval and nobody can be asked here; rerun ralph with --yes (-y) to allow commands", Unasked: true}
}

// UnsandboxedPrefix marks a command that asks to run outside the sandbox
// (run_command with unsandboxed: true). The approval policy asks about
// such a command every time, never offers or records "always" for it, and
// --yes does not approve it.
const UnsandboxedPrefix = "[unsandboxed] "

// Foreseer is an Approver that can tell, before a command runs, whether
// a person will be asked about it. The coordinator marks such a call's
// tool_call event (Asking), so that a face shows the question rather
// than a "running" line for a command nobody approved yet. ctx carries
// the command's directory, as ApproveCommand's does (WithWorkdir).
type Foreseer interface {
	WillAsk(ctx context.Context, command string) bool
}

type workdirKey struct{}

// WithWorkdir is ctx for the approval of a command that runs in dir, a
// directory of the project relative to its root, slash separated, links
// resolved ("" for the root): run_command's workdir. The approver shows
// the person where the command runs and reads the paths it names from
// there; the command's rules ("always", Bash(…)) are the command's
// own, wherever it runs.
func WithWorkdir(ctx context.Context, dir string) context.Context {
	if dir == "" || dir == "." {
		return ctx
	}
	return context.WithValue(ctx, workdirKey{}, dir)
}

// WorkdirOf is the directory ctx's command runs in (WithWorkdir), ""
// for the project root.
func WorkdirOf(ctx context.Context) string {
	d, _ := ctx.Value(workdirKey{}).(string)
	return d
}
