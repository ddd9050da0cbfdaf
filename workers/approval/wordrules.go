package approval

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/text"
	"mvdan.cc/sh/v3/syntax"
)

// WordRule is a Bash allow rule a person wrote in a Claude Code settings
// file or in --allowed-tools, matched as Claude Code matches it: word by
// word against a simple command, never widened to the command's first
// word (or two) as the rules "always" remembers are. So Bash(rm foo.txt)
// allows `rm foo.txt` and not `rm -rf src`, and Bash(npm run test:*)
// allows `npm run test -- -v` and not `npm run build`.
type WordRule struct {
	// Rule is the rule as written ("Bash(npm run test:*)").
	Rule string
	// Words are the command's words as the shell splits them (quotes
	// removed: Bash(echo "a b":*) is the two words echo and a b).
	Words []string
	// Prefix is Claude Code's ":*" (or a trailing "*"): a command whose
	// first words are Words, at a word boundary. Without it the command
	// must be exactly Words.
	Prefix bool
}

// parseWordRule reads the pattern of a Bash(pattern) allow rule. A
// pattern must be one plain simple command whose words are all known
// without running anything; a command no rule ever covers (a shell,
// env, xargs: neverRules) is refused here as Analyze refuses it in a
// command line, so a rule never names what it could not allow.
func parseWordRule(rule, pattern string) (WordRule, error) {
	w := WordRule{Rule: rule, Prefix: strings.HasSuffix(pattern, "*")}
	line := commandOf(pattern)
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return w, fmt.Errorf("%q is not a command ralph's shell parser can read (%w)", rule, err)
	}
	if len(f.Stmts) != 1 {
		return w, fmt.Errorf("%q names %s; a rule names one", rule, text.Counted(len(f.Stmts), "command", "commands"))
	}
	st := f.Stmts[0]
	if call, ok := st.Cmd.(*syntax.CallExpr); !ok || len(call.Assigns) > 0 || len(st.Redirs) > 0 || st.Background || st.Negated {
		return w, fmt.Errorf("%q is not one plain command (no pipes, lists, redirections or variable settings)", rule)
	}
	a := Analyze(line)
	if len(a.commands) != 1 {
		why := "it names no command"
		if len(a.Asks) > 0 {
			why = a.Asks[0]
		}
		return w, fmt.Errorf("%q names no command ralph can allow by rule: %s", rule, why)
	}
	for _, x := range a.commands[0].words {
		if !x.known {
			return w, fmt.Errorf("%q holds a word ralph cannot know without running it", rule)
		}
		w.Words = append(w.Words, x.value)
	}
	return w, nil
}

// covers reports whether the rule allows a simple command with words:
// every word known and equal to the rule's, and no word more unless the
// rule is a prefix.
func (w WordRule) covers(words []arg) bool {
	if len(words) < len(w.Words) || !w.Prefix && len(words) != len(w.Words) {
		return false
	}
	for i, want := range w.Words {
		if !words[i].known || words[i].value != want {
			return false
		}
	}
	return true
}

// prefixWords are the words of a deny or ask pattern (in ask_before's
// syntax) read as Claude Code's word prefix, for the refusals and
// questions a settings file or --disallowed-tools gives: they match
// what askPattern's glob matching matches and also any command whose
// first words are these, so quoting (Bash(echo "a b":*)) never makes a
// refusal narrower than the person wrote it. nil when the pattern is not
// one readable command.
func prefixWords(pattern string) []string {
	if isToolRule(pattern) {
		return nil
	}
	w, err := parseWordRule(pattern, strings.TrimSuffix(strings.TrimSpace(pattern), "*")+":*")
	if err != nil {
		return nil
	}
	return w.Words
}

// plainWord is an argument an external agent's prefix rule can hold as
// it is: no spaces, quotes, globs or shell characters.
var plainWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.,/=+@%:-]+$`) })

// plainPrefix is the rule as the words of a prefix, when it is a prefix
// of plain words (Policy.Rules).
func (w WordRule) plainPrefix() (string, bool) {
	if !w.Prefix || len(w.Words) == 0 || !commandName().MatchString(w.Words[0]) {
		return "", false
	}
	for _, x := range w.Words[1:] {
		if !plainWord().MatchString(x) {
			return "", false
		}
	}
	return strings.Join(w.Words, " "), true
}
