// Package kept is the one door for every file whose text ralph puts into
// a request to the model: the instructions files and what they import
// with @path, the files a message or a custom command attaches with
// @path, the state files, skills and agent definitions the prompts hold.
// It holds what is kept from the model and judges each file by what it
// is, not by the name it was reached by:
//
//   - the kept list: the person's secret files and ralph's own
//     configuration and state (coordinator/projectroot.Kept, the paths the
//     sandbox hides from commands), refused as read_file refuses them;
//   - the person's Read(…) deny rules (Rules), refused the same way, and
//     handed to the file tools and the sandbox, so that one rule holds
//     on every route;
//   - the credentials of the repositories' configuration
//     (memory/gitcreds): a file that is one of them, by its path with
//     links resolved or by its identity (a hard link, a file an
//     include.path names), is read masked, and the reader says in the
//     request which file was masked;
//   - a file of a repository's git directory is never imported into the
//     instructions (ReadImport).
//
// Each file is opened first, without blocking (rootfs.OpenSmall), and
// judged by the file that was opened (its path as the kernel holds it,
// its device and inode), so a link swapped in after a look leads nowhere
// the door has not judged. What ralph sends is redacted once more, by
// value, where every message enters the conversation
// (coordinator.Options.Redact): the credentials found when the session
// started, whichever route carried them (a hook's output, an MCP
// result, a web page).
package kept

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// ErrKept is a file kept from the model: one of the person's secrets or
// ralph's own configuration or state.
var ErrKept = errors.New("it holds the user's secrets or ralph's own configuration, which no tool reads")

// ErrDenied is wrapped by a DeniedError.
var ErrDenied = errors.New("a Read deny rule refuses it")

// DeniedError is a file a Read(…) deny rule names.
type DeniedError struct {
	Name string
	Rule Rule
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("%s refuses reading %s", e.Rule.Origin, e.Name)
}

func (e *DeniedError) Unwrap() error { return ErrDenied }

// ErrGitDir is a file of a repository's git directory, which the
// instructions never import: git keeps its configuration, its hooks and
// the credentials a checkout left there.
var ErrGitDir = errors.New("ralph imports nothing from a repository's .git directory, where git keeps its configuration and credentials")

// KeptError is a file of the kept list, named.
type KeptError struct{ Name string }

func (e *KeptError) Error() string {
	return fmt.Sprintf("%s is kept from the model: %v", e.Name, ErrKept)
}

func (e *KeptError) Unwrap() error { return ErrKept }

// Options configure a Door.
type Options struct {
	// Root is the project's root ("" outside a project: only the kept
	// list and absolute rules then hold).
	Root string
	// Kept are absolute paths kept from the model under any root
	// (coordinator/projectroot.Kept).
	Kept []string
	// Home is the person's home directory, for the rules' "~/".
	Home string
	// Cwd is the directory the person started in, where a rule's "path"
	// and "./path" are anchored besides the root, as Claude Code anchors
	// them (Rule); "" for the root alone.
	Cwd string
}

// Door is a session's door. The zero value and nil judge by the
// repositories' configuration alone.
type Door struct {
	root, rootLex string
	home, cwd     string
	kept          []string

	mu    sync.RWMutex
	rules Rules

	cfg configs
	ids deniedIDs
}

// New returns the door of a project.
func New(o Options) *Door {
	d := &Door{home: o.Home}
	if filepath.IsAbs(o.Cwd) {
		// The root is held with its links resolved, and so is where
		// the session started.
		d.cwd = evalOr(filepath.Clean(o.Cwd))
	}
	if o.Root != "" {
		d.rootLex = filepath.Clean(o.Root)
		d.root = evalOr(d.rootLex)
	}
	for _, k := range o.Kept {
		if !filepath.IsAbs(k) {
			continue
		}
		for _, f := range []string{filepath.Clean(k), evalOr(filepath.Clean(k))} {
			if !slices.Contains(d.kept, f) {
				d.kept = append(d.kept, f)
			}
		}
	}
	return d
}

// Root is the project's root, links resolved.
func (d *Door) Root() string {
	if d == nil {
		return ""
	}
	return d.root
}

// Home is the person's home directory the rules were read with.
func (d *Door) Home() string {
	if d == nil {
		return ""
	}
	return d.home
}

