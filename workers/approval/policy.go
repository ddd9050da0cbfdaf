// Package approval is ralph's one policy for run_command: which commands
// run without asking, which are asked about, which are refused, and what
// "always" remembers. Every face uses it: the chat shell and one-shot mode
// ask a person through an Asker; scripts and `ralph run` have nobody to
// ask and refuse with a hint; --yes allows everything the sandbox
// contains.
//
// "Always" remembers rules: a command's first word, or its first two for
// launchers such as `go test` or `npm run`. A command runs without asking
// only when a real shell parser (mvdan.cc/sh) finds that every simple
// command in it has a remembered rule and nothing in it escapes what a
// rule can vouch for (see Analyze). Rules are saved in the project's
// .ralph/config.toml and, because that file travels with the repository,
// in a record on the person's side (TrustFile) without which a project's
// rules do not count.
package approval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/pathrule"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/tools"
)

// SandboxHint tells the person how to let commands run outside the
// sandbox without being asked.
const SandboxHint = "rerun ralph with `--sandbox danger-full-access` to let commands run outside the sandbox"

// Options configure a Policy.
type Options struct {
	// Fs and Root are where the project's .ralph/config.toml is; a nil Fs
	// keeps "always" for this process only.
	Fs   afero.Fs
	Root string
	// UserFs holds the person's config directory (their trust record and
	// config.toml), outside the project and its door; nil means Fs, as
	// tests on one in-memory file system have it.
	UserFs afero.Fs
	// UserConfigDir holds the person's trust record (TrustFile); "" means
	// none, and then no project rule counts.
	UserConfigDir string
	// UserRules are allowed_commands from the person's own config: they
	// count everywhere.
	UserRules []string
	// ProjectRules are allowed_commands from the project's config: they
	// count only where the trust record agrees.
	ProjectRules []string
	// Yes allows every command that does not ask to leave the sandbox
	// (--yes).
	Yes bool
	// Redactor holds the secret values (the model's key, tokens the
	// config holds), which are never written to a file: a rule that holds
	// one is allowed for this process only, and a question shows them
	// redacted.
	Redactor *memory.Redactor
	// AskBefore are the person's ask_before patterns: commands and files
	// that always need a person, even with Yes or a remembered rule.
	AskBefore []string
	// Tools are --allowed-tools and --disallowed-tools: rules for this
	// process only, never saved.
	Tools ToolRules
	// Home is the home directory a path rule's ~/ names, and Cwd the
	// directory the person started in, where a relative one is anchored
	// besides the root (memory/pathrule); "" is the process's home, and no
	// other directory.
	Home, Cwd string
	// NeverAsk refuses what no rule allows instead of asking anyone
	// (--permission-mode dontAsk).
	NeverAsk bool
	// Fetch are the domains web_fetch may and may not fetch from: the
	// person's web_fetch_allow, with Tools' WebFetch rules added by New.
	Fetch FetchRules
	// Record, if set, is told every answer a person gave (an approval
	// granted or refused), for the session's decisions.jsonl.
	Record func(memory.DecisionRecord)
}

// Policy decides whether run_command may run a command. It implements
// tools.Approver and is safe for concurrent use: questions are asked one
// at a time.
type Policy struct {
	fs       afero.Fs
	user     afero.Fs
	root     string
	roots    []string
	userDir  string
	yes      bool
	redactor *memory.Redactor
	ignored  int
	turn     chan struct{} // holds a token while a question is asked
	always   askBefore     // ask_before and permissions.ask: asked every time, whatever else says yes
	// askWrites are permissions.ask's path rules per file tool.
	askWrites map[string]pathRules
	record    func(memory.DecisionRecord)
	// deny refuses what --disallowed-tools names; allowCommands is a
	// bare --allowed-tools Bash; neverAsk is --permission-mode dontAsk.
	deny          denied
	fetch         FetchRules
	allowCommands bool
	neverAsk      bool

	// words are the Bash allow rules the person wrote (settings files,
	// --allowed-tools), matched word by word; rules below are the
	// remembered ones, a command's first word or two.
	words []WordRule

	mu    sync.Mutex // guards the fields below
	rules []string
	// explained: a question has told the person what "always" means.
	explained bool
	asker     Asker
	// nobody is why nobody can be asked while asker is nil, and wait
	// how the person could have ralph wait for an answer (SetNobody).
	nobody, wait string
	// hookNobody, when set, is why nobody is asked about a hook even
	// though an asker is set (SetHookNobody).
	hookNobody string
}

