package approval

import (
	"context"
	"strings"
	"testing"
)

// TestHookApprovalCoversItsFiles: a project's hook is asked about with
// everything it runs shown; "always" records it; a change of a file it
// names asks again, saying what changed; nobody to ask refuses it with
// how to approve it, and -y approves nothing of it.
func TestHookApprovalCoversItsFiles(t *testing.T) {
	h := ProjectHook{Event: "PreToolUse", Matcher: "Bash", Command: "node .claude/guard.js", Source: ".claude/settings.json",
		Files: []HookFile{{Path: ".claude/guard.js", SHA256: strings.Repeat("a", 64)}}}
	p, fs := newPolicy(t, Options{Yes: true})
	ctx := context.Background()
	if d := p.ApproveHook(ctx, h); d.Allowed || !d.Unasked ||
		d.Reason != "the PreToolUse hook `node .claude/guard.js` from .claude/settings.json was not approved on this machine and nobody can be asked here (there is no terminal to ask at); approve it with `ralph hooks approve`" {
		t.Fatalf("nobody to ask, under -y: %+v", d)
	}
	a := &scriptedAsker{answers: []Answer{Always, No}}
	p.SetAsker(a)
	if d := p.ApproveHook(ctx, h); !d.Allowed {
		t.Fatalf("always: %+v", d)
	}
	q := a.asked[0]
	for _, want := range []string{
		"run the PreToolUse hook `node .claude/guard.js` from .claude/settings.json? [y]es / [n]o / [t]ell it why not / [a]lways\n",
		"    runs file: .claude/guard.js (sha256 aaaaaaaaaaaa…)\n",
	} {
		if !strings.Contains(q.Text(), want) {
			t.Fatalf("the question lacks %q:\n%s", want, q.Text())
		}
	}
	if q.CanShare() || q.Help() != "" {
		t.Fatal("a hook is approved on this machine only")
	}
	if !HookApproved(fs, "/home/u/.config", testRoot, h) {
		t.Fatal("always did not record the hook")
	}
	changed := h
	changed.Files = []HookFile{{Path: ".claude/guard.js", SHA256: strings.Repeat("b", 64)}}
	if HookApproved(fs, "/home/u/.config", testRoot, changed) {
		t.Fatal("a changed script kept the approval")
	}
	if d := p.ApproveHook(ctx, changed); d.Allowed {
		t.Fatalf("no: %+v", d)
	}
	if txt := a.asked[1].Text(); !strings.Contains(txt, "it changed since you approved it on this machine:\n    .claude/guard.js: its content changed\n") {
		t.Fatalf("the second question does not say what changed:\n%s", txt)
	}
}

// TestHookNotAskedWhereNobodySaidTheyWouldAnswer: where other questions
// wait for `ralph answer` (a run without a terminal) but nobody said they
// would answer (--wait-for-answers), a hook is not asked about: it is
// refused at once, saying why, and the asker is never called.
func TestHookNotAskedWhereNobodySaidTheyWouldAnswer(t *testing.T) {
	h := ProjectHook{Event: "SessionStart", Command: "bd prime --hook-json", Source: ".claude/settings.json"}
	p, _ := newPolicy(t, Options{Yes: true})
	a := &scriptedAsker{answers: []Answer{Yes}}
	p.SetAsker(a)
	p.SetHookNobody("there is no terminal to ask at")
	if p.HookNobody() != "nobody can be asked here (there is no terminal to ask at)" {
		t.Fatalf("HookNobody: %q", p.HookNobody())
	}
	if d := p.ApproveHook(context.Background(), h); d.Allowed || !d.Unasked || len(a.asked) != 0 ||
		!strings.Contains(d.Reason, "nobody can be asked here (there is no terminal to ask at); approve it with `ralph hooks approve`") {
		t.Fatalf("asked %d, decided %+v", len(a.asked), d)
	}
	p.SetHookNobody("")
	if d := p.ApproveHook(context.Background(), h); !d.Allowed || len(a.asked) != 1 {
		t.Fatalf("with someone to ask: asked %d, decided %+v", len(a.asked), d)
	}
}