// Deny adds Read(…) deny rules; a session adds its settings files' rules
// before any prompt is built and before its tools are made. A rule's
// relative pattern is anchored where the session started too (Options'
// Cwd), which it keeps when the sandbox resolves it (Rules.Resolve).
func (d *Door) Deny(rules ...Rule) {
	if d == nil {
		return
	}
	d.mu.Lock()
	for _, r := range rules {
		if r.cwd == "" {
			r.cwd = d.cwd
		}
		d.rules = append(d.rules, r.placedFor(d.root))
	}
	d.mu.Unlock()
	// What the rules name is taken now, by identity too, before a
	// command can rename it (deniedids.go).
	d.takeDeniedIDs()
}

// Denies reports whether the door holds a Read(…) deny rule: a reader
// with no kept path to look for skips the look only when it does not.
func (d *Door) Denies() bool {
	if d == nil {
		return false
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.rules) > 0
}

// Rules are the Read(…) deny rules the door holds.
func (d *Door) Rules() Rules {
	if d == nil {
		return nil
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	return slices.Clone(d.rules)
}

// Refuses says why none of paths (absolute; a file as it was named and
// as its links resolve) may reach the model: a *KeptError or a
// *DeniedError, named by the first path; nil when none is refused.
func (d *Door) Refuses(paths ...string) error {
	if d == nil || len(paths) == 0 {
		return nil
	}
	// The name is for the refusal's sentence alone: a checkpoint asks
	// of every path it takes, ten thousand at a time, and is refused none.
	name := func() string { return d.shown(paths[0]) }
	var clean []string
	for _, p := range paths {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		clean = append(clean, filepath.Clean(p))
	}
	for _, p := range clean {
		for _, k := range d.kept {
			if within(k, p) {
				return &KeptError{Name: name()}
			}
		}
	}
	d.mu.RLock()
	rules := d.rules
	d.mu.RUnlock()
	if len(rules) == 0 {
		return nil
	}
	var forms []string
	for _, p := range clean {
		forms = append(forms, p)
		// The lexical root's spelling of a path is the real root's too.
		if d.rootLex != d.root {
			if rel, ok := relative(filepath.ToSlash(d.rootLex), filepath.ToSlash(p)); ok {
				forms = append(forms, filepath.Join(d.root, filepath.FromSlash(rel)))
			}
		}
	}
	if r, ok := rules.Match(d.root, forms...); ok {
		return &DeniedError{Name: name(), Rule: r}
	}
	if len(clean) == 0 {
		return nil
	}
	if r, ok := d.deniedAt(clean[0]); ok {
		// A file a rule named, renamed since (deniedids.go).
		return &DeniedError{Name: name(), Rule: r}
	}
	return nil
}

// Denied is Refuses for the Read(…) deny rules alone.
func (d *Door) Denied(paths ...string) error {
	err := d.Refuses(paths...)
	if errors.Is(err, ErrDenied) {
		return err
	}
	return nil
}

// shown names p for a sentence: relative to the project inside it.
func (d *Door) shown(p string) string {
	for _, r := range []string{d.root, d.rootLex} {
		if r == "" {
			continue
		}
		if rel, ok := relative(filepath.ToSlash(r), filepath.ToSlash(filepath.Clean(p))); ok && rel != "." {
			return rel
		}
	}
	if d.home != "" {
		if rel, ok := relative(filepath.ToSlash(d.home), filepath.ToSlash(filepath.Clean(p))); ok && rel != "." {
			return "~/" + rel
		}
	}
	return p
}

// within reports whether the clean absolute path p is dir or lies below
// it.
func within(dir, p string) bool {
	if p == dir {
		return true
	}
	// As HasPrefix(p, dir+"/"), without a string built for every path
	// a checkpoint asks about.
	d := strings.TrimSuffix(dir, string(filepath.Separator))
	return len(p) > len(d) && p[len(d)] == filepath.Separator && strings.HasPrefix(p, d)
}

// MaskedNote is the one sentence a request holds after the text of a
// file whose credentials the door masked: the model learns that the
// values are masked, not absent, and which file holds them.
func MaskedNote(name string) string {
	return fmt.Sprintf("[ralph masked the credentials in %s as [REDACTED]; the file itself holds them, and no tool of yours reads them]", name)
}
