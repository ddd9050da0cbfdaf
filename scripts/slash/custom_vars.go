package slash

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/text"
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
				b.WriteString(text.ShellWord(p))
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

// doubleQuoted is s escaped for the inside of a "…" shell string.
func doubleQuoted(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	return r.Replace(s)
}

// codex's custom prompts (~/.codex/prompts/NAME.md, /prompts:NAME) are
// filled as codex fills them (codex-rs's expand_custom_prompt and
// expand_numeric_placeholders), not as Claude Code fills its commands.
// A prompt that names a key ($KEY: a capital letter, then capitals,
// digits and _) takes only KEY=value arguments, and every key it names
// must be given: a missing one, or an argument that is not KEY=value,
// is an error naming it, as codex's is. Then each $KEY becomes its
// value, and nothing else changes ($ARGUMENTS and $1 stay as written
// unless given as keys). A prompt that names no key takes its words:
// $1 … $9 become the first nine (a missing one is empty; $10 is the
// first word and a 0), $ARGUMENTS all of them joined by one space.
// $$ is sent as it is written, two dollars, in both: codex's docs call
// it a literal dollar, and codex keeps both characters, so a $ after
// a $ ($$1, $$FILE) is never a placeholder and the model reads what
// codex's model reads.

// namedRef is a named placeholder of a codex prompt.
var namedRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$[A-Z][A-Z0-9_]*`) })

// ErrPromptArgs is a codex prompt's arguments that do not fill it.
var ErrPromptArgs = errors.New("the prompt's arguments do not fill it")

// promptKeys are the named placeholders body uses, sorted, each once:
// $ARGUMENTS, and one right after a $ ($$KEY), are none, as in codex.
func promptKeys(body string) []string {
	seen := map[string]bool{}
	for _, loc := range namedRef().FindAllStringIndex(body, -1) {
		if loc[0] > 0 && body[loc[0]-1] == '$' {
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

// expandPrompt fills a codex prompt: named keys from KEY=value arguments
// when it uses any, else $1 … $9 and $ARGUMENTS from its words. used
// says whether body had any placeholder.
func expandPrompt(name, body, args string) (string, bool, error) {
	keys := promptKeys(body)
	if len(keys) == 0 {
		out, used := expandNumbered(body, splitArgs(args))
		return out, used, nil
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
	last := 0
	for _, loc := range namedRef().FindAllStringIndex(body, -1) {
		if loc[0] > 0 && body[loc[0]-1] == '$' {
			continue
		}
		if v, ok := values[body[loc[0]+1:loc[1]]]; ok {
			b.WriteString(body[last:loc[0]])
			b.WriteString(v)
			last = loc[1]
		}
	}
	b.WriteString(body[last:])
	return b.String(), true, nil
}

// expandNumbered is codex's expand_numeric_placeholders: $1 … $9 are
// words (a missing one empty), $ARGUMENTS all of them, $$ two dollars
// that nothing after them joins. used says whether body had any of them.
func expandNumbered(body string, words []string) (string, bool) {
	var b strings.Builder
	used := false
	for i := 0; i < len(body); i++ {
		if body[i] != '$' || i+1 >= len(body) {
			b.WriteByte(body[i])
			continue
		}
		switch next := body[i+1]; {
		case next == '$':
			b.WriteString("$$")
			i++
		case next >= '1' && next <= '9':
			if n := int(next - '1'); n < len(words) {
				b.WriteString(words[n])
			}
			used = true
			i++
		case strings.HasPrefix(body[i+1:], "ARGUMENTS"):
			b.WriteString(strings.Join(words, " "))
			used = true
			i += len("ARGUMENTS")
		default:
			b.WriteByte('$')
		}
	}
	return b.String(), used
}
