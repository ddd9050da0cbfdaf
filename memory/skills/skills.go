// Package skills finds the Agent Skills a session may use: SKILL.md
// directories under the project's .claude/skills/ and .agents/skills/, the
// person's ~/.claude/skills/ and ralph's own skills directory in the
// person's config (~/.config/ralph/skills/). Only a skill's name and
// description are read at the start; its body is read when a tool loads it
// (Skill.Body), and its other files are read as files.
//
// Every read goes through a door of memory/rootfs: the project's files
// through the project's own, and each of the person's directories through
// a root of its own, so a SKILL.md that is a link out of its directory (to
// ~/.ssh/id_rsa, say) is never read and never reaches the model.
//
// A project file grants nothing: the allowed-tools of a project skill is
// kept as a restriction only (Skill.Grants). When two skills share a name
// the person's own wins (ralph's own, then ~/.claude, then the project's
// .claude/skills, then .agents/skills), with a warning: a repository must
// not be able to replace, under a name the person knows, a skill the
// person wrote and trusts.
package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/frontmatter"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// Source says where a skill came from.
type Source int

const (
	// Project is a skill under the project's .claude/skills/ or
	// .agents/skills/: a file the model could have written.
	Project Source = iota
	// User is a skill under the person's ~/.claude/skills/.
	User
	// Ralph is a skill under ralph's own skills directory in the person's
	// config.
	Ralph
	// Plugin is a skill of a Claude Code plugin's skills/ directory
	// (memory/plugins hands its roots to Roots). It grants nothing: a
	// plugin may have come with a repository.
	Plugin
)

func (s Source) String() string {
	switch s {
	case Project:
		return "project"
	case User:
		return "user"
	case Ralph:
		return "ralph"
	case Plugin:
		return "plugin"
	}
	return fmt.Sprintf("source(%d)", int(s))
}

// Limits keep a hostile or careless skills directory from costing memory
// or the prompt's room.
const (
	// HeadLimit is how much of a SKILL.md discovery reads: its frontmatter
	// must end within it.
	HeadLimit = 64 << 10
	// BodyLimit is how much of a body Body returns.
	BodyLimit = 256 << 10
	// MaxPerDir is how many skill directories one skills directory may
	// hold; the rest are left out with a warning.
	MaxPerDir = 200
)

// ErrMalformed says a SKILL.md could not be read as a skill.
var ErrMalformed = errors.New("malformed skill")

// Skill is one skill: where it came from, its frontmatter, and the door
// through which its body is read.
type Skill struct {
	Name        string
	Description string
	Source      Source
	// Dir is the skill's directory (absolute); File its SKILL.md.
	Dir, File string
	// AllowedTools is the frontmatter's allowed-tools, as written. From a
	// project skill it may only narrow what the session allows (Grants).
	// Plugin names the plugin a Plugin skill came with.
	AllowedTools []string
	Plugin       string
	License      string
	Metadata     map[string]string
	// NoModel is Claude Code's disable-model-invocation: the skill is
	// started by the person only (/name): the model's list leaves it out
	// and the skill tool refuses it.
	NoModel bool
	// NoPerson is Claude Code's user-invocable: false: the person's slash
	// list and completion leave the skill out; the model may still use it.
	NoPerson bool
	// Title is the frontmatter's name when it is not a valid skill name
	// (Title Case with spaces, which Claude Code accepts); Name is then
	// the directory's.
	Title string

	fsys afero.Fs
	keep *kept.Door
}

// Grants reports whether the skill's allowed-tools could grant tools: only a
// skill of the person's own (User, Ralph) may; a project skill's list is a
// restriction only.
// ralph applies no skill's allowed-tools yet (docs/skills.md says why);
// this is the rule it would follow.
func (s Skill) Grants() bool {
	return (s.Source == User || s.Source == Ralph) && len(s.AllowedTools) > 0
}

