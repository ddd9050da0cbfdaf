package slash

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agents"
)

// Custom commands are the prompt files people bring from other agents: a
// file NAME.md in one of customDirs is /NAME, which sends the file's text
// (its front matter left out, $ARGUMENTS replaced by what follows the
// name) as a message. They are looked for only after ralph's own
// commands: a built-in command of the same name wins, with a warning
// naming the file it shadows, once a session.

// customDir is a directory custom commands are looked for in, the
// filesystem it is read through, and how it is shown.
type customDir struct {
	fs          afero.Fs
	path, shown string
}

// customDirs are where custom commands are looked for, nearest first:
// the project's own (.ralph/commands, then the agents' folders the
// agents' table names), then the person's (the agents' folders under
// the home directory).
func customDirs(fs afero.Fs, root string) []customDir {
	ds := []customDir{{fs, filepath.Join(root, ".ralph", "commands"), ".ralph/commands"}}
	for _, d := range agents.CommandDirs() {
		ds = append(ds, customDir{fs, filepath.Join(root, filepath.FromSlash(d)), d})
	}
	if home, _ := os.UserHomeDir(); home != "" {
		for _, d := range agents.CommandDirs() {
			ds = append(ds, customDir{rootfs.Person(), filepath.Join(home, filepath.FromSlash(d)), "~/" + d})
		}
	}
	return ds
}

// maxCustom bounds a custom command's file: it is a prompt, not a corpus.
const maxCustom = 64 << 10

// customFile is the file of custom command name, nearest first, and its
// path as shown; ok is false when there is none.
func (h *Host) customFile(name string) (fs afero.Fs, path, shown string, ok bool) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") || h.Fs == nil {
		return nil, "", "", false
	}
	for _, d := range customDirs(h.Fs, h.Root) {
		p := filepath.Join(d.path, name+".md")
		if fi, err := d.fs.Stat(p); err == nil && fi.Mode().IsRegular() {
			return d.fs, p, d.shown + "/" + name + ".md", true
		}
	}
	return nil, "", "", false
}

// CustomNames are the custom commands no built-in shadows, for Tab, each
// once, nearest first.
func CustomNames(fs afero.Fs, root string) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range customDirs(fs, root) {
		entries, err := afero.ReadDir(d.fs, d.path)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".md")
			// A name that would drive the terminal is never offered.
			if _, builtin := Lookup(strings.ToLower(name)); !ok || builtin || seen[name] || !e.Mode().IsRegular() || text.StripControls(name) != name {
				continue
			}
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// warnedShadows are the custom files whose shadowing was told, once a
// process (a chat is one session; /clear does not repeat it).
var warnedShadows sync.Map

// warnShadowed tells, once, that the built-in name shadows a custom
// command file of that name.
func (h *Host) warnShadowed(name string) {
	_, _, shown, ok := h.customFile(name)
	if !ok {
		return
	}
	if _, told := warnedShadows.LoadOrStore(shown, true); told {
		return
	}
	h.printf("warning: /%s is ralph's own command; %s, a custom command of the same name, does not run (rename the file to use it)\n", name, shown)
}

// errNoCustom is a name with no custom command file.
var errNoCustom = errors.New("no custom command")

// runCustom sends custom command name's text, with args for $ARGUMENTS.
func (h *Host) runCustom(name, args string) (Outcome, error) {
	fs, path, shown, ok := h.customFile(name)
	if !ok {
		return Outcome{}, errNoCustom
	}
	f, err := fs.Open(path)
	if err != nil {
		return Outcome{}, fmt.Errorf("/%s: %w", name, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCustom+1))
	if err != nil {
		return Outcome{}, fmt.Errorf("/%s: %w", name, err)
	}
	if len(data) > maxCustom {
		return Outcome{}, fmt.Errorf("/%s: %s is larger than %d KiB; a custom command is a prompt", name, shown, maxCustom>>10)
	}
	body := stripFrontMatter(string(data))
	if strings.Contains(body, "$ARGUMENTS") {
		body = strings.ReplaceAll(body, "$ARGUMENTS", args)
	} else if args != "" {
		body += "\n\n" + args
	}
	if strings.TrimSpace(body) == "" {
		return Outcome{}, fmt.Errorf("/%s: %s is empty", name, shown)
	}
	h.printf("/%s: sending %s\n", name, text.StripControls(shown))
	return Outcome{Send: strings.TrimSpace(body)}, nil
}

// stripFrontMatter drops a leading "---" block (a command's description
// and allowed tools, for the agent that wrote it).
func stripFrontMatter(s string) string {
	if !strings.HasPrefix(s, "---\n") {
		return s
	}
	if i := strings.Index(s[4:], "\n---"); i >= 0 {
		rest := s[4+i+4:]
		return strings.TrimPrefix(rest, "\n")
	}
	return s
}