var (
	_ tools.Approver = (*Policy)(nil)
	_ tools.Foreseer = (*Policy)(nil)
)

// New returns the policy for a project.
func New(o Options) *Policy {
	p := &Policy{fs: o.Fs, root: o.Root, userDir: o.UserConfigDir, yes: o.Yes, redactor: o.Redactor, turn: make(chan struct{}, 1),
		always: newAskBefore(append(slices.Clone(o.AskBefore), o.Tools.Ask...)).from(o.Tools.AskFrom), askWrites: map[string]pathRules{}, record: o.Record, allowCommands: o.Tools.AllowCommands, neverAsk: o.NeverAsk}
	p.fetch = FetchRules{Allow: append(slices.Clone(o.Fetch.Allow), o.Tools.Fetch.Allow...), AllowAll: o.Fetch.AllowAll || o.Tools.Fetch.AllowAll,
		Deny: append(slices.Clone(o.Fetch.Deny), o.Tools.Fetch.Deny...), DenyAll: o.Fetch.DenyAll || o.Tools.Fetch.DenyAll}
	p.user = o.UserFs
	if p.user == nil {
		p.user = o.Fs
	}
	p.roots = []string{o.Root}
	if real, err := filepath.EvalSymlinks(o.Root); err == nil && real != o.Root {
		p.roots = append(p.roots, real)
	}
	base := pathrule.Base{Roots: p.roots, Home: o.Home, Cwd: o.Cwd}
	p.deny = newDenied(o.Tools, base)
	for tool, pats := range o.Tools.AskWrites {
		p.askWrites[tool] = newPathRules(pats, base, o.Tools.AskFrom)
	}
	for _, r := range o.UserRules {
		p.addRule(r)
	}
	trusted, ignored := trustedOnly(p.user, o.UserConfigDir, o.Root, o.ProjectRules)
	for _, r := range trusted {
		p.addRule(r)
	}
	p.ignored = ignored
	for _, r := range o.Tools.Allow {
		p.addRule(r)
	}
	p.words = o.Tools.AllowWords
	return p
}

// Ignored counts the project's rules that do not count because they were
// not approved on this machine.
func (p *Policy) Ignored() int { return p.ignored }

