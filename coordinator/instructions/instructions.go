package instructions

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/ralph-dev/ralph/workers/agents"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/mentions"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// InstructionFiles are the instructions files other coding agents read
// (codex's AGENTS.md, Claude Code's CLAUDE.md), which ralph reads as the
// project's instructions too (memory.InstructionFiles, the list ralph
// init leaves alone). AGENT.md, ralph's own learnings file, is read with
// the state files (memory.LoadStateDocs), through the same door and
// bounds.
var InstructionFiles = memory.InstructionFiles

// Bounds of the instructions in the prompt (docs/conventions.md): each
// file is read whole up to MaxInstructionFile, and all of them with their
// imports up to MaxInstructions. Claude Code reads a CLAUDE.md whole and
// warns above LargeInstructionChars characters; ralph warns there too and
// cuts only far above it, saying so to the person in one line.
const (
	MaxInstructionFile    = 128 << 10
	MaxInstructions       = 256 << 10
	LargeInstructionChars = 40000
	// MaxImportDepth is how many hops of @imports are followed, as
	// Claude Code follows them.
	MaxImportDepth = 5
)

// instructionSet gathers the instructions files and their imports.
type instructionSet struct {
	p    *Reader
	b    strings.Builder
	seen [][]byte        // contents given already (CLAUDE.md as a link to AGENTS.md)
	read map[string]bool // the files read or refused, by absolute name: a cycle ends there
	full bool            // the bound of all instructions was reached
	// files are the files given, for the InstructionsLoaded hooks.
	files []coordinator.InstructionFile
}

// Reader reads a session's instructions: the project's AGENTS.md and
// CLAUDE.md files, the person's ~/.claude/CLAUDE.md, both sides' rules
// and the files they import (@path), through the session's door, each
// bounded and each thing left out said to the person once.
type Reader struct {
	// Root is the project; StartDir where the person started, relative
	// to it ("." at the root).
	Root, StartDir string
	// Fs is the project's door, Door the session's (memory/kept).
	Fs   afero.Fs
	Door *kept.Door
	// Links are instruction_links: the targets outside the project an
	// instructions file or an import may lead to.
	Links []string
	// Notify tells the person something; nil tells nothing.
	Notify func(string)
	// said holds the keys of what was said already (tellOnce).
	said sync.Map
}

// Text is the AGENTS.md and CLAUDE.md files from the start
// directory up to the project root, nearest first, each followed by the
// files it imports (@path), each and all of them bounded so that a huge
// file cannot crowd out the conversation; a cut is said to the person.
// A file seen twice (CLAUDE.md as a link to AGENTS.md) is given once.
func (p *Reader) Text() string {
	text, _ := p.Files()
	return text
}

// Files is Text's text and the files it holds, as the
// InstructionsLoaded hooks name them; a nil Reader reads none.
func (p *Reader) Files() (string, []coordinator.InstructionFile) {
	if p == nil {
		// A test's project made without Open reads none.
		return "", nil
	}
	s := &instructionSet{p: p, read: map[string]bool{}}
	person := s.person()
	dir := p.StartDir
	for !s.full {
		for _, name := range InstructionFiles {
			rel := filepath.Join(dir, name)
			abs := filepath.Join(p.Root, rel)
			txt, err := p.readInstruction(abs, false)
			if lo := (*rootfs.LinkOutError)(nil); errors.As(err, &lo) {
				p.leftOut(rel, lo.Target)
			}
			if kept.IsRefusal(err) {
				s.refused(filepath.ToSlash(rel), "", abs, err)
			}
			if err != nil {
				continue
			}
			s.read[abs] = true
			s.add(filepath.ToSlash(rel), abs, txt, "", "", 0)
			if s.full {
				break
			}
		}
		if dir == "." || dir == string(os.PathSeparator) {
			break
		}
		dir = filepath.Dir(dir)
	}
	if !s.full {
		s.projectRules()
	}
	if s.b.Len() == 0 {
		return person, s.files
	}
	return person + "\n\nThe project's instructions (AGENTS.md, CLAUDE.md, the rules in " + agents.RulesDir + ", and the files they import with @path), nearest the user's directory first; where they disagree the nearer one wins:\n" + s.b.String(), s.files
}

// person gives the person's own ~/.claude/CLAUDE.md and the files it
// imports, then their rules (personRules), before the project's, as Claude Code loads user memory before
// project memory; it returns their section of the prompt and leaves s
// empty for the project's. The file is read through the person's door
// (a link into a dotfiles repository is theirs), with the door's
// redaction; its imports outside the project follow instruction_links
// as every import does. A file that lies in the project (the home
// directory is the project, --allow-home-project) or in the temporary
// directory the model's commands write is no file of the person's: it is
// left out, and said once.
func (s *instructionSet) person() string {
	home := personHome()
	if home == "" {
		return ""
	}
	s.personFile(home)
	if !s.full {
		s.personRules(home)
	}
	if s.b.Len() == 0 {
		return ""
	}
	out := "\n\nThe user's own instructions for every project (~/" + agents.PersonInstructionFile + ", the rules in ~/" + agents.RulesDir +
		", and the files they import with @path); the project's instructions below are more specific:\n" + s.b.String()
	s.b.Reset()
	return out
}

