package repl

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	prompt "github.com/c-bata/go-prompt"
	"github.com/chzyer/readline"
	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/models"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/scripts/slash"
)

// Limits of the @file walk, so a huge tree cannot stall a Tab press.
const (
	maxFiles     = 5000
	maxDepth     = 12
	filesTTL     = 5 * time.Second
	maxShownCand = 40
)

// skipDirs are never offered as @file mentions.
var skipDirs = map[string]bool{".git": true, ".ralph": true, "node_modules": true, ".hg": true, ".svn": true}

// completer completes slash commands, @file mentions and session ids (the
// argument of /session). Candidates are ranked with go-prompt's filters:
// prefix first, then substring, then fuzzy. readline can only insert at
// the cursor, so prefix matches complete in place; when only substring or
// fuzzy matches exist, Tab replaces the word with the best one (see
// completionListener).
type completer struct {
	fs     afero.Fs
	root   string
	models *models.Resolver // nil: /model's argument is not completed
	// plugins are plugins' folders of custom commands.
	plugins []slash.CommandDir
	// skills are the session's skills, which the person may start as
	// commands; nil: none.
	skills func() *skills.Set

	mu      sync.Mutex
	files   []string
	filesAt time.Time
	pending *replacement
}

// replacement is the best non-prefix match for the word being completed.
type replacement struct {
	line       string
	start, end int
	with       string
}

func newCompleter(fs afero.Fs, root string, m *models.Resolver, plugins ...slash.CommandDir) *completer {
	return &completer{fs: fs, root: root, models: m, plugins: plugins}
}

// Do implements readline.AutoCompleter.
func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	c.mu.Lock()
	c.pending = nil
	c.mu.Unlock()
	start := pos
	for start > 0 && line[start-1] != ' ' && line[start-1] != '\t' {
		start--
	}
	word := string(line[start:pos])
	cands, q, lead := c.candidates(string(line[:start]), word)
	if cands == nil {
		return nil, 0
	}
	ranked := rank(cands, q)
	var out [][]rune
	for _, s := range ranked {
		if strings.HasPrefix(s.Text, q) {
			out = append(out, []rune(s.Text[len(q):]))
		}
	}
	if len(out) > 0 {
		return out, len([]rune(q))
	}
	if len(ranked) > 0 {
		c.mu.Lock()
		c.pending = &replacement{line: string(line), start: start, end: pos, with: lead + ranked[0].Text}
		c.mu.Unlock()
	}
	return nil, 0
}

// candidates returns what the word can complete to, the part of the word
// to match, and what precedes that part in the word ("/" or "@").
func (c *completer) candidates(before, word string) ([]prompt.Suggest, string, string) {
	switch {
	case strings.TrimSpace(before) == "" && strings.HasPrefix(word, "/"):
		var s []prompt.Suggest
		for _, spec := range slash.All() {
			s = append(s, prompt.Suggest{Text: spec.Name, Description: spec.Summary})
		}
		customs := slash.Customs(c.fs, c.root, c.plugins...)
		if c.skills != nil {
			customs = append(customs, slash.SkillCommands(c.skills(), customs)...)
		}
		for _, cu := range customs {
			desc := cu.Description
			if cu.Hint != "" {
				desc = cu.Hint + " — " + desc
			}
			s = append(s, prompt.Suggest{Text: cu.Name, Description: desc})
		}
		return s, word[1:], "/"
	case strings.HasPrefix(word, "@"):
		var s []prompt.Suggest
		for _, f := range c.projectFiles() {
			s = append(s, prompt.Suggest{Text: f})
		}
		return s, word[1:], "@"
	case strings.TrimSpace(before) == "/model" && c.models != nil:
		// The resolver keeps the list for the session: only the first
		// Tab waits for the endpoint (models.ListTimeout at most).
		ids, _ := c.models.List(context.Background())
		var s []prompt.Suggest
		for _, id := range ids {
			s = append(s, prompt.Suggest{Text: id})
		}
		return s, word, ""
	case slash.PluginCompletions(before) != nil && strings.HasSuffix(before, " "):
		var s []prompt.Suggest
		for _, w := range slash.PluginCompletions(before) {
			s = append(s, prompt.Suggest{Text: w})
		}
		return s, word, ""
	case (strings.TrimSpace(before) == "/session" || strings.TrimSpace(before) == "/resume") && len(strings.Fields(before)) == 1:
		ids, _ := memory.ListSessions(c.fs, c.root)
		var s []prompt.Suggest
		for i := len(ids) - 1; i >= 0; i-- { // newest first
			s = append(s, prompt.Suggest{Text: ids[i]})
		}
		return s, word, ""
	}
	return nil, "", ""
}

