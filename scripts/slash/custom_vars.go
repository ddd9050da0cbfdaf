package slash

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// The variables a command's text may name, as Claude Code expands them:
// ${CLAUDE_PLUGIN_ROOT} is the directory of the plugin the command comes
// from, $CLAUDE_PROJECT_DIR (or ${CLAUDE_PROJECT_DIR}) the project's
// root. In the text the model reads they become the path as it is; in a
// shell line or block they become the path quoted for where they stand
// (bare, inside "…" or inside '…'), so a directory with a space or a
// quote in its name stays one word and never becomes shell syntax.

// pathVars matches the variables expandPaths replaces.
var pathVars = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{CLAUDE_PLUGIN_ROOT\}|\$\{CLAUDE_PROJECT_DIR\}|\$CLAUDE_PROJECT_DIR\b`)
})

// expandPaths replaces the path variables in body: quoted in its shell
// lines and blocks, as they are elsewhere. pluginRoot "" leaves
// ${CLAUDE_PLUGIN_ROOT} as written (a command of no plugin).
func expandPaths(body, pluginRoot, projectDir string) string {
	value := func(v string) (string, bool) {
		if strings.Contains(v, "CLAUDE_PLUGIN_ROOT") {
			return pluginRoot, pluginRoot != ""
		}
		return projectDir, projectDir != ""
	}
	var b strings.Builder
	last := 0
	for _, loc := range shellRef().FindAllStringIndex(body, -1) {
		b.WriteString(plainPaths(body[last:loc[0]], value))
		b.WriteString(shellPaths(body[loc[0]:loc[1]], value))
		last = loc[1]
	}
	b.WriteString(plainPaths(body[last:], value))
	return b.String()
}

// expandRulePaths replaces the path variables in an allowed-tools rule
// (Bash(${CLAUDE_PLUGIN_ROOT}/scripts/setup.sh:*)), quoted as a bare
// shell word, since the rule is read by the shell parser.
func expandRulePaths(rule, pluginRoot, projectDir string) string {
	return shellPaths(rule, func(v string) (string, bool) {
		if strings.Contains(v, "CLAUDE_PLUGIN_ROOT") {
			return pluginRoot, pluginRoot != ""
		}
		return projectDir, projectDir != ""
	})
}

func plainPaths(s string, value func(string) (string, bool)) string {
	return pathVars().ReplaceAllStringFunc(s, func(v string) string {
		if p, ok := value(v); ok {
			return p
		}
		return v
	})
}

// shellPaths replaces the path variables in shell text, each quoted for
// the quoting it stands in.
func shellPaths(s string, value func(string) (string, bool)) string {
	locs := pathVars().FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return s
	}
	var b strings.Builder
	quote := byte(0) // the quote open at i: 0, '\'' or '"'
	next := 0
	for i := 0; i < len(s); i++ {
		if next < len(locs) && i == locs[next][0] {
			v := s[locs[next][0]:locs[next][1]]
			p, ok := value(v)
			switch {
			case !ok:
				b.WriteString(v)
			case quote == '\'':
				b.WriteString(strings.ReplaceAll(p, "'", `'\''`))
			case quote == '"':
				b.WriteString(doubleQuoted(p))
			default:
				b.WriteString(shellQuote(p))
			}
			i = locs[next][1] - 1
			next++
			continue
		}
		ch := s[i]
		switch {
		case quote == 0 && ch == '\\' && i+1 < len(s):
			b.WriteByte(ch)
			i++
			ch = s[i]
		case quote == '"' && ch == '\\' && i+1 < len(s):
			b.WriteByte(ch)
			i++
			ch = s[i]
		case quote == 0 && (ch == '\'' || ch == '"'):
			quote = ch
		case quote != 0 && ch == quote:
			quote = 0
		}
		b.WriteByte(ch)
	}
	return b.String()
}

// shellQuote is s as one bare shell word: as it is when it holds only
// characters no shell treats specially, single-quoted otherwise.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+,:@%=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// doubleQuoted is s escaped for the inside of a "…" shell string.
func doubleQuoted(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	return r.Replace(s)
}

// codex's custom prompts (~/.codex/prompts/NAME.md, /prompts:NAME) take
// named arguments besides $1 … $9 and $ARGUMENTS: a $KEY in the prompt
// (capital letters, digits and _) is filled from a KEY=value argument,
// and $$ is a literal $, as codex documents (docs/prompts.md). A prompt
// that names a key the arguments do not give is an error naming the
// key, as codex's is; so is an argument that is not KEY=value when the
// prompt takes named ones.

// namedRef is a named placeholder of a codex prompt.
var namedRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$[A-Z][A-Z0-9_]*`) })

// ErrPromptArgs is a codex prompt's arguments that do not fill it.
var ErrPromptArgs = errors.New("the prompt's arguments do not fill it")

// promptKeys are the named placeholders body uses, sorted, each once
// ($ARGUMENTS and a $$-escaped one left out).
func promptKeys(body string) []string {
	seen := map[string]bool{}
	for _, loc := range namedRef().FindAllStringIndex(body, -1) {
		if loc[0] > 0 && body[loc[0]-1] == '$' && dollarEscaped(body, loc[0]-1) {
			continue
		}
		k := body[loc[0]+1 : loc[1]]
		if k != "ARGUMENTS" {
			seen[k] = true
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// dollarEscaped reports whether the $ at i is the second of a $$ pair
// (an odd number of $ end at i).
func dollarEscaped(body string, i int) bool {
	n := 0
	for ; i >= 0 && body[i] == '$'; i-- {
		n++
	}
	return n%2 == 1
}

// expandPrompt fills a codex prompt: named keys from KEY=value arguments
// when it uses any, else $1 … $9 and $ARGUMENTS from its words; then $$
// becomes $. used says whether body had any placeholder.
func expandPrompt(name, body, args string) (string, bool, error) {
	keys := promptKeys(body)
	if len(keys) == 0 {
		// $$ is set aside first, so $$5 is a literal $5 and not a
		// dollar before the fifth word.
		const dollar = "\x00dollar\x00"
		out, used := expandArgs(strings.ReplaceAll(body, "$$", dollar), args)
		return strings.ReplaceAll(out, dollar, "$"), used, nil
	}
	values := map[string]string{}
	for _, w := range splitArgs(args) {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return "", false, fmt.Errorf("/prompts:%s: %w: %q is not KEY=value, and the prompt takes %s", name, ErrPromptArgs, w, strings.Join(keys, ", "))
		}
		values[k] = v
	}
	var missing []string
	for _, k := range keys {
		if _, ok := values[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return "", false, fmt.Errorf("/prompts:%s: %w: missing required args %s (give them as KEY=value)", name, ErrPromptArgs, strings.Join(missing, ", "))
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] == '$' && i+1 < len(body) && body[i+1] == '$' {
			b.WriteByte('$')
			i++
			continue
		}
		if body[i] == '$' {
			if loc := namedRef().FindStringIndex(body[i:]); loc != nil && loc[0] == 0 {
				k := body[i+1 : i+loc[1]]
				if v, ok := values[k]; ok {
					b.WriteString(v)
					i += loc[1] - 1
					continue
				}
				if k == "ARGUMENTS" {
					b.WriteString(args)
					i += loc[1] - 1
					continue
				}
			}
		}
		b.WriteByte(body[i])
	}
	return b.String(), true, nil
}