// Body reads the skill's instructions (SKILL.md without its frontmatter)
// through the same door discovery used, at most BodyLimit bytes; truncated
// says the file held more. It reads the file again, so an edit since the
// session started shows; the name and description in the prompt do not
// change.
func (s Skill) Body() (body string, truncated bool, err error) {
	if s.fsys == nil {
		return "", false, fmt.Errorf("skill %s: no file system to read it through", s.Name)
	}
	txt, err := s.keep.ReadHead(s.fsys, s.File, HeadLimit+BodyLimit+1)
	if err != nil {
		return "", false, fmt.Errorf("skill %s: %w", s.Name, err)
	}
	_, rest, ok, err := frontmatter.Split(string(txt.Data))
	if err == nil && !ok {
		err = fmt.Errorf("it no longer starts with a --- line: %w", ErrMalformed)
	}
	if err != nil {
		return "", false, fmt.Errorf("skill %s: %s: %w", s.Name, s.File, err)
	}
	if len(rest) > BodyLimit {
		return rest[:BodyLimit], true, nil
	}
	return rest, false, nil
}

// Root is one skills directory and the door it is read through.
type Root struct {
	Source Source
	// Dir is the skills directory (…/.claude/skills), absolute.
	Dir  string
	FSys afero.Fs
	// Plugin names the plugin of a Plugin root.
	Plugin string
	// Keep is the session's door for what enters a request (memory/kept),
	// which every read of a skill's files goes through besides FSys: a
	// SKILL.md or a skill's file that is one of the person's secrets, or
	// that a Read deny rule names, is refused; a repository's
	// configuration is read masked. nil judges by the configuration alone
	// (`ralph skills`, which sends nothing).
	Keep *kept.Door
}

// Roots are the skills directories of a session, the most trusted first:
// ralph's own (userConfigDir/ralph/skills), the person's (each of
// agentDirs under home, an agent's folder such as its skills folder
// relative to the home, read through a door on the agent's own folder),
// and the project's (each of agentDirs, then .agents/skills, the Agent
// Skills standard's) read through project, the project's door. The
// agents' folders come from the caller (the agents' table), which memory
// stands below. plugins are the skills directories of Claude Code plugins
// (memory/plugins makes them, each with its own door and Source Plugin),
// taken after the person's and before the project's. An empty home or
// userConfigDir leaves that root out; a person's directory that cannot be
// opened is a warning, not an error.
func Roots(project *rootfs.Fs, home, userConfigDir string, agentDirs []string, plugins []Root) ([]Root, []string) {
	var roots []Root
	var warnings []string
	person := func(src Source, base string, sub ...string) {
		if base == "" {
			return
		}
		door, err := personDoor(base)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				warnings = append(warnings, fmt.Sprintf("skills in %s are left out: %v", base, err))
			}
			return
		}
		roots = append(roots, Root{Source: src, Dir: filepath.Join(append([]string{door.Dir()}, sub...)...), FSys: door})
	}
	if userConfigDir != "" {
		person(Ralph, filepath.Join(userConfigDir, "ralph"), "skills")
	}
	if home != "" {
		for _, d := range agentDirs {
			person(User, filepath.Join(home, filepath.Dir(d)), filepath.Base(d))
		}
	}
	for _, p := range plugins {
		p.Source = Plugin
		roots = append(roots, p)
	}
	if project != nil {
		for _, d := range append(slices.Clone(agentDirs), filepath.Join(".agents", "skills")) {
			roots = append(roots, Root{Source: Project, Dir: filepath.Join(project.Dir(), d), FSys: project})
		}
	}
	return roots, warnings
}

// personDoors are the doors on the person's directories, one a directory
// for the process: a door holds a descriptor open for as long as it is
// used, and a process that opens many sessions (ralph serve) must not
// open one more each time.
var personDoors sync.Map // base -> personEntry

type personEntry struct {
	door *rootfs.Fs
	fi   os.FileInfo
}

// personDoor is the door on base, opened again when base is no longer the
// directory it was opened on (removed and made anew).
func personDoor(base string) (*rootfs.Fs, error) {
	fi, err := os.Stat(base)
	if err != nil {
		return nil, err
	}
	if e, ok := personDoors.Load(base); ok && os.SameFile(e.(personEntry).fi, fi) {
		return e.(personEntry).door, nil
	}
	door, err := rootfs.New(base)
	if err != nil {
		return nil, err
	}
	personDoors.Store(base, personEntry{door: door, fi: fi})
	return door, nil
}

// Set is the skills of a session, fixed when it was loaded so the system
// prompt's list stays the same, byte for byte, for the whole session.
type Set struct {
	skills   []Skill
	warnings []string
}

