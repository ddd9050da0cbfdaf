package approval

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// askBefore holds the person's ask_before patterns: commands and files
// that always need a person, whatever --yes or a remembered rule says.
// Each pattern is tried both ways, since a list like ["git push*",
// "go.mod"] does not say which is which: as a command (its words against
// a simple command's words) and as a path (against a file a tool or a
// redirection writes). A pattern meant as a path never matches a real
// command's name, and the other way round, so trying both costs nothing.
//
// It errs towards asking: a command whose name or arguments ralph cannot
// know without running it (a variable, a substitution) counts as matching
// a command pattern, as does a line the parser cannot read.
type askBefore struct {
	patterns []askPattern
	// origins name the settings file's rule each pattern came from, by
	// the pattern's text (ToolRules.DenyFrom, AskFrom); nil for
	// ask_before's and --disallowed-tools' own.
	origins map[string]Origin
}

// from is ab with the origins of its patterns.
func (ab askBefore) from(origins map[string]Origin) askBefore {
	ab.origins = origins
	return ab
}

// traced is a match with the origin of its pattern.
func (ab askBefore) traced(m askMatch, ok bool) (askMatch, bool) {
	if ok {
		m.origin = ab.origins[m.pattern]
	}
	return m, ok
}

type askPattern struct {
	text  string           // as the person wrote it
	words []*regexp.Regexp // the command pattern, word by word
	src   []string         // words as the person spelled them
	opts  []bool           // which of words are options ("-r*")
	// prefix are the pattern's words as the shell splits them: a command
	// that begins with them matches too (prefixWords), so a pattern
	// with quotes refuses at least what Claude Code's prefix would.
	prefix []string
	path   *regexp.Regexp // the path pattern
	base   bool           // the path pattern has no "/": it matches a file's name at any depth
	dir    bool           // the path pattern ends in "/": it matches everything under it
}

func newAskBefore(patterns []string) askBefore {
	var ab askBefore
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		ap := askPattern{text: p, prefix: prefixWords(p)}
		for _, w := range strings.Fields(p) {
			ap.words = append(ap.words, globRe(w, true))
			ap.src = append(ap.src, w)
			ap.opts = append(ap.opts, strings.HasPrefix(w, "-"))
		}
		pp := strings.TrimPrefix(strings.TrimPrefix(p, "./"), "/")
		ap.dir = strings.HasSuffix(pp, "/")
		pp = strings.TrimSuffix(pp, "/")
		ap.base = !strings.Contains(pp, "/") && !ap.dir
		ap.path = globPathRe(pp)
		ab.patterns = append(ab.patterns, ap)
	}
	return ab
}

func (ab askBefore) empty() bool { return len(ab.patterns) == 0 }

// askMatch is why a command or a file change needs a person.
type askMatch struct {
	pattern string // the ask_before pattern that matched
	what    string // what matched it, for the question
	origin  Origin // the settings file's rule it came from, if one did
}

func (m askMatch) reason() string {
	return fmt.Sprintf("%s matches %s: it always needs a person, even with --yes or an \"always\" rule", m.rule(), m.what)
}

// rule names the pattern as the person wrote it: an ask_before pattern,
// or a settings file's rule with the file.
func (m askMatch) rule() string {
	if m.origin.File != "" {
		return m.origin.String()
	}
	return fmt.Sprintf("ask_before %q", m.pattern)
}

// where is rule for a refusal: ask_before's pattern is in the config.
func (m askMatch) where() string {
	if m.origin.File != "" {
		return m.origin.String()
	}
	return fmt.Sprintf("ask_before %q in the config", m.pattern)
}

// tool reports the first pattern that an MCP tool's full name
// (mcp__server__tool) matches: a pattern of one word, as a command pattern
// is written, so "mcp__github__*" holds every tool of that server.
func (ab askBefore) tool(name string) (askMatch, bool) {
	for _, p := range ab.patterns {
		if len(p.words) == 1 && !p.opts[0] && p.words[0].MatchString(name) {
			return ab.traced(askMatch{pattern: p.text, what: "the MCP tool call " + name}, true)
		}
	}
	return askMatch{}, false
}