// personFile adds the person's ~/.claude/CLAUDE.md and its imports.
func (s *instructionSet) personFile(home string) {
	shown := "~/" + agents.PersonInstructionFile
	abs := filepath.Join(home, agents.PersonInstructionFile)
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return
	}
	root, rerr := filepath.EvalSymlinks(s.p.Root)
	if rerr == nil && inside(root, real) || sandbox.WritableByCommands(real) {
		s.p.tellOnce("person:"+abs, fmt.Sprintf("%s lies where the model can write (%s), so ralph does not read it as your instructions for every project", shown, real))
		return
	}
	s.read[abs], s.read[real] = true, true
	txt, err := s.p.Door.ReadHead(rootfs.Person(), real, MaxInstructionFile+1)
	if kept.IsRefusal(err) {
		s.refused(shown, "", abs, err)
	}
	if err != nil {
		return
	}
	s.add(shown, abs, txt, "", "", 0)
}

// add gives one file's text (read up to one byte over the bound), then
// the files it imports, depth hops from an instructions file. A file
// whose credentials the door masked is followed by the one sentence
// that says so.
func (s *instructionSet) add(shown, abs string, txt kept.Text, by, from string, depth int) {
	data := txt.Data
	if s.full || len(bytes.TrimSpace(data)) == 0 || containsBytes(s.seen, data) {
		return
	}
	s.seen = append(s.seen, data)
	body, cut := clipAtLine(string(data), MaxInstructionFile)
	if cut {
		s.p.tellOnce("cut:"+abs, fmt.Sprintf("%s is over %d KiB, the most ralph reads of one instructions file; the rest of it was left out of the prompt (docs/conventions.md)",
			shown, MaxInstructionFile>>10))
	} else if n := utf8.RuneCount(data); n > LargeInstructionChars {
		s.p.tellOnce("large:"+abs, fmt.Sprintf("%s is large (%d characters, over %d): it is read whole, but every request carries it", shown, n, LargeInstructionChars))
	}
	if s.b.Len()+len(body) > MaxInstructions {
		fmt.Fprintf(&s.b, "\n(%s and any further instructions were left out: the instructions are bounded at %d KiB in all)\n", shown, MaxInstructions>>10)
		s.p.tellOnce("all:"+abs, fmt.Sprintf("%s and any further instructions files were left out of the prompt: ralph reads at most %d KiB of instructions in all (docs/conventions.md)",
			shown, MaxInstructions>>10))
		s.full = true
		return
	}
	head := shown
	if by != "" {
		head += ", imported by " + by
	}
	fmt.Fprintf(&s.b, "\n--- %s ---\n%s\n", head, strings.TrimRight(body, "\n"))
	if txt.Masked {
		fmt.Fprintf(&s.b, "%s\n", kept.MaskedNote(shown))
	}
	s.files = append(s.files, s.p.instructionFile(abs, from))
	if cut {
		fmt.Fprintf(&s.b, "(the rest of %s was cut: an instructions file is bounded at %d KiB)\n", shown, MaxInstructionFile>>10)
	}
	if depth >= MaxImportDepth {
		return
	}
	for _, m := range mentions.Find(body) {
		s.importFile(m, shown, abs, depth+1)
		if s.full {
			return
		}
	}
}

// importFile follows one @path of the file at from: relative to that
// file, or to the home directory for @~/. Inside the project it is read
// through the project's door (a link out only when instruction_links
// lists its target); outside it, only when instruction_links lists it.
// An import that names no file is plain text, as Claude Code takes it.
func (s *instructionSet) importFile(m, by, from string, depth int) {
	abs := m
	switch {
	case strings.HasPrefix(m, "~/"):
		home, err := os.UserHomeDir()
		if err != nil {
			return
		}
		abs = filepath.Join(home, m[2:])
	case !filepath.IsAbs(m):
		abs = filepath.Join(filepath.Dir(from), m)
	}
	abs = filepath.Clean(abs)
	if s.read[abs] {
		return
	}
	s.read[abs] = true
	txt, err := s.p.readInstruction(abs, true)
	if lo := (*rootfs.LinkOutError)(nil); errors.As(err, &lo) {
		s.p.tellOnce("import:"+abs, fmt.Sprintf("%s imports %s, which lies outside the project, and it was left out of the prompt; to use it, add %q to instruction_links in %s",
			by, m, lo.Target, config.UserFile("~/.config")))
		return
	}
	if kept.IsRefusal(err) {
		s.refused(s.p.shownPath(abs, m), by, abs, err)
		return
	}
	if err != nil || bytes.IndexByte(txt.Data, 0) >= 0 {
		return
	}
	s.add(s.p.shownPath(abs, m), abs, txt, by, from, depth)
}

