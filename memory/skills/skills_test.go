package skills

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// layout is a project, a home and a config directory side by side in a
// temporary directory, with a secret outside the project.
type layout struct {
	project, home, config, secret string
}

func newLayout(t *testing.T) layout {
	t.Helper()
	base := t.TempDir()
	l := layout{
		project: filepath.Join(base, "project"),
		home:    filepath.Join(base, "home"),
		config:  filepath.Join(base, "home", ".config"),
		secret:  filepath.Join(base, "home", ".ssh", "id_rsa"),
	}
	for _, d := range []string{l.project, l.home, l.config} {
		must(t, os.MkdirAll(d, 0o755))
	}
	write(t, l.secret, "-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n")
	return l
}

func (l layout) load(t *testing.T) *Set {
	t.Helper()
	door, err := rootfs.New(l.project)
	must(t, err)
	roots, warnings := Roots(door, l.home, l.config, []string{".claude/skills"}, nil)
	if len(warnings) > 0 {
		t.Fatalf("roots: %q", warnings)
	}
	return Load(roots)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(text), 0o644))
}

const pdfSkill = `---
name: pdf-forms
description: Fill in PDF forms and extract their fields. Use when the user
  mentions a PDF form, a fillable field or a form template.
allowed-tools: Read, Bash(python3 scripts/fill.py:*)
license: Apache-2.0
metadata:
  author: example-team
  version: "1.2"
---
# PDF forms

1. Run ` + "`python3 scripts/fill.py --list form.pdf`" + ` to see the fields.
2. Write the values to fields.json and fill the form.
`

const changelogSkill = `---
name: changelog
description: Write a changelog entry in Keep a Changelog style for the change on this branch.
allowed-tools:
  - Read
  - Bash(git log:*)
---
Read the commits since the last tag with git log and group them by Added,
Changed, Fixed.
`

const reviewSkill = `---
name: review
description: Review a diff for correctness and style.
allowed-tools: Read Grep Bash(git diff:*)
---
Look at git diff HEAD and list problems by file.
`

func names(skills []Skill) []string {
	var out []string
	for _, s := range skills {
		out = append(out, s.Name+"@"+s.Source.String())
	}
	return out
}

// TestLoadFindsEverySource: skills in the project's two directories, the
// person's ~/.claude and ralph's own config are found, sorted by name,
// with their frontmatter.
func TestLoadFindsEverySource(t *testing.T) {
	l := newLayout(t)
	write(t, filepath.Join(l.project, ".claude/skills/pdf-forms/SKILL.md"), pdfSkill)
	write(t, filepath.Join(l.project, ".claude/skills/pdf-forms/scripts/fill.py"), "print('fill')\n")
	write(t, filepath.Join(l.project, ".agents/skills/changelog/SKILL.md"), changelogSkill)
	write(t, filepath.Join(l.home, ".claude/skills/review/SKILL.md"), reviewSkill)
	write(t, filepath.Join(l.config, "ralph/skills/commit/SKILL.md"), "---\nname: commit\ndescription: Commit staged work with a message in the repo's style.\n---\nbody\n")
	// A directory without SKILL.md is no skill, and says nothing.
	must(t, os.MkdirAll(filepath.Join(l.project, ".claude/skills/notes"), 0o755))

	set := l.load(t)
	if w := set.Warnings(); len(w) > 0 {
		t.Fatalf("warnings: %q", w)
	}
	got := names(set.List())
	want := []string{"changelog@project", "commit@ralph", "pdf-forms@project", "review@user"}
	if !slices.Equal(got, want) {
		t.Fatalf("skills %q, want %q", got, want)
	}
	pdf, ok := set.Lookup("pdf-forms")
	if !ok {
		t.Fatal("pdf-forms not found")
	}
	if pdf.Description != "Fill in PDF forms and extract their fields. Use when the user mentions a PDF form, a fillable field or a form template." {
		t.Errorf("description %q", pdf.Description)
	}
	if !slices.Equal(pdf.AllowedTools, []string{"Read", "Bash(python3 scripts/fill.py:*)"}) {
		t.Errorf("allowed-tools %q", pdf.AllowedTools)
	}
	if pdf.Grants() {
		t.Error("a project skill's allowed-tools grants tools; it may only narrow")
	}
	if pdf.License != "Apache-2.0" || pdf.Metadata["author"] != "example-team" || pdf.Metadata["version"] != "1.2" {
		t.Errorf("license %q metadata %v", pdf.License, pdf.Metadata)
	}
	if pdf.Dir != filepath.Join(l.project, ".claude/skills/pdf-forms") {
		t.Errorf("dir %s", pdf.Dir)
	}
	cl, _ := set.Lookup("changelog")
	if !slices.Equal(cl.AllowedTools, []string{"Read", "Bash(git log:*)"}) {
		t.Errorf("changelog allowed-tools %q", cl.AllowedTools)
	}
	rv, _ := set.Lookup("review")
	if !slices.Equal(rv.AllowedTools, []string{"Read", "Grep", "Bash(git diff:*)"}) {
		t.Errorf("review allowed-tools %q", rv.AllowedTools)
	}
	if !rv.Grants() {
		t.Error("the person's own skill with allowed-tools does not grant")
	}
	body, truncated, err := pdf.Body()
	must(t, err)
	if truncated || !strings.HasPrefix(body, "# PDF forms\n") || strings.Contains(body, "allowed-tools") {
		t.Errorf("body %q truncated %v", body, truncated)
	}
	if _, ok := set.Lookup("notes"); ok {
		t.Error("a directory without SKILL.md is a skill")
	}
}

