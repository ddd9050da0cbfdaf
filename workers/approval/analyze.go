package approval

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/ralph-dev/ralph/memory/text"
)

// Analysis is what the shell parser found in one command line.
type Analysis struct {
	// Rules are the rules of the line's simple commands, each once, in
	// order: the rules "always" would remember.
	Rules []string
	// Asks are the reasons no rule can pre-approve the line, each a clause
	// for the question ("it writes to ~/.bashrc, outside the project").
	// When there is one, the line is asked about every time and "always"
	// is not offered: remembering its rules would not cover it next time.
	Asks []string
	// commands are the line's simple commands that have a rule, each with
	// its words as the shell splits them, for the rules a person wrote
	// word by word (WordRule).
	commands []simpleCommand
}

// simpleCommand is one simple command of a line: its rule in the form
// "always" remembers, and its words (the name as written, then the
// arguments as the program gets them).
type simpleCommand struct {
	rule  string
	words []arg
}

// Analyze parses command as bash does and reports the rule of each simple
// command in it, through lists, pipelines, subshells, blocks and the
// bodies of if, while, for and case, and everything that takes the line
// out of what a rule can cover. roots are the project's root directory as
// given and as resolved through symbolic links; a path is inside the
// project when it is under either.
//
// It is conservative: whatever it does not recognise as harmless, it
// reports, because the cost of a wrong answer is a question, while the
// cost of the opposite mistake is a command nobody approved.
func Analyze(command string, roots ...string) Analysis {
	return analyzeAt(command, place{roots: roots})
}

// place is where a command runs: the project's root directory as given
// and as resolved through symbolic links, and the directory it starts
// in, relative to the root and slash separated ("" for the root:
// run_command's workdir, tools.WorkdirOf). The paths a command names
// are read from dir, as the shell reads them.
type place struct {
	roots []string
	dir   string
}

// analyzeAt is Analyze of a command that runs at.
func analyzeAt(command string, at place) Analysis {
	a := &analyzer{roots: cleanRoots(at.roots), dir: at.dir}
	if hidden := hiddenControl(command); hidden != "" {
		// A control character can make the command look different on a
		// terminal from what runs; whatever it is for, it is shown and
		// asked about.
		a.ask("it holds the control character %s", hidden)
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		a.ask("ralph's shell parser cannot read it (%v)", err)
		return a.result()
	}
	syntax.Walk(f, a.visit)
	if len(a.rules) == 0 && len(a.asks) == 0 {
		a.ask("it runs no command ralph can name")
	}
	return a.result()
}

type analyzer struct {
	roots []string
	// dir is the directory the command starts in (place.dir).
	dir      string
	rules    []string
	asks     []string
	commands []simpleCommand
}

func (a *analyzer) result() Analysis {
	return Analysis{Rules: a.rules, Asks: a.asks, commands: a.commands}
}

// ask records a reason, once.
func (a *analyzer) ask(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	for _, have := range a.asks {
		if have == s {
			return
		}
	}
	a.asks = append(a.asks, s)
}

func (a *analyzer) rule(r string) {
	for _, have := range a.rules {
		if have == r {
			return
		}
	}
	a.rules = append(a.rules, r)
}

// visit judges one node of the syntax tree. Node types it does not list
// make the line ask, so a construct added to the parser later is asked
// about rather than let through.
func (a *analyzer) visit(n syntax.Node) bool {
	switch n := n.(type) {
	case nil:
		return false
	case *syntax.File, *syntax.Subshell, *syntax.Block, *syntax.IfClause, *syntax.WhileClause,
		*syntax.CaseClause, *syntax.CaseItem, *syntax.TimeClause, *syntax.Comment,
		*syntax.Word, *syntax.Lit, *syntax.DblQuoted:
		return true
	case *syntax.ForClause:
		// A loop variable can be PATH; and a loop is only useful with its
		// variable expanded, which is asked about anyway.
		a.ask("it runs a loop that sets a variable (for/select)")
		return true
	case *syntax.WordIter:
		return true // the loop's items; the ForClause asked already
	case *syntax.BinaryCmd:
		return true // &&, ||, | and |&: every side is judged on its own
	case *syntax.Stmt:
		if n.Background || n.Coprocess || n.Disown {
			a.ask("it starts a background job (&)")
		}
		return true
	case *syntax.CallExpr:
		a.call(n)
		return true
	case *syntax.Redirect:
		a.redirect(n)
		return true
	case *syntax.SglQuoted:
		if n.Dollar {
			a.ask("it uses $'…' quoting, which spells characters by their codes")
		}
		return true
	case *syntax.ParamExp:
		if !specialParam(n) {
			a.ask("it expands variables ($%s), so ralph cannot tell what runs or which paths it touches", paramName(n))
		}
		return false
	case *syntax.CmdSubst:
		a.ask("it substitutes commands ($(…) or backticks)")
		return false
	case *syntax.ProcSubst:
		a.ask("it substitutes processes (<(…) or >(…))")
		return false
	case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause, *syntax.CStyleLoop:
		a.ask("it evaluates shell arithmetic")
		return false
	case *syntax.FuncDecl:
		a.ask("it defines a shell function, which can stand in for any command")
		return false
	case *syntax.DeclClause:
		a.ask("it declares or exports variables (%s)", n.Variant.Value)
		return false
	case *syntax.Assign:
		a.ask("it sets variables (%s=…), which can change what a command does", assignName(n))
		return false
	case *syntax.ExtGlob:
		a.ask("it uses extended glob patterns")
		return false
	case *syntax.TestClause:
		a.ask("it uses a [[ … ]] test")
		return false
	case *syntax.CoprocClause:
		a.ask("it starts a coprocess")
		return false
	default:
		a.ask("it uses shell syntax ralph does not pre-approve (%T)", n)
		return false
	}
}

