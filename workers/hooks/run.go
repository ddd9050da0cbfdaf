package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
)

// maxOutput is how much of a hook's stdout and of its stderr is kept: a
// hook that prints without end cannot fill ralph's memory.
const maxOutput = 1 << 20

// Runner runs hooks for one project.
type Runner struct {
	// ProjectDir is the hooks' working directory and CLAUDE_PROJECT_DIR.
	ProjectDir string
	// Env is the environment every hook starts from. It must already be
	// without credentials (memory/childenv); workers.HookCommand takes
	// the project's entries off its search paths.
	Env []string
	// Sandbox starts the hooks that run in the sandbox: every hook but the
	// person's own ones their config lets out (sandbox = false). nil runs
	// every hook as the person's own, as tests and listings have it.
	Sandbox Sandbox
	// If evaluates a hook's "if" condition against a tool call with
	// ralph's permission-rule parser (approval.HookIf, given here since
	// that package depends on this one). nil, or an error, runs the hook:
	// a guard skipped for a condition not understood guards nothing.
	If func(rule, tool string, input map[string]any) (bool, error)
	// EnvFile is the session's CLAUDE_ENV_FILE, handed to SessionStart
	// hooks (envfile.go); nil hands none.
	EnvFile *EnvFile

	mu   sync.Mutex
	said map[string]bool
	// rewake is where an asyncRewake hook's exit 2 goes (OnRewake).
	rewake func(Rewake)
	// ask sends prompt hooks' requests (OnAsk).
	ask Asker
}

// Rewake is what an asyncRewake hook that exited 2 says: Message to the
// model, at its next turn, Summary to the person.
type Rewake struct {
	Message, Summary string
}

// OnRewake says where the asyncRewake hooks' exits 2 go from now on: to
// the session's main agent. Until it is called they go nowhere.
func (r *Runner) OnRewake(f func(Rewake)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rewake = f
}

// rewoken passes on what an asyncRewake hook said by exiting 2, in Claude
// Code's words: its rewakeMessage (or "Stop hook blocking error from
// command …:") and its stderr, or stdout when stderr is empty.
func (r *Runner) rewoken(h Hook, o Outcome) {
	if o.ExitCode != 2 {
		return
	}
	r.mu.Lock()
	f := r.rewake
	r.mu.Unlock()
	if f == nil {
		return
	}
	prefix := h.RewakeMessage
	if prefix == "" {
		prefix = fmt.Sprintf("Stop hook blocking error from command %q:", h.Command)
	}
	said := strings.TrimSpace(o.Stderr)
	if said == "" {
		said = strings.TrimSpace(o.Stdout)
	}
	f(Rewake{Message: prefix + " " + said, Summary: firstNonEmpty(h.RewakeSummary, "Stop hook feedback")})
}

// firstNonEmpty is the first of s that is not empty.
func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// Run runs the hooks of cfg that match in for event, all at once, and
// waits for them: a command that appears twice (in two settings files)
// runs once. It fills in the input's hook_event_name. A hook that runs
// past its timeout, or still runs when ctx ends (a hard stop), is killed
// with its process group.
func (r *Runner) Run(ctx context.Context, cfg Config, event Event, in Input) Result {
	in.common().HookEventName = event
	hooks := r.when(dedupe(cfg.For(event, in.MatchValue())), in)
	if len(hooks) == 0 {
		return Result{Event: event}
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		// Every field is a plain value or a map the caller decoded from
		// JSON; this is a bug.
		return Result{Event: event, Errors: []string{fmt.Sprintf("%s hooks did not run: %v", event, err)}}
	}
	hooks = r.startAsync(ctx, hooks, stdin)
	if len(hooks) == 0 {
		return Result{Event: event}
	}
	outs := make([]Outcome, len(hooks))
	var wg sync.WaitGroup
	for i, h := range hooks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = r.runOne(ctx, h, stdin)
		}()
	}
	wg.Wait()
	res := combine(event, outs)
	res.Errors = r.once(res.Errors)
	return res
}

// when keeps the hooks whose "if" holds for the tool call in (a hook
// without one always runs).
func (r *Runner) when(hooks []Hook, in Input) []Hook {
	tool, input, ok := toolCall(in)
	if !ok || r.If == nil {
		return hooks
	}
	var out []Hook
	for _, h := range hooks {
		if h.If != "" {
			if match, err := r.If(h.If, tool, input); err == nil && !match {
				continue
			}
		}
		out = append(out, h)
	}
	return out
}