// TestListIsStable: two loads of the same directories give the same list,
// byte for byte, whatever order the directory holds them in.
func TestListIsStable(t *testing.T) {
	l := newLayout(t)
	for _, n := range []string{"zeta", "alpha", "mid-one", "beta2"} {
		write(t, filepath.Join(l.project, ".claude/skills", n, "SKILL.md"), "---\nname: "+n+"\ndescription: Skill "+n+".\n---\n")
	}
	a, b := names(l.load(t).List()), names(l.load(t).List())
	if !slices.Equal(a, b) || !slices.IsSorted(a) {
		t.Fatalf("lists %q and %q", a, b)
	}
}

// TestMalformedIsOneSentence: each broken SKILL.md is left out with one
// sentence that names the file and the reason; the good one still loads.
func TestMalformedIsOneSentence(t *testing.T) {
	l := newLayout(t)
	dir := filepath.Join(l.project, ".claude/skills")
	cases := map[string]string{
		"no-front":    "# just markdown\n",
		"bad-yaml":    "---\nname: bad-yaml\ndescription: [unclosed\n---\n",
		"no-name":     "---\ndescription: Something.\n---\n",
		"Bad_Dir":     "---\nname: Bad_Name\ndescription: Something.\n---\n",
		"no-desc":     "---\nname: no-desc\n---\n",
		"unclosed":    "---\nname: unclosed\ndescription: Something.\n",
		"tools-map":   "---\nname: tools-map\ndescription: Something.\nallowed-tools: {a: b}\n---\n",
		"nested-meta": "---\nname: nested-meta\ndescription: Something.\nmetadata:\n  a: {b: c}\n---\n",
		"long-desc":   "---\nname: long-desc\ndescription: " + strings.Repeat("x", maxDescription+1) + "\n---\n",
	}
	for n, text := range cases {
		write(t, filepath.Join(dir, n, "SKILL.md"), text)
	}
	write(t, filepath.Join(dir, "good/SKILL.md"), "---\nname: good\ndescription: Works.\n---\n")
	set := l.load(t)
	if got := names(set.List()); !slices.Equal(got, []string{"good@project"}) {
		t.Fatalf("skills %q", got)
	}
	w := set.Warnings()
	if len(w) != len(cases) {
		t.Fatalf("%d warnings for %d broken skills: %q", len(w), len(cases), w)
	}
	for _, s := range w {
		if strings.Count(s, "\n") > 0 || !strings.Contains(s, "SKILL.md is left out: ") {
			t.Errorf("not one sentence naming the file: %q", s)
		}
	}
}