// refused says in the prompt, in one line where the file would have
// been, that the door refused a file the instructions name (a key, a
// file a Read deny rule names, an import from .git), so the model does
// not look for it; the person is told once too.
func (s *instructionSet) refused(shown, by, abs string, err error) {
	what, told := shown, shown+" was left out of the prompt"
	if by != "" {
		what = "@" + shown + ", imported by " + by + ","
		told = fmt.Sprintf("%s imports @%s, which was left out of the prompt", by, shown)
	}
	why := RefusalWords(err)
	fmt.Fprintf(&s.b, "\n(%s was left out: %s)\n", what, why)
	s.p.tellOnce("refused:"+abs, told+": "+why)
}

// RefusalWords is why the door refused a file, as a clause.
func RefusalWords(err error) string {
	var de *kept.DeniedError
	switch {
	case errors.As(err, &de):
		return de.Rule.Origin + " refuses reading it"
	case errors.Is(err, kept.ErrGitDir):
		return kept.ErrGitDir.Error()
	}
	return "it is kept from the model: " + kept.ErrKept.Error()
}

// readInstruction reads an instructions file (imported: a file one
// imports) through the session's door (kept): inside the project
// through the project's door, which follows a link only while it stays
// inside; a link out of the project, or an import outside it, only when
// instruction_links names its target, through the person's door. A
// *rootfs.LinkOutError says it is not named there; nothing of it is
// read.
func (p *Reader) readInstruction(abs string, imported bool) (kept.Text, error) {
	read := p.Door.ReadHead
	if imported {
		read = p.Door.ReadImport
	}
	door, isDoor := p.Fs.(*rootfs.Fs)
	if !isDoor || door.Contains(abs) {
		txt, err := read(p.Fs, abs, MaxInstructionFile+1)
		if !isDoor || !errors.Is(err, rootfs.ErrLinkOut) {
			return txt, err
		}
	}
	target, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return kept.Text{}, err
	}
	for _, a := range p.Links {
		if sameTarget(expandHome(a), target) {
			return read(rootfs.Person(), target, MaxInstructionFile+1)
		}
	}
	return kept.Text{}, &rootfs.LinkOutError{Name: abs, Target: target}
}

// expandHome is p with a leading "~/" as the home directory.
func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}

// sameTarget reports whether the absolute path allowed, as the person
// wrote it in instruction_links, is target (links resolved).
func sameTarget(allowed, target string) bool {
	if !filepath.IsAbs(allowed) {
		return false
	}
	if filepath.Clean(allowed) == target {
		return true
	}
	r, err := filepath.EvalSymlinks(allowed)
	return err == nil && r == target
}

// instructionFile is the instructions file at abs as InstructionsLoaded
// names it: imported by the file at from ("" for one found in a
// directory), a project's, or the person's when it lies outside the
// project (an @~/ import).
func (p *Reader) instructionFile(abs, from string) coordinator.InstructionFile {
	f := coordinator.InstructionFile{Path: abs, MemoryType: "Project", LoadReason: coordinator.LoadSessionStart}
	if from != "" {
		f.LoadReason, f.Parent = coordinator.LoadInclude, from
	}
	if rel, err := filepath.Rel(p.Root, abs); err != nil || !filepath.IsLocal(rel) {
		f.MemoryType = "User"
	}
	return f
}

// shownPath names a file for the prompt: relative to the project root
// inside it, as written (m) outside it.
func (p *Reader) shownPath(abs, m string) string {
	if rel, err := filepath.Rel(p.Root, abs); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return m
}

// clipAtLine is s cut to at most n bytes at the end of a line (or, for a
// line longer than half the bound, at a space), never in a word or a
// UTF-8 sequence; cut says whether anything was left out.
func clipAtLine(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	head := text.Head(s, n)
	if i := strings.LastIndexByte(head, '\n'); i >= n/2 {
		return head[:i+1], true
	}
	if i := strings.LastIndexAny(head, " \t"); i > 0 {
		return head[:i], true
	}
	return head, true
}

// tellOnce says s to the person once per key and process.
func (p *Reader) tellOnce(key, s string) {
	if _, seen := p.said.LoadOrStore(key, true); seen || p.Notify == nil {
		return
	}
	p.Notify(s)
}

// leftOut says, once per file and process, that an instructions file is
// a link out of the project and how the person allows it.
func (p *Reader) leftOut(rel, target string) {
	p.tellOnce(rel, fmt.Sprintf("%s is a link to %s, outside the project, and was left out of the prompt; to use it, add %q to instruction_links in %s",
		filepath.ToSlash(rel), target, target, config.UserFile("~/.config")))
}

func containsBytes(list [][]byte, b []byte) bool {
	for _, x := range list {
		if bytes.Equal(x, b) {
			return true
		}
	}
	return false
}
