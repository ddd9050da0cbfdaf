package approval

import (
	"context"
	"strings"
	"testing"
)

// TestDenyRulesJudgeTheWordsTheShellMakes (issue 88, gap B): under -y a
// deny rule refuses a command however the shell spells its words:
// braces expanded (also across quotes, and nested), a pathname pattern
// in the command's name counted as any program, one in an argument as
// any name it matches; what the shell leaves as it is stays allowed.
func TestDenyRulesJudgeTheWordsTheShellMakes(t *testing.T) {
	r, err := ParseToolRules(nil, []string{"Bash(rm:*)", "Bash(git push:*)", "Bash(cp -r:*)"})
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Root: t.TempDir(), Tools: r, Yes: true})
	ctx := context.Background()
	for cmd, want := range map[string]bool{
		// Refused: each is rm, git push or cp -r when bash runs it.
		"{rm,secret.txt}":                     false,
		`{rm,"secret.txt"}`:                   false,
		"{r,}{m,} secret.txt":                 false,
		"/bin/r? secret.txt":                  false,
		"/usr/bin/r* secret.txt":              false,
		"/bin/r[m] secret.txt":                false,
		"/usr/bin/e?v rm secret.txt":          false,
		"/bin/ba?h -c 'echo hi'":              false,
		"echo ok; {rm,-f,secret.txt}":         false,
		"git {push,origin,main}":              false,
		"git pus? origin":                     false,
		"git pus[h] origin":                   false,
		"cp * /tmp/x":                         false,
		"cp -? a b":                           false,
		"sudo {rm,x}":                         false,
		"x=1 {rm,x}":                          false,
		"{a..z}{a..z}{a..z} secret.txt":       false, // too many words to expand: not known
		"R=rm; $R secret.txt":                 false,
		"bash -c '{rm,secret.txt}'":           false,
		"bash -c '/bin/r? secret.txt'":        false,
		"find . -name x -exec {rm,-f} {} \\;": false,
		// A name bound to rm by another builtin is rm.
		"shopt -s expand_aliases\nalias r=rm\nr secret.txt": false,
		"alias r='rm -f'":                 false,
		"alias r=\"$X\"":                  false,
		"hash -p /bin/rm r; r secret.txt": false,
		"alias ll='ls -l'":                true,
		// Allowed: nothing here is rm, git push or cp -r.
		"ls *.go":                             true,
		"echo {a,b}":                          true,
		"cp *.txt d/":                         true,
		"git add *.go":                        true,
		"git log --oneline -- '*.go'":         true,
		"[ -f go.mod ] && echo yes":           true,
		"find . -name '*.go' -exec ls {} \\;": true,
		"echo '{rm,secret.txt}'":              true,
		`\{rm,secret.txt}`:                    true,
		"touch a{1..3}.txt":                   true,
	} {
		d := p.ApproveCommand(ctx, cmd)
		if d.Allowed != want {
			t.Errorf("%q: allowed %v, want %v (%s)", cmd, d.Allowed, want, d.Reason)
		}
		if !want && !strings.Contains(d.Reason, "--disallowed-tools") {
			t.Errorf("%q: the refusal does not name the rule: %s", cmd, d.Reason)
		}
	}
}

// TestAllowRulesCoverNoRewrittenName: an allow rule never covers a
// command whose name the shell rewrites, nor a launcher's subcommand so
// spelled: without -y such a line is asked about (refused where nobody
// can be asked).
func TestAllowRulesCoverNoRewrittenName(t *testing.T) {
	r, err := ParseToolRules([]string{"Bash(ls:*)", "Bash(echo:*)", "Bash(git status:*)"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Root: t.TempDir(), Tools: r, NeverAsk: true})
	ctx := context.Background()
	for cmd, want := range map[string]bool{
		"ls -la":             true,
		"/bin/l? -la":        false,
		"{ls,-la}":           false,
		`{ls,"-la"}`:         false,
		"l[s]":               false,
		"git {status,push}":  false,
		"git statu?":         false,
		"echo {a,\"b\"}":     false,
		"echo hi; {touch,x}": false,
	} {
		if d := p.ApproveCommand(ctx, cmd); d.Allowed != want {
			t.Errorf("%q: allowed %v, want %v (%s)", cmd, d.Allowed, want, d.Reason)
		}
	}
}