// TestLinkOutIsNotRead: a SKILL.md linked to the person's key, and a skill
// directory linked out of the project, are refused and nothing of the key
// is read; a relative link inside the project is followed, and the body
// of the skill it leads to is read.
func TestLinkOutIsNotRead(t *testing.T) {
	l := newLayout(t)
	dir := filepath.Join(l.project, ".claude/skills")
	must(t, os.MkdirAll(filepath.Join(dir, "stealer"), 0o755))
	must(t, os.Symlink(l.secret, filepath.Join(dir, "stealer/SKILL.md")))
	outside := filepath.Join(l.home, "elsewhere")
	write(t, filepath.Join(outside, "SKILL.md"), "---\nname: elsewhere\ndescription: Outside the project.\n---\n")
	must(t, os.Symlink(outside, filepath.Join(dir, "elsewhere")))
	write(t, filepath.Join(l.project, "docs/shared-skill/SKILL.md"), "---\nname: shared\ndescription: Linked inside.\n---\nshared body\n")
	// A relative link inside the project is followed (os.Root refuses an
	// absolute one even to a path inside, as it does for CLAUDE.md).
	must(t, os.Symlink("../../docs/shared-skill", filepath.Join(dir, "shared")))

	set := l.load(t)
	if got := names(set.List()); !slices.Equal(got, []string{"shared@project"}) {
		t.Fatalf("skills %q, warnings %q", got, set.Warnings())
	}
	shared, _ := set.Lookup("shared")
	if body, _, err := shared.Body(); err != nil || body != "shared body\n" {
		t.Errorf("shared body %q, %v", body, err)
	}
	w := strings.Join(set.Warnings(), "\n")
	if strings.Contains(w, "OPENSSH") || strings.Contains(w, "secret") {
		t.Fatalf("the key reached a warning: %q", w)
	}
	for _, n := range []string{"stealer", "elsewhere"} {
		if !strings.Contains(w, n) || !strings.Contains(w, "link out of its directory") {
			t.Errorf("no warning for %s: %q", n, w)
		}
	}
}

// TestBodyLinkedOutLaterIsRefused: a SKILL.md swapped for a link to the key
// after the session started is refused when its body is loaded.
func TestBodyLinkedOutLaterIsRefused(t *testing.T) {
	l := newLayout(t)
	file := filepath.Join(l.project, ".claude/skills/swap/SKILL.md")
	write(t, file, "---\nname: swap\ndescription: Swapped later.\n---\nbody\n")
	sk, ok := l.load(t).Lookup("swap")
	if !ok {
		t.Fatal("swap not found")
	}
	must(t, os.Remove(file))
	must(t, os.Symlink(l.secret, file))
	body, _, err := sk.Body()
	if err == nil || !errors.Is(err, rootfs.ErrLinkOut) || strings.Contains(body, "secret") {
		t.Fatalf("body %q err %v", body, err)
	}
}

// TestHugeFileIsBounded: a SKILL.md of several megabytes loads (its
// frontmatter is at the top), and its body comes back cut at BodyLimit; one
// whose frontmatter never ends is refused after HeadLimit.
func TestHugeFileIsBounded(t *testing.T) {
	l := newLayout(t)
	dir := filepath.Join(l.project, ".claude/skills")
	write(t, filepath.Join(dir, "huge/SKILL.md"), "---\nname: huge\ndescription: Big.\n---\n"+strings.Repeat("line of text\n", 400_000))
	write(t, filepath.Join(dir, "endless/SKILL.md"), "---\nname: endless\ndescription: x\n"+strings.Repeat("# comment\n", 400_000))
	set := l.load(t)
	if got := names(set.List()); !slices.Equal(got, []string{"huge@project"}) {
		t.Fatalf("skills %q", got)
	}
	if w := set.Warnings(); len(w) != 1 || !strings.Contains(w[0], "endless") || !strings.Contains(w[0], "does not end") {
		t.Fatalf("warnings %q", w)
	}
	sk, _ := set.Lookup("huge")
	body, truncated, err := sk.Body()
	must(t, err)
	if !truncated || len(body) != BodyLimit {
		t.Fatalf("body of %d bytes, truncated %v", len(body), truncated)
	}
}

// TestNameClash: the person's own skill wins over the project's of the same
// name, ralph's own over ~/.claude's, .claude/skills over .agents/skills,
// each time with a warning that names both.
func TestNameClash(t *testing.T) {
	l := newLayout(t)
	skill := func(name, desc string) string {
		return "---\nname: " + name + "\ndescription: " + desc + "\n---\n"
	}
	write(t, filepath.Join(l.project, ".claude/skills/deploy/SKILL.md"), skill("deploy", "The repository's deploy."))
	write(t, filepath.Join(l.home, ".claude/skills/deploy/SKILL.md"), skill("deploy", "My deploy."))
	write(t, filepath.Join(l.home, ".claude/skills/lint/SKILL.md"), skill("lint", "Claude's lint."))
	write(t, filepath.Join(l.config, "ralph/skills/lint/SKILL.md"), skill("lint", "ralph's lint."))
	write(t, filepath.Join(l.project, ".claude/skills/test/SKILL.md"), skill("test", "From .claude."))
	write(t, filepath.Join(l.project, ".agents/skills/test/SKILL.md"), skill("test", "From .agents."))
	set := l.load(t)
	got := map[string]string{}
	for _, s := range set.List() {
		got[s.Name] = s.Description
	}
	want := map[string]string{"deploy": "My deploy.", "lint": "ralph's lint.", "test": "From .claude."}
	for n, d := range want {
		if got[n] != d {
			t.Errorf("%s is %q, want %q", n, got[n], d)
		}
	}
	w := set.Warnings()
	if len(w) != 3 {
		t.Fatalf("warnings %q", w)
	}
	for _, s := range w {
		if !strings.Contains(s, "comes first") {
			t.Errorf("warning %q", s)
		}
	}
}