// rank orders candidates for q: exact prefix, prefix ignoring case, prefix
// of the last path element, substring, then fuzzy (the letters in order);
// within a class shorter candidates first; each candidate once.
func rank(cands []prompt.Suggest, q string) []prompt.Suggest {
	// Shorter first; equal lengths keep the given order (newest session
	// first, commands in help order, files in walk order).
	byLength := func(ss []prompt.Suggest) []prompt.Suggest {
		sort.SliceStable(ss, func(i, j int) bool { return len(ss[i].Text) < len(ss[j].Text) })
		return ss
	}
	if q == "" {
		return byLength(append([]prompt.Suggest(nil), cands...))
	}
	var base []prompt.Suggest
	for _, s := range cands {
		if i := strings.LastIndexByte(s.Text, '/'); i >= 0 && strings.HasPrefix(strings.ToLower(s.Text[i+1:]), strings.ToLower(q)) {
			base = append(base, s)
		}
	}
	seen := map[string]bool{}
	var out []prompt.Suggest
	for _, class := range [][]prompt.Suggest{
		prompt.FilterHasPrefix(cands, q, false),
		prompt.FilterHasPrefix(cands, q, true),
		base,
		prompt.FilterContains(cands, q, true),
		prompt.FilterFuzzy(cands, q, true),
	} {
		for _, s := range byLength(class) {
			if !seen[s.Text] {
				seen[s.Text] = true
				out = append(out, s)
			}
		}
	}
	if len(out) > maxShownCand {
		out = out[:maxShownCand]
	}
	return out
}

var errEnough = errors.New("enough files")

// projectFiles lists files under the root for @ mentions, relative and
// slash-separated, skipping version control, ralph's own state and
// node_modules; the list is cached for a few seconds.
func (c *completer) projectFiles() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files != nil && time.Since(c.filesAt) < filesTTL {
		return c.files
	}
	files := []string{}
	_ = afero.Walk(c.fs, c.root, func(path string, info fs.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		rel, rerr := filepath.Rel(c.root, path)
		if rerr != nil || rel == "." {
			return nil
		}
		if info.IsDir() {
			if skipDirs[info.Name()] || strings.Count(rel, string(filepath.Separator)) >= maxDepth {
				return filepath.SkipDir
			}
			return nil
		}
		files = append(files, filepath.ToSlash(rel))
		if len(files) >= maxFiles {
			return errEnough
		}
		return nil
	})
	c.files, c.filesAt = files, time.Now()
	return files
}

// completionListener applies the pending replacement when Tab found only
// non-prefix matches: the word becomes the best match.
func completionListener(c *completer) func(line []rune, pos int, key rune) ([]rune, int, bool) {
	return func(line []rune, pos int, key rune) ([]rune, int, bool) {
		if key != readline.CharTab {
			return nil, 0, false
		}
		c.mu.Lock()
		p := c.pending
		c.pending = nil
		c.mu.Unlock()
		if p == nil || p.line != string(line) || p.end != pos {
			return nil, 0, false
		}
		out := append(append(append([]rune(nil), line[:p.start]...), []rune(p.with)...), line[p.end:]...)
		return out, p.start + len([]rune(p.with)), true
	}
}

// completer is the shell's Tab completion: commands, custom commands,
// the skills the person may start, files and sessions.
func (s *Shell) completer() *completer {
	c := newCompleter(s.opts.Fs, s.opts.Root, s.opts.Models, s.opts.CommandDirs...)
	c.skills = s.opts.Skills
	return c
}