// command reports the first pattern that a simple command of line, or a
// file it writes through a redirection or a file-changing command,
// matches.
func (ab askBefore) command(line string, at place) (askMatch, bool) {
	if ab.empty() {
		return askMatch{}, false
	}
	at.roots = cleanRoots(at.roots)
	return ab.traced(ab.commandDepth(line, "", at, 0))
}

// maxNesting bounds how deep `bash -c "…"` inside `bash -c "…"` is read.
const maxNesting = 4

// commandDepth judges a line at some depth of nesting; env, when not "",
// is why the environment the line inherits may steer git (judgeGit).
func (ab askBefore) commandDepth(line, env string, at place, depth int) (askMatch, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil || depth > maxNesting {
		return ab.unreadable(line)
	}
	if env == "" {
		env = lineGitEnv(f, depth)
	}
	var found askMatch
	ok := false
	a := &analyzer{roots: at.roots, dir: at.dir}
	syntax.Walk(f, func(n syntax.Node) bool {
		if ok {
			return false
		}
		switch n := n.(type) {
		case *syntax.Stmt:
			found, ok = ab.shellInput(n, a, env, at, depth)
		case *syntax.CallExpr:
			// As the program gets them: braces expanded, patterns
			// marked (ruleWords).
			words := a.ruleWords(n.Args)
			// Its own NAME=value settings are in env already: lineGitEnv
			// reads every setting of the line.
			found, ok = ab.call(words, env, at, depth)
		case *syntax.Redirect:
			if writes(n.Op) {
				if x := a.argValue(n.Word); x.known {
					found, ok = ab.file(x.value, at, "a redirection to "+x.value)
				}
			}
		}
		return true
	})
	return found, ok
}

// unreadable judges a line the shell parser cannot read (or nests too
// deep) by its text: a pattern's literal start anywhere in it counts.
func (ab askBefore) unreadable(line string) (askMatch, bool) {
	for _, p := range ab.patterns {
		lit := p.text
		if i := strings.IndexAny(lit, "*?["); i >= 0 {
			lit = lit[:i]
		}
		if strings.Contains(line, strings.TrimSpace(lit)) {
			return askMatch{pattern: p.text, what: "a command ralph's shell parser cannot read"}, true
		}
	}
	return askMatch{}, false
}

// writes reports the redirections that write a file.
func writes(op syntax.RedirOperator) bool {
	switch op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut, syntax.RdrClob, syntax.AppClob:
		return true
	}
	return false
}

// fileChangers are commands whose arguments name files they change
// (create, overwrite, move away, remove or truncate).
var fileChangers = map[string]bool{
	"cp": true, "mv": true, "rm": true, "tee": true, "touch": true, "truncate": true, "ln": true,
	"install": true, "chmod": true, "shred": true, "unlink": true,
}