// TestDescriptionIsOneLine: control characters and newlines of a
// description become spaces, so a file cannot shape the prompt or the
// terminal.
func TestDescriptionIsOneLine(t *testing.T) {
	l := newLayout(t)
	write(t, filepath.Join(l.project, ".claude/skills/ctl/SKILL.md"), "---\nname: ctl\ndescription: \"first\\nsecond\\u001b[31m red\\u202e\"\n---\n")
	sk, ok := l.load(t).Lookup("ctl")
	if !ok {
		t.Fatal("ctl not found")
	}
	if sk.Description != "first second [31m red" {
		t.Fatalf("description %q", sk.Description)
	}
}

// TestNoPersonDirs: a home without ~/.claude and no config directory give
// no roots of the person's and no warnings.
func TestNoPersonDirs(t *testing.T) {
	l := newLayout(t)
	door, err := rootfs.New(l.project)
	must(t, err)
	roots, warnings := Roots(door, l.home, filepath.Join(l.home, "missing"), []string{".claude/skills"}, nil)
	if len(warnings) > 0 || len(roots) != 2 {
		t.Fatalf("roots %v warnings %q", roots, warnings)
	}
	if set := Load(roots); len(set.List()) != 0 || len(set.Warnings()) != 0 {
		t.Fatalf("set %v", set)
	}
}

// TestFIFOIsNotWaitedOn: a FIFO in a SKILL.md's place is refused at
// discovery and when a body is loaded, without waiting for a writer.
func TestFIFOIsNotWaitedOn(t *testing.T) {
	l := newLayout(t)
	file := filepath.Join(l.project, ".claude/skills/pipe/SKILL.md")
	write(t, file, "---\nname: pipe\ndescription: Becomes a FIFO.\n---\nbody\n")
	sk, ok := l.load(t).Lookup("pipe")
	if !ok {
		t.Fatal("pipe not found")
	}
	must(t, os.Remove(file))
	if err := mkfifo(file); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	if _, _, err := sk.Body(); !errors.Is(err, rootfs.ErrNotRegular) {
		t.Fatalf("body of a FIFO: %v", err)
	}
	// A FIFO among a skill's own files is refused by ReadFile too.
	other := filepath.Join(l.project, ".claude/skills/other/SKILL.md")
	write(t, other, "---\nname: other\ndescription: Has a FIFO beside it.\n---\nbody\n")
	osk, ok := l.load(t).Lookup("other")
	if !ok {
		t.Fatal("other not found")
	}
	must(t, mkfifo(filepath.Join(filepath.Dir(other), "notes.md")))
	if _, _, err := osk.ReadFile("notes.md"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("ReadFile of a FIFO: %v", err)
	}
	must(t, os.RemoveAll(filepath.Dir(other)))
	set := l.load(t)
	if len(set.List()) != 0 || len(set.Warnings()) != 1 || !strings.Contains(set.Warnings()[0], "not a regular file") {
		t.Fatalf("skills %q warnings %q", names(set.List()), set.Warnings())
	}
}

// TestNameUnlikeDirectory: a skill named unlike its directory loads under
// its own name, with a warning.
func TestNameUnlikeDirectory(t *testing.T) {
	l := newLayout(t)
	write(t, filepath.Join(l.project, ".claude/skills/dir-name/SKILL.md"), "---\nname: other-name\ndescription: Named otherwise.\n---\n")
	set := l.load(t)
	if got := names(set.List()); !slices.Equal(got, []string{"other-name@project"}) {
		t.Fatalf("skills %q", got)
	}
	if w := set.Warnings(); len(w) != 1 || !strings.Contains(w[0], "unlike its directory") {
		t.Fatalf("warnings %q", w)
	}
}