// specialParam reports $?, $$, $# and $!: numbers, never a path or a
// command.
func specialParam(p *syntax.ParamExp) bool {
	if p.Param == nil || !p.Short || p.Index != nil || p.Exp != nil || p.Repl != nil || p.Slice != nil || p.Excl || p.Length {
		return false
	}
	switch p.Param.Value {
	case "?", "$", "#", "!":
		return true
	}
	return false
}

func paramName(p *syntax.ParamExp) string {
	if p.Param != nil {
		return p.Param.Value
	}
	return "…"
}

func assignName(as *syntax.Assign) string {
	if as.Name != nil {
		return as.Name.Value
	}
	return "…"
}

var (
	// commandName is a command written plainly: no quotes, escapes,
	// globs or expansions, so the name a rule matches is the program that
	// runs. "[" is the test command.
	commandName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z0-9_./][A-Za-z0-9._+@%:/-]*|\[)$`) })
	// subcommandName is a launcher's subcommand or target.
	subcommandName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._+@:/-]*$`) })
)

// call judges one simple command and records its rule.
func (a *analyzer) call(c *syntax.CallExpr) {
	if len(c.Args) == 0 {
		return // assignments only; each Assign asks on its own
	}
	name, ok := plainLit(c.Args[0])
	if !ok || !commandName().MatchString(name) {
		a.ask("its command name is quoted, escaped or computed (%s), so no rule can match it", wordSource(c.Args[0]))
		return
	}
	base := name
	if strings.Contains(name, "/") {
		if out, _ := a.outside(name, false); out {
			a.ask("it runs %s, a program outside the project", name)
			return
		}
		base = path.Base(name)
	}
	args := make([]arg, 0, len(c.Args)-1)
	for _, w := range c.Args[1:] {
		args = append(args, a.argValue(w))
	}
	if why, never := neverRules[base]; never {
		a.ask("`%s` %s", base, why)
		return
	}
	rule := name
	if launchers[base] && len(args) > 0 {
		sub := args[0]
		switch {
		case strings.HasPrefix(sub.value, "-"):
			a.ask("`%s` takes an option (%s) before its subcommand, and rules cover only `%s <subcommand>`", name, sub.value, name)
			return
		case !sub.plain || !subcommandName().MatchString(sub.value):
			a.ask("the subcommand of `%s` is quoted, escaped or computed (%s)", name, wordSource(c.Args[1]))
			return
		}
		rule = name + " " + sub.value
	}
	a.special(base, args)
	for _, x := range args {
		a.checkArg(x)
	}
	a.rule(rule)
	a.commands = append(a.commands, simpleCommand{rule: rule, words: append([]arg{{value: name, known: true, plain: true}}, args...)})
}

// arg is one argument's value as the shell would pass it, when it can be
// known without running anything.
type arg struct {
	value string
	known bool // no expansion: value is exactly what the program gets
	plain bool // one unquoted, unescaped literal
	glob  bool // unquoted glob characters: the shell may replace it with matching paths
}