// Rules are the rules in force, normalised, as an external agent takes
// them: each allows the commands its words begin. So a WordRule is among
// them only as a prefix of plain words (Bash(npm run test:*) is "npm run
// test"); an exact one (Bash(ls)) would be widened, and one with quoted
// words would change its meaning, so those are left to the agent's own
// questions.
func (p *Policy) Rules() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.rules)
	for _, w := range p.words {
		if r, ok := w.plainPrefix(); ok && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// SetAsker sets who is asked from now on: the face that has the person
// (the chat shell, or a task loop handed over to it). nil means nobody:
// commands without a rule are refused with Hint.
func (p *Policy) SetAsker(a Asker) {
	p.mu.Lock()
	p.asker = a
	p.mu.Unlock()
}

// SetNobody says why nobody can be asked while no Asker is set ("there
// is no terminal to ask at", "CI=true is set, …"), and wait, how the
// person could have ralph wait for an answer here instead ("with
// --wait-for-answers to wait for `ralph answer` from another terminal";
// "" where nothing makes it wait, as in CI). Every refusal for want of a
// person says both, so the person reading it knows what to change, and
// never names a way that does not work where it is read.
func (p *Policy) SetNobody(why, wait string) {
	p.mu.Lock()
	p.nobody, p.wait = why, wait
	p.mu.Unlock()
}

// SetHookNobody says why a hook's approval is not waited for although
// other questions wait ("" when it is): a run without a terminal waits
// for `ralph answer` about a command the model wants to run, but nobody
// said they would answer from elsewhere (--wait-for-answers), and a
// hook's question comes before the first task, so waiting on it would
// hold the whole run for the answer timeout. A guard that is not
// approved then refuses the calls it guards, and any other such hook
// does not run.
func (p *Policy) SetHookNobody(why string) {
	p.mu.Lock()
	p.hookNobody = why
	p.mu.Unlock()
}

// HookNobody is the clause that says why nobody is asked about a hook
// here, "" when somebody is.
func (p *Policy) HookNobody() string {
	if p.currentAsker() == nil {
		return p.nobodyAsked()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hookNobody == "" {
		return ""
	}
	return "nobody can be asked here (" + p.hookNobody + ")"
}

// Hint says how to let refused commands run here: --yes, an
// --allowed-tools rule for rules (the ones a refused command needs, when
// known), and the way to wait for an answer where there is one. It is
// what a refusal tells the model, and what a one-shot's summary of its
// refused commands tells the person.
func (p *Policy) Hint(rules ...string) string { return approvalHint(p.waitWay(), rules) }

// waitWay is how the person could have ralph wait for an answer here
// (SetNobody), "" where nothing would.
func (p *Policy) waitWay() string {
	p.mu.Lock()
	nobody, wait := p.nobody, p.wait
	p.mu.Unlock()
	switch {
	case p.neverAsk:
		// --permission-mode dontAsk: nothing is asked, so nothing waits.
		return ""
	case nobody == "":
		// Nobody said why: nobodyAsked's default, no terminal outside CI.
		return WaitForAnswers
	}
	return wait
}

// AnswerHint says how a question that --yes does not answer (a hook's
// "ask") could be answered here: at a terminal, or by the way to wait for
// `ralph answer` where there is one.
func (p *Policy) AnswerHint() string {
	if w := p.waitWay(); w != "" {
		return "rerun ralph at a terminal to answer it, or " + w
	}
	return "rerun ralph at a terminal to answer it"
}

// HintFor is Hint for refused commands: the rules they need, each once.
func (p *Policy) HintFor(commands ...string) string {
	var rules []string
	for _, c := range commands {
		for _, r := range p.Question(c).Remember {
			if !slices.Contains(rules, r) {
				rules = append(rules, r)
			}
		}
	}
	return p.Hint(rules...)
}

// hintAfter is the hint of a refusal for want of an answer that did not
// come (err): waiting longer helps only when the wait ran out.
func (p *Policy) hintAfter(err error, rules []string) string {
	if errors.Is(err, tools.ErrNoAnswer) {
		return approvalHint(AnswerTimeout, rules)
	}
	return approvalHint("", rules)
}

// approvalHint is Hint's sentence: the ways that work here, and only
// those.
func approvalHint(wait string, rules []string) string {
	ways := []string{"with --yes (-y) to allow commands"}
	if len(rules) > 0 {
		allow := make([]string, len(rules))
		for i, r := range rules {
			allow[i] = "Bash(" + r + ":*)"
		}
		ways = append(ways, fmt.Sprintf("with --allowed-tools '%s' to allow only %s", strings.Join(allow, " "), text.Plural(len(rules), "that program", "those programs")))
	} else {
		ways = append(ways, "with --allowed-tools 'Bash(PROGRAM:*)' to allow one program's commands")
	}
	if wait != "" {
		ways = append(ways, wait)
	}
	return "rerun ralph " + strings.Join(ways[:len(ways)-1], ", ") + ", or " + ways[len(ways)-1]
}

// AnswerTimeout is the way to wait longer where ralph waited for an
// answer and none came in time.
const AnswerTimeout = "with a longer --answer-timeout to wait longer for an answer"

// WaitForAnswers is the way to wait for an answer where a one-shot or a
// script has no terminal and is not in CI.
const WaitForAnswers = "with --wait-for-answers to wait for `ralph answer` from another terminal"

// nobodyAsked is the refusal's clause for an action that needs a person
// when nobody can be asked.
func (p *Policy) nobodyAsked() string {
	p.mu.Lock()
	why := p.nobody
	p.mu.Unlock()
	switch {
	case p.neverAsk:
		why = "--permission-mode dontAsk"
	case why == "":
		why = "there is no terminal to ask at"
	}
	return "nobody can be asked here (" + why + ")"
}

// addRule adds a rule in its normal form; callers other than New hold mu.
func (p *Policy) addRule(r string) {
	r = normalRule(r)
	if r != "" && !slices.Contains(p.rules, r) {
		p.rules = append(p.rules, r)
	}
}

func normalRule(r string) string { return strings.Join(strings.Fields(r), " ") }

// Allowed reports whether the remembered rules allow command without
// asking, run in the project root.
func (p *Policy) Allowed(command string) bool { return p.allowedIn("", command) }

// at is where a command that starts in dir runs (tools.WorkdirOf).
func (p *Policy) at(dir string) place { return place{roots: p.roots, dir: dir} }

// allowedIn is Allowed for a command run in dir: the rules are the
// command's own, and the paths it names are read from dir.
func (p *Policy) allowedIn(dir, command string) bool {
	if strings.HasPrefix(command, tools.UnsandboxedPrefix) {
		return false
	}
	a := analyzeAt(command, p.at(dir))
	if len(a.Asks) > 0 || len(a.Rules) == 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range a.commands {
		if !p.covered(c) {
			return false
		}
	}
	return true
}

// covered reports whether a rule allows simple command c: a remembered
// rule for its first word (or two), or a rule the person wrote that
// matches its words. A rule for an MCP tool (tools.go) allows that tool,
// never a program of the same name. The caller holds mu.
func (p *Policy) covered(c simpleCommand) bool {
	if slices.Contains(p.rules, c.rule) && !isToolRule(c.rule) {
		return true
	}
	for _, w := range p.words {
		if w.covers(c.words) {
			return true
		}
	}
	return false
}

// Question is what a person would be asked about command now, run in
// the project root.
func (p *Policy) Question(command string) Question { return p.questionIn("", command) }

// questionIn is Question for a command run in dir, which the question
// names.
func (p *Policy) questionIn(dir, command string) Question {
	cmd, unsandboxed := strings.CutPrefix(command, tools.UnsandboxedPrefix)
	q := Question{Command: cmd, Dir: dir, Unsandboxed: unsandboxed}
	if unsandboxed {
		return q
	}
	a := analyzeAt(cmd, p.at(dir))
	if len(a.Asks) > 0 {
		q.Why = a.Asks
		return q
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range a.commands {
		if !p.covered(c) && !slices.Contains(q.Remember, c.rule) {
			q.Remember = append(q.Remember, c.rule)
		}
	}
	return q
}

// Reasons given to the model (and, through the run's denials, to the
// person) when a command does not run.
const (
	reasonDeclined  = "the user declined to run this command"
	reasonCancelled = "cancelled: the user stopped the work before answering whether to run this command"
)

// ApproveCommand implements tools.Approver. ctx carries the directory
// the command runs in (tools.WorkdirOf): the question names it, and the
// paths the command names are read from there; the rules that allow the
// command are its own wherever it runs.
func (p *Policy) ApproveCommand(ctx context.Context, command string) tools.Decision {
	return refusal(ctx, p.approveCommand(ctx, command))
}

func (p *Policy) approveCommand(ctx context.Context, command string) tools.Decision {
	dir := tools.WorkdirOf(ctx)
	cmd, unsandboxed := strings.CutPrefix(command, tools.UnsandboxedPrefix)
	if m, ok := p.deny.commands.command(cmd, p.at(dir)); ok {
		return tools.Decision{Reason: m.refusal(tools.HookName(tools.ToolRunCommand))}
	}
	if m, ok := p.always.command(cmd, p.at(dir)); ok {
		return p.askPerson(ctx, Question{Command: cmd, Dir: dir, Unsandboxed: unsandboxed, Why: []string{m.reason()}}, m)
	}
	switch {
	case unsandboxed && p.yes:
		return tools.Decision{Reason: "--yes never approves a command outside the sandbox; " + SandboxHint}
	case p.yes, p.allowedIn(dir, command), p.allowCommands && !unsandboxed, p.scopedAllowed(ctx, command):
		return tools.Decision{Allowed: true}
	}
	if d, denied := hookDenied(ctx); denied {
		return d
	}
	asker := p.currentAsker()
	if asker == nil {
		if unsandboxed {
			return tools.Decision{Reason: "running outside the sandbox needs approval and " + p.nobodyAsked() + "; " + SandboxHint}
		}
		return tools.Decision{Reason: "run_command needs approval and " + p.nobodyAsked() + "; " + p.Hint(p.questionIn(dir, command).Remember...), Unasked: true}
	}
	// An answer to an earlier question may have remembered what this
	// command needs while it waited for its turn; the question offers
	// only the rules still missing then.
	var q Question
	remembers := func(ans Answer) bool { return ans.Remembers() && q.CanAlways() && (ans != Share || q.CanShare()) }
	ans, err := p.ask(ctx, asker, func() (Question, bool) {
		if p.allowedIn(dir, command) {
			return q, true
		}
		q = p.questionIn(dir, command)
		return q, false
	}, func(ans Answer) {
		if remembers(ans) {
			p.remember(asker, q.Remember, ans == Share)
		}
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return tools.Decision{Reason: reasonCancelled}
	case err != nil:
		return tools.Decision{Reason: fmt.Sprintf("no answer to the approval question (%v); %s", err, p.hintAfter(err, q.Remember)), Unasked: true}
	case ans == Yes:
		return tools.Decision{Allowed: true}
	case remembers(ans):
		return tools.Decision{Allowed: true}
	case ans.Remembers():
		// An Asker must not offer what the question does not; run it
		// this once, as the person said yes, and remember nothing.
		return tools.Decision{Allowed: true}
	}
	return tools.Decision{Reason: declined(reasonDeclined, ans)}
}

// declined is the reason a refusal gives the model: why it was asked
// not to, with the person's own words when they gave some ("no, and tell
// it why").
func declined(reason string, ans Answer) string {
	if ans.Why == "" {
		return reason
	}
	return reason + "; they said: " + ans.Why
}

// WillAsk implements tools.Foreseer: whether ApproveCommand would ask
// a person about command now, rather than allow or refuse it at once;
// ctx carries its directory, as ApproveCommand's does.
func (p *Policy) WillAsk(ctx context.Context, command string) bool {
	dir := tools.WorkdirOf(ctx)
	cmd, unsandboxed := strings.CutPrefix(command, tools.UnsandboxedPrefix)
	if _, ok := p.deny.commands.command(cmd, p.at(dir)); ok || p.currentAsker() == nil {
		return false
	}
	if _, ok := p.always.command(cmd, p.at(dir)); ok {
		return true
	}
	return !(unsandboxed && p.yes) && !p.yes && !p.allowedIn(dir, command) && !(p.allowCommands && !unsandboxed)
}

// ApproveWrite implements tools.WriteApprover: a file change by
// write_file or edit_file needs a person only when it matches ask_before.
// paths are the file as the model named it and as it resolves, relative
// to the project root.
func (p *Policy) ApproveWrite(ctx context.Context, tool string, paths ...string) tools.Decision {
	return refusal(ctx, p.approveWrite(ctx, tool, paths...))
}

func (p *Policy) approveWrite(ctx context.Context, tool string, paths ...string) tools.Decision {
	for _, rt := range writeRuleTools(tool) {
		if m, ok := p.deny.writes[rt].path(tool, p.roots, paths...); ok {
			return tools.Decision{Reason: m.refusal(tools.HookName(rt))}
		}
	}
	m, ok := p.always.path(tool, paths...)
	for _, rt := range writeRuleTools(tool) {
		if ok {
			break
		}
		m, ok = p.askWrites[rt].path(tool, p.roots, paths...)
	}
	if !ok {
		return tools.Decision{Allowed: true}
	}
	what := paths[0]
	if tool == tools.ToolApplyPatch {
		// One question for the whole patch names every file it touches.
		what = strings.Join(paths, ", ")
	}
	return p.askPerson(ctx, Question{Command: what, Tool: tool, Why: []string{m.reason()}}, m)
}

// writeRuleTools are the tools whose deny and ask rules (Edit(…),
// Write(…) from --disallowed-tools and settings) hold for a write by
// tool. A patch adds, changes and deletes files, so the person's rules
// for both writing and editing a file hold for it: a rule the person gave
// must not be passed by the model choosing another tool.
func writeRuleTools(tool string) []string {
	if tool == tools.ToolApplyPatch {
		return []string{tools.ToolApplyPatch, tools.ToolWriteFile, tools.ToolEditFile}
	}
	return []string{tool}
}

// currentAsker is who is asked now: nobody under --permission-mode
// dontAsk, whoever the face set otherwise.
func (p *Policy) currentAsker() Asker {
	if p.neverAsk {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.asker
}

// askPerson asks the person about an action ask_before holds back, or
// refuses it when nobody can be asked. No answer remembers anything.
func (p *Policy) askPerson(ctx context.Context, q Question, m askMatch) tools.Decision {
	if d, denied := hookDenied(ctx); denied {
		return d
	}
	asker := p.currentAsker()
	if asker == nil {
		return tools.Decision{Reason: fmt.Sprintf("%s needs a person's approval (%s) and %s, so it was not done", m.what, m.where(), p.nobodyAsked())}
	}
	ans, err := p.ask(ctx, asker, only(q), nil)
	switch {
	case err != nil && ctx.Err() != nil:
		return tools.Decision{Reason: reasonCancelled}
	case err != nil:
		return tools.Decision{Reason: fmt.Sprintf("no answer to the approval question (%v)", err)}
	case !ans.Refused():
		return tools.Decision{Allowed: true}
	}
	return tools.Decision{Reason: declined(reasonDeclined, ans)}
}

// ask puts a question to the person once it is its turn (one question
// at a time) and records the answer in the session's record. next runs
// once the turn is taken and gives the question, or allowed when an
// answer to an earlier question has meanwhile allowed what this one
// waited to ask: then nobody is asked and Yes comes back. While waiting
// for the turn a cancelled ctx returns its error. settle, when not nil,
// acts on the answer (remembers an "always") before the turn passes on,
// so that the next question's next sees what this answer allowed.
func (p *Policy) ask(ctx context.Context, asker Asker, next func() (q Question, allowed bool), settle func(Answer)) (Answer, error) {
	select {
	case p.turn <- struct{}{}:
		defer func() { <-p.turn }()
	case <-ctx.Done():
		return No, ctx.Err()
	}
	q, allowed := next()
	if allowed {
		return Yes, nil
	}
	// What "always" means is said in full once a session; a person
	// reads it at every question otherwise.
	p.mu.Lock()
	q.Brief, q.UserFile = q.CanAlways() && p.explained, p.userFileShown()
	if q.CanAlways() {
		p.explained = true
	}
	p.mu.Unlock()
	ans, err := asker.Ask(ctx, q)
	if err == nil {
		p.answered(q, ans)
		if settle != nil {
			settle(ans)
		}
	}
	return ans, err
}

// only is a question that nothing asked earlier can settle.
func only(q Question) func() (Question, bool) {
	return func() (Question, bool) { return q, false }
}

// noter is how the asker shows a notice, or a notice dropped when it
// cannot.
func noter(asker Asker) func(text string, warn bool) {
	if n, ok := asker.(Noter); ok {
		return n.Note
	}
	return func(string, bool) {}
}

// answered records a person's answer in the session's record: an
// approval granted (with the rules "always" remembers) or refused, and
// why the person was asked.
func (p *Policy) answered(q Question, ans Answer) {
	if p.record == nil {
		return
	}
	d := memory.DecisionRecord{Time: time.Now().UTC(), Kind: "approval", By: memory.DecidedByPerson}
	switch {
	case ans.Remembers() && q.CanAlways() && q.Domain != "":
		d.Detail = "allowed to " + q.What() + ", and from now on every fetch from " + q.Domain
	case ans.Remembers() && q.CanAlways():
		d.Detail = "allowed to " + q.What() + ", and from now on commands of " + quoteRules(q.Remember)
	case !ans.Refused():
		d.Detail = "allowed to " + q.What() + " this once"
	default:
		d.Kind, d.Detail = "approval_refused", "refused to "+q.What()
	}
	d.Reason = "the person answered " + ans.Word() + " when asked"
	switch {
	case q.Unsandboxed:
		d.Reason += "; the command asked to run outside the sandbox, which is asked about every time"
	case len(q.Why) > 0:
		d.Reason += "; asked because " + strings.Join(q.Why, "; ")
	case len(q.Remember) > 0:
		d.Reason += "; no remembered rule allowed " + quoteRules(q.Remember)
	}
	p.record(d)
}

// remember adds rules for this process and saves them, in the person's
// own config or, shared, in the project's, telling the person where (or
// why not) when the asker can show a notice.
func (p *Policy) remember(asker Asker, rules []string, shared bool) {
	p.mu.Lock()
	for _, r := range rules {
		p.addRule(r)
	}
	p.mu.Unlock()
	note := noter(asker)
	if p.fs == nil || p.redactor.Contains(strings.Join(rules, "\n")) {
		// A rule holding a secret is never written to a file.
		note("allowed until ralph exits: "+quoteRules(rules), false)
		return
	}
	var errs []error
	where := config.UserFile(p.userDir)
	if shared {
		where = config.ProjectFile
	}
	for _, r := range rules {
		var err error
		if shared {
			err = saveRule(p.fs, p.user, p.root, p.userDir, r)
		} else {
			err = saveUserRule(p.user, p.userDir, r)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		note(fmt.Sprintf("could not save %s (%v); allowed until ralph exits", quoteRules(rules), err), true)
		return
	}
	note("allowed from now on: "+quoteRules(rules)+" (allowed_commands in "+where+")", false)
}

// userFileShown is the person's own config as a question names it, with
// the home directory as ~.
func (p *Policy) userFileShown() string {
	if p.userDir == "" {
		return ""
	}
	f := config.UserFile(p.userDir)
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rest, ok := strings.CutPrefix(f, home+"/"); ok {
			return "~/" + rest
		}
	}
	return f
}

// Describe states the policy for the model's system prompt, in one line:
// what happens to a command no rule allows. It names only what the
// person chose when ralph started (--yes, --permission-mode, a bare
// --allowed-tools Bash), never who happens to be there to answer, so the
// prompt, written once, stays true for the whole session.
func (p *Policy) Describe() string {
	switch {
	case p.neverAsk:
		return "never ask (--permission-mode dontAsk): a command no allowed rule covers is refused, and nobody is asked"
	case p.allowCommands && !p.yes:
		return "auto (--allowed-tools Bash): commands that stay in the sandbox run without asking; a command that asks to leave the sandbox (unsandboxed) waits for the user's approval"
	case p.yes:
		return "auto (--yes): commands that stay in the sandbox run without asking; a command that asks to leave the sandbox (unsandboxed) is refused"
	default:
		return "ask: a command no allowed rule covers waits for the user's approval, and is refused when nobody can answer"
	}
}