// TestTooManySkills: a skills directory past MaxPerDir is cut there with a
// warning, so a repository cannot fill the prompt.
func TestTooManySkills(t *testing.T) {
	l := newLayout(t)
	for i := range MaxPerDir + 5 {
		n := fmt.Sprintf("s%03d", i)
		write(t, filepath.Join(l.project, ".claude/skills", n, "SKILL.md"), "---\nname: "+n+"\ndescription: x.\n---\n")
	}
	set := l.load(t)
	if len(set.List()) != MaxPerDir || len(set.Warnings()) != 1 {
		t.Fatalf("%d skills, warnings %q", len(set.List()), set.Warnings())
	}
}

// TestSkillFiles: a person's skill lists its other files and reads them
// through a door on its own directory; a path or a link out of it (to
// the key, or to a file beside the skill in ~/.claude) is refused.
func TestSkillFiles(t *testing.T) {
	l := newLayout(t)
	dir := filepath.Join(l.home, ".claude/skills/fill")
	write(t, filepath.Join(dir, "SKILL.md"), "---\nname: fill\ndescription: Fill forms.\n---\nRun scripts/fill.py.\n")
	write(t, filepath.Join(dir, "scripts/fill.py"), "print('fill')\n")
	write(t, filepath.Join(l.home, ".claude/settings.json"), `{"secret": "beside"}`)
	must(t, os.Symlink(l.secret, filepath.Join(dir, "key")))
	must(t, os.Symlink("../../settings.json", filepath.Join(dir, "settings")))
	sk, ok := l.load(t).Lookup("fill")
	if !ok {
		t.Fatal("fill not found")
	}
	files, more, err := sk.Files()
	must(t, err)
	if more || !slices.Equal(files, []string{"key", "scripts/fill.py", "settings"}) {
		t.Fatalf("files %q more %v", files, more)
	}
	data, _, err := sk.ReadFile("scripts/fill.py")
	if err != nil || string(data) != "print('fill')\n" {
		t.Fatalf("fill.py %q %v", data, err)
	}
	for _, bad := range []string{"key", "settings", "../../settings.json", l.secret, "../fill/../../../.ssh/id_rsa"} {
		data, _, err := sk.ReadFile(bad)
		if err == nil || strings.Contains(string(data), "secret") {
			t.Errorf("ReadFile(%q) = %q, %v", bad, data, err)
		}
	}
}

// A Title Case name, which Claude Code accepts, names the skill by its
// directory; a plugin skill is found as plugin:skill and by its bare name
// (issue 69).
func TestNamesAsClaudeCode(t *testing.T) {
	l := newLayout(t)
	dir := filepath.Join(l.project, ".claude/skills")
	write(t, filepath.Join(dir, "hook-development/SKILL.md"), "---\nname: Hook Development\ndescription: Hooks.\n---\n")
	set := l.load(t)
	sk, ok := set.Lookup("hook-development")
	if !ok || sk.Title != "Hook Development" {
		t.Fatalf("Title Case skill: %+v %v; warnings %q", sk, ok, set.Warnings())
	}
	p := &Set{skills: []Skill{{Name: "brainstorming", Source: Plugin, Plugin: "superpowers"}}}
	for _, n := range []string{"brainstorming", "superpowers:brainstorming"} {
		if _, ok := p.Lookup(n); !ok {
			t.Errorf("%s not found", n)
		}
	}
	if _, ok := p.Lookup("other:brainstorming"); ok {
		t.Error("other:brainstorming found")
	}
	if got := p.List()[0].FullName(); got != "superpowers:brainstorming" {
		t.Errorf("full name %q", got)
	}
}

// disable-model-invocation leaves a skill out of ForModel, the model's
// list; user-invocable: false is read as NoPerson and stays in it.
func TestPersonAndModelFlags(t *testing.T) {
	l := newLayout(t)
	write(t, filepath.Join(l.project, ".claude", "skills", "board", "SKILL.md"), "---\nname: board\ndescription: d\ndisable-model-invocation: true\n---\nbody\n")
	write(t, filepath.Join(l.project, ".claude", "skills", "lore", "SKILL.md"), "---\nname: lore\ndescription: d\nuser-invocable: false\n---\nbody\n")
	set := l.load(t)
	if got := names(set.ForModel()); len(got) != 1 || got[0] != "lore@project" {
		t.Fatalf("ForModel = %v", got)
	}
	board, _ := set.Lookup("board")
	lore, _ := set.Lookup("lore")
	if !board.NoModel || board.NoPerson || lore.NoModel || !lore.NoPerson {
		t.Fatalf("board %+v, lore %+v", board, lore)
	}
}
