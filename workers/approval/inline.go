package approval

import (
	"path"
	"regexp"
	"strings"
	"sync"
)

// An interpreter given its program inline (`python3 -c "…"`, `perl -e
// '…'`, `awk 'BEGIN{system("…")}'`) runs whatever commands that program
// starts, and ralph cannot read a program the way it reads a shell line.
// So for ask_before the program text is a tripwire, not a sandbox: when
// it names a command pattern's program as a word (`git` for "git
// push*"), the command counts as matching that pattern. A script in a
// file (`python3 x.py`, `make`, `./script.sh`) stays out of reach.

// inlineFlags are, per interpreter, the options whose value is program
// text: short letters (which may end a cluster, as perl's -ne does) and
// long options.
type inlineFlags struct {
	short string   // letters, each an option taking the program
	long  []string // long options taking the program
	sub   string   // a subcommand taking the program (deno eval)
	awk   bool     // the first word that is no option is the program
}

var interpreters = map[string]inlineFlags{
	"python": {short: "c"}, "python2": {short: "c"}, "python3": {short: "c"}, "pypy": {short: "c"}, "pypy3": {short: "c"},
	"perl": {short: "eE"}, "ruby": {short: "e"}, "lua": {short: "e"}, "luajit": {short: "e"},
	"node": {short: "ep", long: []string{"--eval", "--print"}}, "nodejs": {short: "ep", long: []string{"--eval", "--print"}},
	"bun": {short: "e", long: []string{"--eval"}}, "deno": {sub: "eval"},
	"php": {short: "r"}, "Rscript": {short: "e"}, "R": {short: "e"},
	"awk": {awk: true}, "gawk": {awk: true}, "mawk": {awk: true}, "nawk": {awk: true},
}

// interpreterVersion is the version some interpreters' names end in
// (python3.12, perl5.36, lua5.4).
var interpreterVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[0-9.]+$`) })

// inlinePrograms returns the program texts an interpreter command is
// given inline (every candidate: `perl -Mre -e …` reads as a cluster
// ending in e, then as -e); unknown is set when a word ralph cannot read
// may hold one. ok is false for a command that is no interpreter given
// its program inline.
func inlinePrograms(words []arg) (texts []string, unknown, ok bool) {
	if len(words) < 2 || !words[0].known {
		return nil, false, false
	}
	name := path.Base(words[0].value)
	f, found := interpreters[name]
	if !found {
		f, found = interpreters[interpreterVersion().ReplaceAllString(name, "")]
	}
	if !found {
		return nil, false, false
	}
	// take adds the word at j as a program text.
	take := func(j int) {
		if j < len(words) {
			if words[j].known {
				texts = append(texts, words[j].value)
			} else {
				unknown = true
			}
		}
	}
	for i := 1; i < len(words); i++ {
		w := words[i]
		v := w.value
		switch {
		case !w.known:
			unknown = true
			if f.awk {
				i = len(words) // the program, or an option ralph cannot read
			}
		case f.sub != "" && v == f.sub, containsString(f.long, v):
			take(i + 1)
			i++
		case hasLongValue(f.long, v) != "":
			texts = append(texts, hasLongValue(f.long, v))
		case f.awk && (v == "-e" || v == "--source"):
			take(i + 1)
			i++
		case f.awk && (v == "-f" || v == "--file" || strings.HasPrefix(v, "--file=")):
			i = len(words) // the program is a file
		case f.awk && (v == "-F" || v == "-v" || v == "--assign" || v == "--field-separator"):
			i++ // the option's value
		case f.awk && v == "--":
			take(i + 1)
			i = len(words)
		case f.awk && !strings.HasPrefix(v, "-"):
			take(i)
			i = len(words)
		case f.short != "" && len(v) >= 2 && v[0] == '-' && v[1] != '-':
			if strings.ContainsRune(f.short, rune(v[1])) && len(v) > 2 {
				texts = append(texts, v[2:]) // -c'…': the program joined to its option
			}
			if strings.ContainsRune(f.short, rune(v[len(v)-1])) && onlyLetters(v[1:]) {
				take(i + 1) // -e, or a cluster ending in it (-ne, -lE)
			}
		case f.short != "" && f.sub == "" && !strings.HasPrefix(v, "-") && len(texts) == 0:
			i = len(words) // a script file; what follows is its arguments
		}
	}
	return texts, unknown, len(texts) > 0 || unknown
}

func containsString(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// hasLongValue returns the program of --eval=TEXT.
func hasLongValue(long []string, v string) string {
	for _, l := range long {
		if t, ok := strings.CutPrefix(v, l+"="); ok && t != "" {
			return t
		}
	}
	return ""
}

func onlyLetters(s string) bool {
	return s != "" && !strings.ContainsFunc(s, notLetterRune)
}

func notLetterRune(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') }

// programWords cuts program text into the words a command could be
// named by: runs of letters, digits and . _ - / + (so `os.system('git
// push')` and `qw(git push)` hold the word git).
func programWords(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("._-/+", r))
	})
}

// inline judges an interpreter given its program inline: the first
// command pattern whose program a text names as a word, or every command
// pattern when ralph cannot read a text.
func (ab askBefore) inline(words []arg) (askMatch, bool) {
	texts, unknown, ok := inlinePrograms(words)
	if !ok {
		return askMatch{}, false
	}
	shown := "`" + joinWords(words) + "`"
	var names []string
	for _, t := range texts {
		names = append(names, programWords(t)...)
	}
	for _, p := range ab.patterns {
		if p.fileLike() || len(p.words) == 0 {
			continue
		}
		if unknown {
			return askMatch{pattern: p.text, what: shown + ", whose inline program ralph cannot read"}, true
		}
		for _, n := range names {
			if p.words[0].MatchString(n) || p.words[0].MatchString(path.Base(n)) {
				return askMatch{pattern: p.text, what: shown + ", whose inline program names " + n + " (ralph cannot tell what a program runs, so naming it is enough)"}, true
			}
		}
	}
	return askMatch{}, false
}