// call judges one simple command: its own words against the command
// patterns, the files it changes against the path patterns, and, for a
// command that runs another (sudo, env, xargs, bash -c, eval), the
// command inside it. env is why its environment may steer git.
func (ab askBefore) call(words []arg, env string, at place, depth int) (askMatch, bool) {
	if len(words) == 0 {
		return askMatch{}, false
	}
	if m, ok := ab.simple(words, env, at, depth); ok {
		return m, true
	}
	shown := joinWords(words)
	name := path.Base(words[0].value)
	if fileChangers[name] {
		for _, x := range words[1:] {
			if x.known && !strings.HasPrefix(x.value, "-") {
				if m, ok := ab.file(x.value, at, "`"+shown+"`"); ok {
					return m, true
				}
			}
		}
	}
	switch why := neverRules[name]; {
	case name == "alias" || name == "hash":
		return ab.rebound(name, words, env, at, depth)
	case why == runsShell:
		if text, ok := shellCommand(words); ok {
			return ab.commandDepth(text, env, at, depth+1)
		}
	case name == "eval":
		return ab.commandDepth(joinWords(words[1:]), env, at, depth+1)
	case name == "find" || name == "fd" || name == "fdfind":
		// find -exec CMD …; and fd -x CMD run CMD on what they find.
		for i := 1; i+1 < len(words); i++ {
			switch words[i].value {
			case "-exec", "-execdir", "-ok", "-okdir", "-x", "-X", "--exec", "--exec-batch":
				if m, ok := ab.simple(words[i+1:], env, at, depth); ok {
					return m, true
				}
			}
		}
	case why == runsCommand || why == asAnother:
		// The wrapped command starts at some later word (after options,
		// a duration, variable settings); any of them may be its name.
		// env's NAME=value words before it are its environment, and
		// xargs and parallel add arguments read from their input.
		inner := env
		for i := 1; i < len(words); i++ {
			w := words[i]
			if name == "env" && (w.value == "-S" || w.value == "--split-string") && i+1 < len(words) && words[i+1].known {
				return ab.commandDepth(words[i+1].value, inner, at, depth+1)
			}
			if n, v, ok := strings.Cut(w.value, "="); inner == "" && w.known && ok && gitEnvSteers(n, v, true) {
				inner = gitEnvReason(n)
			} else if inner == "" && !w.known {
				inner = "a word before it that ralph cannot read may set git's environment"
			}
			if i > 0 && w.known && strings.ContainsAny(w.value, " \t\n;&|") {
				// A word that is a command line of its own: watch "…",
				// su -c "…", script -c "…", flock f -c "…".
				if m, ok := ab.commandDepth(w.value, inner, at, depth+1); ok {
					return m, true
				}
			}
			rest := words[i:]
			if name == "xargs" || name == "parallel" {
				rest = append(slices.Clone(rest), arg{})
			}
			if m, ok := ab.simple(rest, inner, at, depth); ok {
				return m, true
			}
		}
	}
	return askMatch{}, false
}

// shellInput judges a shell that reads its commands from its input
// (`sh <<< "git push"`, `echo … | bash`): the text of a here-document or
// here-string as a command line, and input ralph cannot see as a command
// it cannot know, which matches every command pattern.
func (ab askBefore) shellInput(st *syntax.Stmt, a *analyzer, env string, at place, depth int) (askMatch, bool) {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return askMatch{}, false
	}
	words := a.ruleWords(call.Args)
	if len(words) == 0 || !words[0].known || neverRules[path.Base(words[0].value)] != runsShell || !readsInput(words) {
		return askMatch{}, false
	}
	for _, r := range st.Redirs {
		var w *syntax.Word
		switch r.Op {
		case syntax.WordHdoc:
			w = r.Word
		case syntax.Hdoc, syntax.DashHdoc:
			w = r.Hdoc
		}
		if w == nil {
			continue
		}
		if x := a.argValue(w); x.known {
			return ab.commandDepth(x.value, env, at, depth+1)
		}
	}
	shown := "`" + joinWords(words) + "` reading commands from its input, which ralph cannot see"
	for _, p := range ab.patterns {
		if !p.fileLike() {
			return askMatch{pattern: p.text, what: shown}, true
		}
	}
	return askMatch{}, false
}

// readsInput reports a shell given neither -c nor a script: it runs what
// its input says.
func readsInput(words []arg) bool {
	if _, ok := shellCommand(words); ok {
		return false
	}
	for i := 1; i < len(words); i++ {
		v := words[i].value
		switch {
		case !words[i].known:
			return false
		case v == "-o" || v == "+o" || v == "-O" || v == "+O" || v == "--rcfile" || v == "--init-file":
			i++
		case v == "-" || v == "--":
			return true
		case !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "+"):
			return false // a script, or an argument ralph does not follow
		}
	}
	return true
}

// shellCommand finds the command text of `sh -c TEXT`, also when -c is
// in a cluster (`bash -lc TEXT`) or other options come between: TEXT is
// the first word after it that is not an option.
func shellCommand(words []arg) (string, bool) {
	for i := 1; i < len(words); i++ {
		v := words[i].value
		if !words[i].known || !strings.HasPrefix(v, "-") || strings.HasPrefix(v, "--") || !strings.Contains(v, "c") {
			continue
		}
		for _, x := range words[i+1:] {
			if !x.known {
				return "", false
			}
			if !strings.HasPrefix(x.value, "-") {
				return x.value, true
			}
		}
	}
	return "", false
}