// Load reads the skills under roots, given the most trusted first (as
// Roots gives them). Nothing it finds is fatal: a malformed skill, a link
// out of its root, a clash of names or an unreadable directory is one
// sentence in Warnings.
func Load(roots []Root) *Set {
	s := &Set{}
	byName := map[string]int{}
	for _, r := range roots {
		found, warnings := scan(r)
		s.warnings = append(s.warnings, warnings...)
		for _, sk := range found {
			if i, ok := byName[sk.Name]; ok {
				kept := s.skills[i]
				s.warnings = append(s.warnings, fmt.Sprintf("skill %q in %s is left out: the %s skill of the same name in %s comes first", sk.Name, sk.Dir, kept.Source, kept.Dir))
				continue
			}
			byName[sk.Name] = len(s.skills)
			s.skills = append(s.skills, sk)
		}
	}
	slices.SortStableFunc(s.skills, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return s
}

// List is the skills, sorted by name (names are unique), the same on every
// call.
// A nil Set has none.
func (s *Set) List() []Skill {
	if s == nil {
		return nil
	}
	return slices.Clone(s.skills)
}

// Lookup finds a skill by name: its bare name, or a plugin skill's
// namespaced one, plugin:skill, as Claude Code names it (plugins' own
// texts refer to their skills that way).
func (s *Set) Lookup(name string) (Skill, bool) {
	if s == nil {
		return Skill{}, false
	}
	bare := name
	plugin, rest, namespaced := strings.Cut(name, ":")
	if namespaced {
		bare = rest
	}
	i, ok := slices.BinarySearchFunc(s.skills, bare, func(sk Skill, n string) int { return strings.Compare(sk.Name, n) })
	if !ok || namespaced && s.skills[i].Plugin != plugin {
		return Skill{}, false
	}
	return s.skills[i], true
}

// ForModel is the skills the model is offered, sorted by name: all but
// those the person alone starts (NoModel).
func (s *Set) ForModel() []Skill {
	return slices.DeleteFunc(s.List(), func(sk Skill) bool { return sk.NoModel })
}

// FullName is the name Claude Code gives the skill: plugin:skill for a
// plugin's, the bare name for any other.
func (s Skill) FullName() string {
	if s.Source == Plugin && s.Plugin != "" {
		return s.Plugin + ":" + s.Name
	}
	return s.Name
}

// Warn adds sentences of the caller's (Roots' own) to Warnings.
func (s *Set) Warn(sentences ...string) { s.warnings = append(s.warnings, sentences...) }

// Warnings are the sentences Load had to say, in the order it found them.
func (s *Set) Warnings() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.warnings)
}

// scan reads one skills directory: each subdirectory holding a SKILL.md is
// a skill, in name order.
func scan(r Root) ([]Skill, []string) {
	entries, err := afero.ReadDir(r.FSys, r.Dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []string{fmt.Sprintf("skills in %s are left out: %s", r.Dir, reason(err))}
	}
	var skills []Skill
	var warnings []string
	n := 0
	for _, e := range entries {
		dir := filepath.Join(r.Dir, e.Name())
		if !e.IsDir() {
			// A link to a directory is followed through the door, which
			// refuses one that leads out of the root.
			if e.Mode()&fs.ModeSymlink == 0 {
				continue
			}
			fi, err := r.FSys.Stat(dir)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("skill directory %s is left out: %s", dir, reason(err)))
				continue
			}
			if !fi.IsDir() {
				continue
			}
		}
		if n == MaxPerDir {
			warnings = append(warnings, fmt.Sprintf("skills in %s after the first %d are left out", r.Dir, MaxPerDir))
			break
		}
		sk, err := readSkill(r, dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		n++
		if err != nil {
			warnings = append(warnings, err.Error())
			continue
		}
		if sk.Name != e.Name() {
			warnings = append(warnings, fmt.Sprintf("skill %q in %s is named unlike its directory; ralph knows it as %q", sk.Name, dir, sk.Name))
		}
		skills = append(skills, sk)
	}
	return skills, warnings
}

// reason is err as the end of a sentence, saying plainly when it is a link
// out of the root.
func reason(err error) string {
	switch {
	case errors.Is(err, rootfs.ErrLinkOut), errors.Is(err, rootfs.ErrOutsideRoot):
		return "it is a link out of its directory, which ralph does not follow"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	return err.Error()
}
