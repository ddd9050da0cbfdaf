package instructions

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/frontmatter"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agents"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// Bounds of one rules directory (the person's ~/.claude/rules, the
// project's .claude/rules), which Claude Code reads recursively: at most
// MaxRuleFiles files, MaxRuleDepth directories deep, so that a huge tree
// cannot make every session's start slow; each file and all of them are
// bounded as every instructions file is (MaxInstructionFile,
// MaxInstructions).
const (
	MaxRuleFiles = 100
	MaxRuleDepth = 8
)

// ruleFile is one rules file found: as the prompt shows it, its name
// as found, and its name with links resolved (the same for the
// project's, whose links are never followed).
type ruleFile struct {
	shown, abs, real string
}

// personRules adds the person's own rules (~/.claude/rules/**/*.md)
// after their ~/.claude/CLAUDE.md, as Claude Code loads user rules after
// user memory. They are read through the person's door with its
// redaction, links followed (a rules folder linked from a dotfiles
// repository is theirs); a file that lies where the model can write (in
// the project, in the temporary directory) is no file of the person's:
// left out, said once, as person() does for ~/.claude/CLAUDE.md.
func (s *instructionSet) personRules(home string) {
	files := s.findRules(rootfs.Person(), filepath.Join(home, agents.RulesDir), "~/"+agents.RulesDir, true)
	root, rerr := filepath.EvalSymlinks(s.p.Root)
	for _, f := range files {
		if s.full {
			return
		}
		if rerr == nil && inside(root, f.real) || sandbox.WritableByCommands(f.real) {
			s.p.tellOnce("person:"+f.abs, fmt.Sprintf("%s lies where the model can write (%s), so ralph does not read it as your rules for every project", f.shown, f.real))
			continue
		}
		if s.read[f.abs] || s.read[f.real] {
			continue
		}
		s.read[f.abs], s.read[f.real] = true, true
		txt, err := s.p.Door.ReadHead(rootfs.Person(), f.real, MaxInstructionFile+1)
		if kept.IsRefusal(err) {
			s.refused(f.shown, "", f.abs, err)
		}
		if err != nil {
			continue
		}
		s.addRule(f, txt)
	}
}

// projectRules adds the project's rules (.claude/rules/**/*.md at the
// project root) with the project's instructions, read through the
// project's door. No link under them is followed: what a clone brings
// must not reach out of the project into the person's files.
func (s *instructionSet) projectRules() {
	dir := filepath.Join(s.p.Root, agents.RulesDir)
	if l, ok := s.p.Fs.(afero.Lstater); ok {
		for _, d := range []string{filepath.Dir(dir), dir} {
			fi, _, err := l.LstatIfPossible(d)
			if err != nil {
				return
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				s.p.tellOnce("rulelink:"+d, fmt.Sprintf("%s is a link, and ralph follows no link to the project's rules; they were left out of the prompt (docs/conventions.md)", s.p.shownPath(d, d)))
				return
			}
		}
	}
	for _, f := range s.findRules(s.p.Fs, dir, agents.RulesDir, false) {
		if s.full {
			return
		}
		if s.read[f.abs] {
			continue
		}
		s.read[f.abs] = true
		txt, err := s.p.readInstruction(f.abs, false)
		if kept.IsRefusal(err) {
			s.refused(f.shown, "", f.abs, err)
		}
		if err != nil {
			continue
		}
		s.addRule(f, txt)
	}
}

// findRules lists the markdown files under dir, recursively, in name
// order, read through fsys; shown names dir in the prompt. follow says
// whether links are followed (the person's own) or left out, said once
// (the project's). A directory reached twice through links is read
// once; hidden files and directories are skipped. The bounds are said
// once when reached.
func (s *instructionSet) findRules(fsys afero.Fs, dir, shown string, follow bool) []ruleFile {
	var out []ruleFile
	seen := map[string]bool{}
	var walk func(dir, real, shown string, depth int)
	walk = func(dir, real, shown string, depth int) {
		if depth > MaxRuleDepth {
			s.p.tellOnce("ruledepth:"+dir, fmt.Sprintf("%s is more than %s deep, and the rules below it were left out of the prompt", shown, text.Counted(MaxRuleDepth, "directory", "directories")))
			return
		}
		if seen[real] {
			return
		}
		seen[real] = true
		ents, err := afero.ReadDir(fsys, real)
		if err != nil {
			return
		}
		for _, e := range ents {
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				continue
			}
			abs, sh, r, mode := filepath.Join(dir, name), shown+"/"+name, filepath.Join(real, name), e.Mode()
			if mode&fs.ModeSymlink != 0 {
				if !follow {
					s.p.tellOnce("rulelink:"+abs, fmt.Sprintf("%s is a link, and ralph follows no link in the project's rules; it was left out of the prompt (docs/conventions.md)", sh))
					continue
				}
				target, err := filepath.EvalSymlinks(r)
				if err != nil {
					continue
				}
				fi, err := fsys.Stat(target)
				if err != nil {
					continue
				}
				r, mode = target, fi.Mode()
			}
			switch {
			case mode.IsDir():
				walk(abs, r, sh, depth+1)
			case mode.IsRegular() && strings.HasSuffix(name, ".md"):
				if len(out) >= MaxRuleFiles {
					s.p.tellOnce("rulecount:"+shown, fmt.Sprintf("%s holds more than %s; the rest were left out of the prompt", shown, text.Counted(MaxRuleFiles, "rules file", "rules files")))
					return
				}
				out = append(out, ruleFile{shown: sh, abs: abs, real: r})
			}
		}
	}
	real := dir
	if follow {
		r, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return nil
		}
		real = r
	}
	walk(dir, real, shown, 0)
	return out
}

// addRule gives one rules file without its front matter. A rule whose
// front matter has paths (globs) is for work on the files they match;
// ralph loads no instructions per file, so it gives the rule at the
// start with a first line that says which files it applies to, and the
// model applies it when it works on them (docs/conventions.md). Front
// matter that cannot be read is said once, and the file given whole.
func (s *instructionSet) addRule(f ruleFile, txt kept.Text) {
	doc, err := frontmatter.Parse(string(txt.Data))
	if err != nil {
		s.p.tellOnce("rulehead:"+f.abs, fmt.Sprintf("%s has front matter ralph cannot read (%v), so it is given whole, for every file", f.shown, err))
		s.add(f.shown, f.abs, txt, "", "", 0)
		return
	}
	body := doc.Body
	if globs := doc.Fields["paths"].Items(); len(globs) > 0 {
		body = "(this rule applies when working on files matching " + strings.Join(globs, ", ") + ")\n" + body
	}
	s.add(f.shown, f.abs, kept.Text{Data: []byte(body), Real: txt.Real, Masked: txt.Masked}, "", "", 0)
}

// personHome is the person's home directory, "" when it cannot be
// known or is not absolute.
func personHome() string {
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		return ""
	}
	return home
}

// inside reports whether path is root or lies under root.
func inside(root, path string) bool {
	if root == "" {
		return false
	}
	r, err := filepath.Rel(filepath.Clean(root), filepath.Clean(path))
	return err == nil && (r == "." || filepath.IsLocal(r))
}