// simple judges one command as it stands (no wrapper unwrapped): its
// words against every command pattern and, for git, what git will do
// (judgeGit): a command that may do anything git does matches every
// pattern for git, plumbing matches the porcelain it does the work of,
// and shell commands git runs are judged in turn.
func (ab askBefore) simple(words []arg, env string, at place, depth int) (askMatch, bool) {
	if len(words) == 0 {
		return askMatch{}, false
	}
	shown := "`" + joinWords(words) + "`"
	for _, p := range ab.patterns {
		if p.matchesCommand(words) {
			return askMatch{pattern: p.text, what: shown}, true
		}
	}
	if m, ok := ab.inline(words); ok {
		return m, true
	}
	gw, ok := gitWords(words)
	if !ok {
		return askMatch{}, false
	}
	g := judgeGit(gw, env)
	if g.anything() {
		for _, p := range ab.patterns {
			if p.forGit() {
				return askMatch{pattern: p.text, what: shown + ", which may run any git command (" + g.why + ")"}, true
			}
		}
	}
	for _, sub := range g.does {
		as := slices.Clone(gw)
		as[g.at] = arg{value: sub, known: true, plain: true}
		for _, p := range ab.patterns {
			if p.matchesCommand(as) {
				return askMatch{pattern: p.text, what: fmt.Sprintf("%s, which does the work of `git %s`", shown, sub)}, true
			}
		}
	}
	for _, sh := range g.shells {
		if m, ok := ab.commandDepth(sh, env, at, depth+1); ok {
			m.what = shown + ", which runs " + m.what
			return m, true
		}
	}
	return askMatch{}, false
}

// forGit reports a command pattern whose program is git.
func (p askPattern) forGit() bool {
	return len(p.words) > 0 && !p.fileLike() && p.words[0].MatchString("git")
}

// matchesCommand reports whether words (a simple command as the shell
// passes it) match the pattern. Its first word names the command (a
// path's last element counts). A later word that is an option ("-r*")
// matches any later argument, and also a cluster of short options
// holding it ("-fr"); any other word (a subcommand: "push*") matches the
// next argument that is not an option or, possibly, an option's value, so
// `git -C dir push` is a push and `git log --grep push` is not. A word
// ralph cannot know matches anything.
func (p askPattern) matchesCommand(words []arg) bool {
	if len(p.words) == 0 || len(words) == 0 {
		return false
	}
	if len(p.prefix) > 0 && (WordRule{Words: p.prefix, Prefix: true}).covers(words) {
		return true
	}
	name := words[0]
	base := name
	base.value = path.Base(name.value)
	switch {
	case !name.known && p.fileLike():
		// A computed command name could be anything, but not sensibly a
		// pattern that names a file.
		return false
	case name.known && !couldBe(name, p.words[0], p.src[0]) && !couldBe(base, p.words[0], p.src[0]):
		// A pattern in the name (/bin/r?) may be any program it matches.
		return false
	}
	j := 1
	for i, pw := range p.words[1:] {
		k := j
		if p.opts[i+1] {
			for ; k < len(words); k++ {
				if couldBe(words[k], pw, p.src[i+1]) || !words[k].glob && shortCluster(pw, words[k].value) {
					break
				}
			}
		} else {
			k = nextPositional(pw, p.src[i+1], words, j)
		}
		if k >= len(words) {
			return false
		}
		j = k + 1
	}
	return true
}

// nextPositional finds, from words[j], the argument that pw must match:
// options are skipped, and so is a word right after an option without a
// value of its own when it does not match (it is likely that option's
// value); the first other argument must match. It returns len(words) when
// none does.
func nextPositional(pw *regexp.Regexp, src string, words []arg, j int) int {
	mayBeValue := false
	for ; j < len(words); j++ {
		w := words[j]
		switch {
		case couldBe(w, pw, src):
			return j
		case strings.HasPrefix(w.value, "-") && w.value != "-":
			mayBeValue = !strings.Contains(w.value, "=")
		case mayBeValue:
			mayBeValue = false
		default:
			return len(words)
		}
	}
	return j
}

