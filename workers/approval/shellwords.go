package approval

import (
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// The shell rewrites some words before a program sees them: brace
// expansion turns `{rm,secret.txt}` into the two words rm and
// secret.txt, and a pathname pattern (`/bin/r?`, `pus[h]`) into the
// names of files it matches, which the model can create. A deny or ask
// rule compares the words the program gets, so a command is judged as
// the shell will run it (issue 88, gap B): braces are expanded, and a
// pattern counts as every word it could become. An allow rule never
// covers such a word (Analyze asks about braces; a pattern is no plain
// command name, and no rule's word equals it).

// maxBraceWords bounds the words one word's braces may expand to: more
// ({a,b}{a,b}… twenty times is a million) are not expanded, and the word
// counts as one ralph cannot know, which matches every command pattern.
const maxBraceWords = 64

// ruleWords are the words of a simple command as a deny or ask pattern
// judges them: each word's braces expanded as bash expands them (an
// empty result dropped, as bash drops it), a word that would expand to
// more than maxBraceWords not known, and a word holding a pathname
// pattern marked glob, its value the pattern (the command's name, which
// may then be any program, not known).
func (a *analyzer) ruleWords(args []*syntax.Word) []arg {
	out := make([]arg, 0, len(args))
	for _, w := range args {
		words, ok := braceWords(w)
		if !ok {
			x := a.argValue(w)
			x.known = false
			out = append(out, x)
			continue
		}
		for _, bw := range words {
			if len(bw.Parts) == 0 {
				continue
			}
			x := a.argValue(bw)
			x.glob = x.known && globs(bw)
			if len(out) == 0 && x.glob {
				// A pattern as the command's name may be any program,
				// a wrapper (env, sudo) or a shell among them: it is
				// one ralph cannot know.
				x.known = false
			}
			out = append(out, x)
		}
	}
	return out
}

// braced reports whether the shell expands braces in w.
func braced(w *syntax.Word) bool {
	if !hasBrace(w) {
		return false
	}
	cw := *w
	cw.Parts = slices.Clone(w.Parts)
	return syntax.SplitBraces(&cw)
}

// braceWords is w with its braces expanded: w alone when it has none;
// ok is false when there would be more than maxBraceWords.
func braceWords(w *syntax.Word) ([]*syntax.Word, bool) {
	if !hasBrace(w) {
		return []*syntax.Word{w}, true
	}
	cw := *w
	cw.Parts = slices.Clone(w.Parts)
	if !syntax.SplitBraces(&cw) {
		return []*syntax.Word{w}, true
	}
	if braceCount(&cw) > maxBraceWords {
		return nil, false
	}
	return expand.Braces(&cw), true
}

// hasBrace reports whether an unquoted part of w holds a {: most words
// hold none, and are not copied to be split.
func hasBrace(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.Contains(l.Value, "{") {
			return true
		}
	}
	return false
}

// braceCount is how many words the brace expansions of w make, counted
// before they are made; a count past maxBraceWords is reported as one
// more than it.
func braceCount(w *syntax.Word) int {
	n := 1
	for _, p := range w.Parts {
		b, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		m := 0
		if b.Sequence {
			m = sequenceLen(b)
		} else {
			for _, e := range b.Elems {
				m += braceCount(e)
			}
		}
		n *= max(m, 1)
		if n > maxBraceWords {
			return maxBraceWords + 1
		}
	}
	return n
}

// sequenceLen is how many words {x..y[..incr]} makes: of numbers or of
// single letters; too many when it cannot be read.
func sequenceLen(b *syntax.BraceExp) int {
	lits := make([]string, len(b.Elems))
	for i, e := range b.Elems {
		lits[i] = e.Lit()
	}
	if len(lits) < 2 {
		return maxBraceWords + 1
	}
	step := 1
	if len(lits) > 2 {
		s, err := strconv.Atoi(lits[2])
		if err != nil || s == 0 {
			return maxBraceWords + 1
		}
		step = max(s, -s)
	}
	from, err1 := strconv.Atoi(lits[0])
	to, err2 := strconv.Atoi(lits[1])
	if err1 != nil || err2 != nil {
		if len(lits[0]) != 1 || len(lits[1]) != 1 {
			return maxBraceWords + 1
		}
		from, to = int(lits[0][0]), int(lits[1][0])
	}
	span := to - from
	if span < 0 {
		span = -span
	}
	if span/step >= maxBraceWords {
		return maxBraceWords + 1
	}
	return span/step + 1
}

// globs reports whether w holds a pathname pattern the shell expands:
// an unquoted, unescaped * or ?, or a [ closed by a later ].
func globs(w *syntax.Word) bool {
	if len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); !ok || !strings.ContainsAny(l.Value, "*?[") {
			return false
		}
	}
	var b strings.Builder
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(l.Value)
		} else {
			b.WriteByte(0) // quoted or expanded: no pattern character
		}
	}
	s := b.String()
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			// A class holds at least one character: "[]]" is one, "[]"
			// and a lone "[" (the test command) are none.
			if i+2 <= len(s) && strings.Contains(s[i+2:], "]") {
				return true
			}
		}
	}
	return false
}

// couldBe reports whether the word x, as the shell passes it, may be a
// word a command pattern's word pw (src as the pattern spells it)
// matches: a word ralph cannot know may be anything; a pathname pattern
// may be any name it matches, so it is compared with the pattern's word
// itself (a pattern word that is itself a pattern counts as a match);
// any other word is matched as it is.
func couldBe(x arg, pw interface{ MatchString(string) bool }, src string) bool {
	switch {
	case !x.known:
		return true
	case x.glob:
		if strings.ContainsAny(src, "*?[") {
			return true
		}
		return globRe(x.value, false).MatchString(src)
	}
	return pw.MatchString(x.value)
}

// rebound judges a line's alias or hash, which bind a name to a command
// for the lines after it, as the command it binds: alias r=rm (with
// expand_aliases, which a command may set) makes r run rm, hash -p
// /bin/rm r makes r run /bin/rm. An alias ralph cannot read is any
// command.
func (ab askBefore) rebound(name string, words []arg, env string, at place, depth int) (askMatch, bool) {
	if name == "hash" {
		for i := 1; i+1 < len(words); i++ {
			if words[i].value == "-p" {
				if m, ok := ab.simple(words[i+1:i+2], env, at, depth); ok {
					return m, true
				}
			}
		}
		return askMatch{}, false
	}
	for _, x := range words[1:] {
		if !x.known {
			return ab.simple([]arg{{}}, env, at, depth)
		}
		if _, v, ok := strings.Cut(x.value, "="); ok {
			if m, ok := ab.commandDepth(v, env, at, depth+1); ok {
				return m, true
			}
		}
	}
	return askMatch{}, false
}