// argValue reads a word the way the shell would, without running it.
// Words with expansions are not known; the walk asks about those.
func (a *analyzer) argValue(w *syntax.Word) arg {
	x := arg{known: true, plain: len(w.Parts) == 1}
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if strings.ContainsAny(v, `\`) {
				x.plain = false
			}
			if hasUnescaped(v, "*?[") {
				x.glob = true
			}
			b.WriteString(unescape(v))
		case *syntax.SglQuoted:
			x.plain = false
			if p.Dollar {
				x.known = false // the walk asks about $'…'
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			x.plain = false
			for _, dp := range p.Parts {
				lit, ok := dp.(*syntax.Lit)
				if !ok {
					x.known = false
					continue
				}
				b.WriteString(unescapeDouble(lit.Value))
			}
		default:
			x.known, x.plain = false, false
		}
	}
	x.value = b.String()
	if braced(w) {
		// Also across quotes: {rm,"x"} is the two words rm and x.
		a.ask("it uses brace expansion (%s)", wordSource(w))
	}
	return x
}

// checkArg asks when an argument names a path outside the project: the
// argument itself, the value of an --option=value or a key=value, or the
// value glued to a short option (-o/tmp/x).
func (a *analyzer) checkArg(x arg) {
	if !x.known {
		return
	}
	for _, v := range pathCandidates(x.value) {
		if out, why := a.outside(v, x.glob); out {
			a.ask("it names %s, %s", v, why)
			return
		}
	}
}

func pathCandidates(v string) []string {
	if strings.HasPrefix(v, "-") {
		if _, val, ok := strings.Cut(v, "="); ok {
			return []string{val}
		}
		if len(v) > 2 && v[1] != '-' {
			return []string{v[2:]}
		}
		return nil
	}
	if name, val, ok := strings.Cut(v, "="); ok && name != "" {
		return []string{v, val}
	}
	return []string{v}
}

// devices are the paths outside the project a command may always use.
var devices = map[string]bool{
	"/dev/null": true, "/dev/stdin": true, "/dev/stdout": true, "/dev/stderr": true,
	"/dev/fd/0": true, "/dev/fd/1": true, "/dev/fd/2": true, "/dev/zero": true,
}

// outside reports whether p, relative to the directory the command
// starts in (a.dir under the project root), leads out of the project or
// into .git or .ralph, which no rule covers (git's hooks and config run
// code; ralph's config holds the rules themselves). With glob, each path
// component is a pattern, and one that could match ".." or ".git"
// counts as if it did.
func (a *analyzer) outside(p string, glob bool) (bool, string) {
	const out = "outside the project"
	switch {
	case p == "":
		return false, ""
	case strings.HasPrefix(p, "~"):
		return true, "in a home directory outside the project"
	case devices[p]:
		return false, ""
	}
	rel := p
	if filepath.IsAbs(p) {
		clean := filepath.Clean(p)
		rel = ""
		for _, r := range a.roots {
			if r2, err := filepath.Rel(r, clean); err == nil && r2 != ".." && !strings.HasPrefix(r2, "../") {
				rel = r2
				break
			}
		}
		if rel == "" {
			return true, out
		}
	} else if a.dir != "" {
		rel = a.dir + "/" + rel
	}
	comps := strings.Split(filepath.ToSlash(rel), "/")
	depth := 0
	for _, c := range comps {
		switch {
		case c == "" || c == ".":
			continue
		case c == ".." || glob && matches(c, ".."):
			depth--
			if depth < 0 {
				return true, out
			}
			continue
		}
		if depth == 0 && (c == ".git" || c == ".ralph" || glob && (matches(c, ".git") || matches(c, ".ralph"))) {
			return true, "inside .git or .ralph, which rules never cover"
		}
		depth++
	}
	return false, ""
}

// isRoot reports whether p names the project root itself.
func (a *analyzer) isRoot(p string) bool {
	if filepath.IsAbs(p) {
		clean := filepath.Clean(p)
		for _, r := range a.roots {
			if clean == r {
				return true
			}
		}
		return false
	}
	return path.Clean(path.Join(a.dir, filepath.ToSlash(p))) == "."
}

func matches(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return ok || err != nil
}

func cleanRoots(roots []string) []string {
	var out []string
	for _, r := range roots {
		if r != "" {
			out = append(out, filepath.Clean(r))
		}
	}
	return out
}

// plainLit returns a word that is one unquoted literal without escapes.
func plainLit(w *syntax.Word) (string, bool) {
	if len(w.Parts) != 1 {
		return "", false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok || strings.ContainsAny(l.Value, `\*?[{}~`) && l.Value != "[" {
		return "", false
	}
	return l.Value, true
}

// wordSource is a word as it was written, for a question.
func wordSource(w *syntax.Word) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, w); err != nil {
		return "?"
	}
	return b.String()
}

// hasUnescaped reports whether an unquoted literal holds one of chars
// that a backslash does not escape.
func hasUnescaped(v, chars string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' {
			i++
			continue
		}
		if strings.IndexByte(chars, v[i]) >= 0 {
			return true
		}
	}
	return false
}

// unescape removes the backslashes of an unquoted literal.
func unescape(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
			if v[i] == '\n' {
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// unescapeDouble removes the backslashes that escape inside double quotes.
func unescapeDouble(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("$`\"\\\n", v[i+1]) >= 0 {
			i++
			if v[i] == '\n' {
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// hiddenControl returns the first control character of s other than
// newline and tab, made visible, or "".
func hiddenControl(s string) string {
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f {
			return text.Visible(string(r))
		}
	}
	return ""
}