// fileLike reports a pattern whose first word looks like a file name
// (go.mod, *.sql, src/x) rather than a program.
func (p askPattern) fileLike() bool {
	first, _, _ := strings.Cut(p.text, " ")
	return strings.ContainsAny(first, "./")
}

// shortCluster reports whether v is a cluster of single-letter options
// ("-fr") holding one that pattern word pw matches on its own ("-r").
func shortCluster(pw *regexp.Regexp, v string) bool {
	if len(v) < 3 || v[0] != '-' || v[1] == '-' {
		return false
	}
	for _, c := range v[1:] {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	for _, c := range v[1:] {
		if pw.MatchString("-" + string(c)) {
			return true
		}
	}
	return false
}

// file judges a path a command or a tool writes: relative to the
// directory the command runs in (at.dir under the project root; a tool's
// paths are relative to the root), or absolute inside the project.
func (ab askBefore) file(p string, at place, what string) (askMatch, bool) {
	rel := filepath.ToSlash(p)
	if !filepath.IsAbs(p) && at.dir != "" {
		rel = at.dir + "/" + rel
	} else if filepath.IsAbs(p) {
		for _, r := range at.roots {
			if r2, err := filepath.Rel(r, filepath.Clean(p)); err == nil && r2 != ".." && !strings.HasPrefix(r2, "../") {
				rel = filepath.ToSlash(r2)
				break
			}
		}
	}
	rel = path.Clean(rel)
	for _, pt := range ab.patterns {
		if pt.matchesPath(rel) {
			return askMatch{pattern: pt.text, what: what}, true
		}
	}
	return askMatch{}, false
}

// matchesPath reports whether rel, a cleaned slash-separated path
// relative to the project root, matches the path pattern. Letter case is
// ignored: on a file system that ignores it, GO.MOD is go.mod.
func (p askPattern) matchesPath(rel string) bool {
	switch {
	case p.base:
		return p.path.MatchString(path.Base(rel))
	case p.dir:
		for d := rel; d != "." && d != "/" && d != ""; d = path.Dir(d) {
			if p.path.MatchString(d) {
				return true
			}
		}
		return false
	}
	return p.path.MatchString(rel)
}

// path reports the first pattern a file that write_file or edit_file
// changes matches; paths are the file as the model named it and as it
// resolves, relative to the project root.
func (ab askBefore) path(tool string, paths ...string) (askMatch, bool) {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if m, ok := ab.file(p, place{}, fmt.Sprintf("%s %s", tool, paths[0])); ok {
			return ab.traced(m, true)
		}
	}
	return askMatch{}, false
}

func joinWords(words []arg) string {
	s := make([]string, len(words))
	for i, w := range words {
		s[i] = w.value
		if !w.known {
			s[i] = "…"
		}
	}
	return strings.Join(s, " ")
}

// globRe compiles a shell glob: * any run of characters, ? one, [...] a
// class. For a command's word, * crosses slashes too.
func globRe(g string, crossSlash bool) *regexp.Regexp {
	star, one := "[^/]*", "[^/]"
	if crossSlash {
		star, one = ".*", "."
	}
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*':
			if !crossSlash && i+1 < len(g) && g[i+1] == '*' {
				b.WriteString(".*") // ** crosses directories
				i++
				continue
			}
			b.WriteString(star)
		case '?':
			b.WriteString(one)
		case '[':
			end := strings.IndexByte(g[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := g[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return regexp.MustCompile("^" + regexp.QuoteMeta(g) + "$")
	}
	return re
}

// globPathRe compiles a path pattern, ignoring letter case.
func globPathRe(g string) *regexp.Regexp {
	re := globRe(g, false)
	return regexp.MustCompile("(?i)" + re.String())
}