// toolCall is the tool's name and input of a tool event's input.
func toolCall(in Input) (string, map[string]any, bool) {
	switch in := in.(type) {
	case *PreToolUseInput:
		return in.ToolName, in.ToolInput, true
	case *PostToolUseInput:
		return in.ToolName, in.ToolInput, true
	case *PostToolUseFailureInput:
		return in.ToolName, in.ToolInput, true
	case *PermissionRequestInput:
		return in.ToolName, in.ToolInput, true
	case *PermissionDeniedInput:
		return in.ToolName, in.ToolInput, true
	}
	return "", nil, false
}

// startAsync starts the async hooks of hooks without waiting for them,
// and returns the others. An async hook's answer is not read, as in
// Claude Code: it cannot block. It still ends at its timeout, and with
// the session (ctx's values kept, its end not: the turn that fired it
// may end first).
func (r *Runner) startAsync(ctx context.Context, hooks []Hook, stdin []byte) []Hook {
	var wait []Hook
	for _, h := range hooks {
		if !h.Async {
			wait = append(wait, h)
			continue
		}
		go func() {
			o := r.runOne(context.WithoutCancel(ctx), h, stdin)
			if h.Rewake {
				r.rewoken(h, o)
			}
		}()
	}
	return wait
}

// dedupe keeps the first of hooks that run the same command the same way
// (the same plugin root), with the longest timeout among them.
func dedupe(hooks []Hook) []Hook {
	var out []Hook
	at := map[[2]string]int{}
	for _, h := range hooks {
		key := [2]string{h.Command, h.PluginRoot}
		if i, ok := at[key]; ok {
			out[i].Timeout = max(out[i].Timeout, h.Timeout)
			continue
		}
		at[key] = len(out)
		out = append(out, h)
	}
	return out
}

// once drops the messages this Runner already returned: a hook that
// fails on every tool call is said to fail once.
func (r *Runner) once(msgs []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.said == nil {
		r.said = map[string]bool{}
	}
	var out []string
	for _, m := range msgs {
		if !r.said[m] {
			r.said[m] = true
			out = append(out, m)
		}
	}
	return out
}

// runOne runs one hook with stdin and reads what it answered.
func (r *Runner) runOne(ctx context.Context, h Hook, stdin []byte) Outcome {
	if h.IsPrompt() {
		return r.runPrompt(ctx, h, stdin)
	}
	out := Outcome{Hook: h, ExitCode: -1}
	env := append(append([]string(nil), r.Env...), "CLAUDE_PROJECT_DIR="+r.ProjectDir)
	if h.PluginRoot != "" {
		env = append(env, "CLAUDE_PLUGIN_ROOT="+h.PluginRoot)
	}
	env = append(env, r.EnvFile.envFor(h)...)
	cmd := workers.HookCommand(r.ProjectDir, env, h.Command)
	stdout, stderr := text.LockedBuffer{Limit: maxOutput}, text.LockedBuffer{Limit: maxOutput}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	g, drained, err := r.start(ctx, h, cmd, stdin, &stdout, &stderr)
	if err != nil {
		out.Err = fmt.Errorf("start: %w", err)
		return out
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-g.Exited():
	case <-timer.C:
		out.TimedOut = true
	case <-ctx.Done():
		out.Err = ctx.Err()
	}
	// Stop kills whatever the hook left running in its group too, and
	// reaps it; only then are its outputs complete.
	g.Stop(0)
	drained()
	out.Stdout, out.Stderr = stdout.String(), stderr.String()
	if out.TimedOut || out.Err != nil {
		return out
	}
	out.ExitCode = g.ExitCode()
	out.read()
	out.Kept = r.kept(h, out.Stderr)
	return out
}

// WriteJudge is a Sandbox that can tell from a program's error output
// that it kept the program from writing a path (*workers.Workspace).
type WriteJudge interface {
	RefusedWrite(output string) (path string, ok bool)
}

// kept is the line that says the sandbox kept h from writing outside the
// project, as its stderr shows, and how the person may let it; "" when
// it shows nothing of the kind. A hook that logs under ~/.claude and
// swallows the error still says it on stderr as a rule; one that says
// nothing at all cannot be told apart from one that wrote nothing.
func (r *Runner) kept(h Hook, stderr string) string {
	j, ok := r.Sandbox.(WriteJudge)
	if !ok || !r.sandboxed(h) || stderr == "" {
		return ""
	}
	path, ok := j.RefusedWrite(stderr)
	if !ok {
		return ""
	}
	how := "to let it, add that directory to sandbox_writable in your user config (~/.config/ralph/config.toml), which lets the model's commands write it too"
	if h.Source == SourceUser {
		how += ", or write the hook in your ralph config with sandbox = false to run it outside the sandbox (docs/hooks.md#sandbox)"
	}
	return fmt.Sprintf("%s hook %q (%s) runs in the sandbox, which kept it from writing outside the project (%s), so what it wrote there was not written; %s",
		h.Event, h.Command, h.Source, text.Visible(path), how)
}
