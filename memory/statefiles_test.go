package memory

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"
)

const sfRoot = "/project"

var sfNow = time.Date(2026, 11, 21, 14, 3, 9, 0, time.UTC)

func sfRead(t *testing.T, fs afero.Fs, name string) string {
	t.Helper()
	b, err := afero.ReadFile(fs, filepath.Join(sfRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sfWrite(t *testing.T, fs afero.Fs, name, text string) {
	t.Helper()
	if err := afero.WriteFile(fs, filepath.Join(sfRoot, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestInitProjectCreatesFiles(t *testing.T) {
	fs := afero.NewMemMapFs()
	sfWrite(t, fs, "go.mod", "module x\n")
	sfWrite(t, fs, ".git/HEAD", "ref: refs/heads/main\n")
	res, err := InitProject(fs, sfRoot, sfNow)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{AgentFile, InstructionsFile, GoalsFile, "RALPH_TASKS.md", ProgressFile, TodoFile, ".ralph/.gitignore"}
	if !slices.Equal(res.Created, want) || len(res.Existing) != 0 {
		t.Fatalf("Created %v Existing %v", res.Created, res.Existing)
	}
	if !res.Info.Git || res.Info.Branch != "main" || !slices.Equal(res.Info.Languages, []string{"Go"}) {
		t.Errorf("Info %+v", res.Info)
	}
	agent := sfRead(t, fs, AgentFile)
	if !strings.HasPrefix(agent, "# AGENT.md\n") {
		t.Errorf("AGENT.md's heading:\n%s", agent)
	}
	// The starter instructions file names none of ralph's own facts:
	// they are in AGENT.md.
	if got := sfRead(t, fs, InstructionsFile); !strings.HasPrefix(got, "# AGENTS.md\n") || strings.Contains(got, "## Learnings") {
		t.Errorf("AGENTS.md's starter:\n%s", got)
	}
	for _, s := range []string{"## Project\n", "- Languages: Go\n", "- Build: `go build ./...`\n",
		"- Test: `go test ./...`\n", "- Lint: `go vet ./...`\n", "- Git branch: main\n", "2026-11-21"} {
		if !strings.Contains(agent, s) {
			t.Errorf("AGENT.md lacks %q:\n%s", s, agent)
		}
	}
	if !strings.HasSuffix(agent, "\n## Learnings\n") {
		t.Errorf("AGENT.md should end with an empty Learnings section:\n%s", agent)
	}
	tasks := sfRead(t, fs, "RALPH_TASKS.md")
	if !strings.Contains(tasks, "States: [ ] open, [x] done, [~] in progress, [!] failed, [-] skipped.") {
		t.Errorf("tasks template:\n%s", tasks)
	}
	// The example task must be commented out so it is not a real task.
	uncommented := regexp.MustCompile(`<!--[\s\S]*?-->`).ReplaceAllString(tasks, "")
	if strings.Contains(uncommented, "- [") || !strings.Contains(tasks, "<!-- - [ ] ") {
		t.Errorf("the example task is live:\n%s", tasks)
	}
	for _, name := range []string{GoalsFile, ProgressFile, TodoFile} {
		if text := sfRead(t, fs, name); !strings.HasPrefix(text, "# ") || len(text) > 800 {
			t.Errorf("%s template:\n%s", name, text)
		}
	}
	if got := sfRead(t, fs, ".ralph/.gitignore"); !strings.HasSuffix(got, "\n/*\n!/config.toml\n!/progress/\n") {
		t.Errorf(".gitignore:\n%s", got)
	}
}

func TestInitProjectNothingDetected(t *testing.T) {
	fs := afero.NewMemMapFs()
	if _, err := InitProject(fs, sfRoot, sfNow); err != nil {
		t.Fatal(err)
	}
	agent := sfRead(t, fs, AgentFile)
	for _, s := range []string{"- Languages: none detected\n", "- Test: none detected\n", "- Git: not a repository\n"} {
		if !strings.Contains(agent, s) {
			t.Errorf("AGENT.md lacks %q:\n%s", s, agent)
		}
	}
}

// TestLearningsGoToAgentFile: learnings go to AGENT.md, never to the
// person's instructions (AGENTS.md, CLAUDE.md, a link between them); ralph
// init keeps a project's CLAUDE.md or AGENTS.md byte for byte, creates
// AGENT.md beside it, and creates no AGENTS.md where one of them is.
func TestLearningsGoToAgentFile(t *testing.T) {
	dir := t.TempDir()
	fs := afero.NewOsFs()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "CLAUDE.md"), []byte("# mine\n"), 0o644))
	must(os.Symlink("CLAUDE.md", filepath.Join(dir, InstructionsFile)))
	must(AppendLearning(fs, dir, "n", sfNow))
	if b, err := os.ReadFile(filepath.Join(dir, AgentFile)); err != nil || !strings.Contains(string(b), "\n- n (2026-11-21)\n") {
		t.Errorf("the learning is not in AGENT.md: %q, %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "CLAUDE.md")); string(b) != "# mine\n" {
		t.Errorf("CLAUDE.md written through the link: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(dir, InstructionsFile)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the AGENTS.md link was replaced: %v", err)
	}
	res, err := InitProject(fs, dir, sfNow)
	must(err)
	if res.Instructions != InstructionsFile || slices.Contains(res.Created, InstructionsFile) {
		t.Errorf("init beside a linked AGENTS.md: %+v", res)
	}

	dir = t.TempDir()
	must(os.WriteFile(filepath.Join(dir, "CLAUDE.md"), []byte("# mine\n"), 0o644))
	res, err = InitProject(fs, dir, sfNow)
	must(err)
	if res.Instructions != "CLAUDE.md" || slices.Contains(res.Created, InstructionsFile) || !slices.Contains(res.Existing, "CLAUDE.md") ||
		!slices.Contains(res.Created, AgentFile) {
		t.Errorf("init beside CLAUDE.md: %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "CLAUDE.md")); string(b) != "# mine\n" {
		t.Errorf("init changed CLAUDE.md: %q", b)
	}
	must(AppendLearning(fs, dir, "m", sfNow))
	if b, _ := os.ReadFile(filepath.Join(dir, "CLAUDE.md")); string(b) != "# mine\n" {
		t.Errorf("remember changed CLAUDE.md: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, InstructionsFile)); err == nil {
		t.Errorf("AGENTS.md was written beside CLAUDE.md")
	}
}

func TestInitProjectNeverOverwrites(t *testing.T) {
	fs := afero.NewMemMapFs()
	mine := "my goals\r\nno trailing newline"
	sfWrite(t, fs, GoalsFile, mine)
	sfWrite(t, fs, AgentFile, "")
	res, err := InitProject(fs, sfRoot, sfNow)
	if err != nil {
		t.Fatal(err)
	}
	if got := sfRead(t, fs, GoalsFile); got != mine {
		t.Errorf("goals rewritten: %q", got)
	}
	if got := sfRead(t, fs, AgentFile); got != "" {
		t.Errorf("empty AGENT.md rewritten: %q", got)
	}
	if !slices.Equal(res.Existing, []string{AgentFile, GoalsFile}) || len(res.Created) != 5 {
		t.Errorf("Created %v Existing %v", res.Created, res.Existing)
	}
	// A second init finds everything and changes nothing.
	before := sfSnapshot(t, fs)
	res, err = InitProject(fs, sfRoot, sfNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Created) != 0 || len(res.Existing) != 7 {
		t.Errorf("second init: Created %v Existing %v", res.Created, res.Existing)
	}
	if after := sfSnapshot(t, fs); !maps.Equal(before, after) {
		t.Errorf("second init changed files")
	}
}

func sfSnapshot(t *testing.T, fs afero.Fs) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := afero.Walk(fs, sfRoot, func(path string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			b, err := afero.ReadFile(fs, path)
			files[path] = string(b)
			return err
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestInitProjectMergesGitignore(t *testing.T) {
	fs := afero.NewMemMapFs()
	sfWrite(t, fs, ".ralph/.gitignore", "# mine\r\nscratch/\r\nsessions/")
	if _, err := InitProject(fs, sfRoot, sfNow); err != nil {
		t.Fatal(err)
	}
	want := "# mine\r\nscratch/\r\nsessions/\r\n/archive/\r\n/*.lock\r\n/history\r\n/session.json\r\n/*.sock\r\n"
	if got := sfRead(t, fs, ".ralph/.gitignore"); got != want {
		t.Errorf("merged .gitignore %q, want %q", got, want)
	}
	if _, err := InitProject(fs, sfRoot, sfNow); err != nil {
		t.Fatal(err)
	}
	if got := sfRead(t, fs, ".ralph/.gitignore"); got != want {
		t.Errorf("second init changed .gitignore to %q", got)
	}
}

// TestInitProjectReplacesLegacyGitignore: the .ralph/.gitignore earlier
// versions wrote kept itself out of its own ignore, so .ralph/ showed as
// untracked; init replaces that exact text with today's, which ignores
// itself.
func TestInitProjectReplacesLegacyGitignore(t *testing.T) {
	fs := afero.NewMemMapFs()
	sfWrite(t, fs, ".ralph/.gitignore", legacyStateGitignore)
	if _, err := InitProject(fs, sfRoot, sfNow); err != nil {
		t.Fatal(err)
	}
	got := sfRead(t, fs, ".ralph/.gitignore")
	if got != stateGitignore || strings.Contains(got, "!/.gitignore") {
		t.Errorf(".gitignore after init:\n%s", got)
	}
}

// TestEnsureStateDirReplacesLegacyGitignore: the first ralph to run in a
// project whose .ralph/.gitignore is exactly the old text replaces it;
// one the person edited stays as it is.
func TestEnsureStateDirReplacesLegacyGitignore(t *testing.T) {
	fs := afero.NewMemMapFs()
	sfWrite(t, fs, ".ralph/.gitignore", legacyStateGitignore)
	if err := EnsureStateDir(fs, sfRoot); err != nil {
		t.Fatal(err)
	}
	if got := sfRead(t, fs, ".ralph/.gitignore"); got != stateGitignore {
		t.Errorf(".gitignore:\n%s", got)
	}
	mine := legacyStateGitignore + "scratch/\n"
	sfWrite(t, fs, ".ralph/.gitignore", mine)
	if err := EnsureStateDir(fs, sfRoot); err != nil {
		t.Fatal(err)
	}
	if got := sfRead(t, fs, ".ralph/.gitignore"); got != mine {
		t.Errorf("an edited .gitignore changed:\n%s", got)
	}
}

func TestLoadStateDocs(t *testing.T) {
	fs := afero.NewMemMapFs()
	agent := strings.Repeat("line of agent notes\n", 20) // 400 bytes
	sfWrite(t, fs, AgentFile, agent)
	sfWrite(t, fs, "RALPH_TASKS.md", "# Tasks\n- [ ] one\n")
	var progress strings.Builder
	progress.WriteString("# Progress\n")
	for i := range 10 {
		fmt.Fprintf(&progress, "\n## 2026-11-%02d 10:00 UTC — task %d\n\nDid ## things %d.\n", i+1, i, i)
	}
	sfWrite(t, fs, ProgressFile, progress.String())

	docs, err := LoadStateDocs(nil, fs, sfRoot, 100, 150)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range docs {
		names = append(names, d.Name)
	}
	if !slices.Equal(names, []string{AgentFile, "RALPH_TASKS.md", ProgressFile}) {
		t.Fatalf("names %v", names)
	}
	if d := docs[0]; !d.Truncated || len(d.Content) > 100 || !strings.HasPrefix(agent, d.Content) ||
		!strings.HasSuffix(d.Content, "\n") {
		t.Errorf("agent doc %+v", d)
	}
	if d := docs[1]; d.Truncated || d.Content != "# Tasks\n- [ ] one\n" {
		t.Errorf("tasks doc %+v", d)
	}
	p := docs[2]
	if !p.Truncated || len(p.Content) > 150 || !strings.HasSuffix(progress.String(), p.Content) ||
		!strings.HasPrefix(p.Content, "## 2026-11-") || !strings.HasSuffix(p.Content, "Did ## things 9.\n") {
		t.Errorf("progress doc %+v", p)
	}

	// Within the limits nothing is cut; no limit means whole files.
	for _, limits := range [][2]int{{1000, 1000}, {0, 0}} {
		docs, err = LoadStateDocs(nil, fs, sfRoot, limits[0], limits[1])
		if err != nil {
			t.Fatal(err)
		}
		if docs[0].Content != agent || docs[0].Truncated || docs[2].Content != progress.String() || docs[2].Truncated {
			t.Errorf("limits %v: %+v", limits, docs)
		}
	}
}

func TestLoadStateDocsHeadCut(t *testing.T) {
	// Without a line end in the second half of the budget the cut falls
	// inside a line, but never inside a UTF-8 character.
	fs := afero.NewMemMapFs()
	sfWrite(t, fs, GoalsFile, "x"+strings.Repeat("é", 20))
	sfWrite(t, fs, TodoFile, "a\nbcdefghijklmnop\n")
	docs, err := LoadStateDocs(nil, fs, sfRoot, 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].Content != "x"+strings.Repeat("é", 4) || docs[1].Content != "a\nbcdefghi" ||
		!docs[0].Truncated || !docs[1].Truncated {
		t.Errorf("got %+v", docs)
	}
}

func TestLoadStateDocsProgressBoundaries(t *testing.T) {
	entry := "\n## 2026-11-21 10:00 UTC — t\n\nbody\n"
	tests := []struct{ file, want string }{
		// The tail starts exactly at an entry heading.
		{"# Progress\n" + strings.Repeat("x", 50) + entry, entry[1:]},
		// One entry longer than the budget: its last whole lines.
		{"# Progress\n\n## big\n" + strings.Repeat("long line\n", 10), strings.Repeat("long line\n", 2)},
		// No line breaks at all: no split UTF-8 character.
		{strings.Repeat("é", 40), strings.Repeat("é", 12)},
	}
	for i, tt := range tests {
		fs := afero.NewMemMapFs()
		sfWrite(t, fs, ProgressFile, tt.file)
		limit := len(entry) - 1
		if i > 0 {
			limit = 25
		}
		docs, err := LoadStateDocs(nil, fs, sfRoot, 10, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(docs) != 1 || docs[0].Content != tt.want || !docs[0].Truncated {
			t.Errorf("case %d: got %+v, want %q", i, docs, tt.want)
		}
	}
}

func TestLoadStateDocsReadError(t *testing.T) {
	if _, err := LoadStateDocs(nil, afero.NewReadOnlyFs(afero.NewMemMapFs()), sfRoot, 10, 10); err != nil {
		t.Errorf("missing files: %v", err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, GoalsFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, TasksFile), []byte("- [ ] one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// What is no regular file holds no state: it is left out, and the
	// other files still reach the prompt.
	if docs, err := LoadStateDocs(nil, afero.NewOsFs(), dir, 10, 10); err != nil || len(docs) != 1 || docs[0].Name != TasksFile {
		t.Errorf("a directory named RALPH_GOALS.md: %+v, %v; want it left out and the task file kept", docs, err)
	}
}

func TestContextBlock(t *testing.T) {
	got := ContextBlock([]StateDoc{
		{Name: AgentFile, Content: "# A\n```go\nx\n```\n"},
		{Name: GoalsFile, Content: "no newline", Truncated: true},
		{Name: ProgressFile, Content: "## e\n", Truncated: true},
	})
	want := "### AGENT.md\n\n(ralph's own learnings about this project; the remember tool adds to them.)\n\n````markdown\n# A\n```go\nx\n```\n````\n" +
		"\n### RALPH_GOALS.md\n\n(Truncated: only the beginning is shown; read the file for the rest.)\n\n" +
		"```markdown\nno newline\n```\n" +
		"\n### RALPH_PROGRESS.md\n\n(Only the most recent entries are shown; older ones are earlier in the file.)\n\n" +
		"```markdown\n## e\n```\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if ContextBlock(nil) != "" {
		t.Error("no docs should give an empty block")
	}
}

func TestAppendLearningMissingFile(t *testing.T) {
	fs := afero.NewMemMapFs()
	if err := AppendLearning(fs, sfRoot, "  use make test\n  not go test  ", sfNow); err != nil {
		t.Fatal(err)
	}
	got := sfRead(t, fs, AgentFile)
	if !strings.HasPrefix(got, "# AGENT.md\n") || !strings.HasSuffix(got, "\n## Learnings\n\n- use make test not go test (2026-11-21)\n") {
		t.Errorf("got:\n%s", got)
	}
}

func TestAppendLearningInsertions(t *testing.T) {
	tests := []struct{ name, before, after string }{
		{"no section", "# Notes\n\nsome text", "# Notes\n\nsome text\n\n## Learnings\n\n- n (2026-11-21)\n"},
		{"no section, blank line at end", "# Notes\n\n", "# Notes\n\n## Learnings\n\n- n (2026-11-21)\n"},
		{"empty section last", "# A\n\n## Learnings\n", "# A\n\n## Learnings\n\n- n (2026-11-21)\n"},
		{"section last without final newline", "## Learnings\n\n- a", "## Learnings\n\n- a\n- n (2026-11-21)\n"},
		{"section in the middle",
			"# A\n\n## Project\n\n- Go\n\n## Learnings\n\n- a (2026-01-01)\n  continued  \n\n\n## Later\n\ntext\t \n### x\n",
			"# A\n\n## Project\n\n- Go\n\n## Learnings\n\n- a (2026-01-01)\n  continued  \n- n (2026-11-21)\n\n\n## Later\n\ntext\t \n### x\n"},
		{"subsections belong to the section",
			"## Learnings\n- a\n### Sub\n- b\n\n# Next\n",
			"## Learnings\n- a\n### Sub\n- b\n- n (2026-11-21)\n\n# Next\n"},
		{"headings in code fences are not sections",
			"## Learnings\n\n```sh\n## not a heading\n```\n\n## Other\n",
			"## Learnings\n\n```sh\n## not a heading\n```\n- n (2026-11-21)\n\n## Other\n"},
		{"heading spelled loosely", "##   learnings  \n\n## B\n", "##   learnings  \n\n- n (2026-11-21)\n\n## B\n"},
		{"CRLF file keeps CRLF",
			"# A\r\n\r\n## Learnings\r\n\r\n- a\r\n\r\n## B\r\nb\r\n",
			"# A\r\n\r\n## Learnings\r\n\r\n- a\r\n- n (2026-11-21)\r\n\r\n## B\r\nb\r\n"},
		{"CRLF file without the section", "# A\r\ntext\r\n", "# A\r\ntext\r\n\r\n## Learnings\r\n\r\n- n (2026-11-21)\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := afero.NewMemMapFs()
			sfWrite(t, fs, AgentFile, tt.before)
			if err := AppendLearning(fs, sfRoot, "n", sfNow); err != nil {
				t.Fatal(err)
			}
			if got := sfRead(t, fs, AgentFile); got != tt.after {
				t.Errorf("got\n%q\nwant\n%q", got, tt.after)
			}
		})
	}
}

func TestAppendLearningNote(t *testing.T) {
	fs := afero.NewMemMapFs()
	for _, note := range []string{"", " \n\t\r\n "} {
		if err := AppendLearning(fs, sfRoot, note, sfNow); err == nil {
			t.Errorf("note %q: want an error", note)
		}
	}
	if exists, _ := afero.Exists(fs, filepath.Join(sfRoot, AgentFile)); exists {
		t.Error("an empty note created AGENT.md")
	}
	if err := AppendLearning(fs, sfRoot, "a\r\nb\n\n\nc\rd  e", sfNow); err != nil {
		t.Fatal(err)
	}
	if err := AppendLearning(fs, sfRoot, strings.Repeat("é", 600), sfNow); err != nil {
		t.Fatal(err)
	}
	got := sfRead(t, fs, AgentFile)
	if !strings.Contains(got, "\n- a b c d  e (2026-11-21)\n") {
		t.Errorf("newlines not collapsed:\n%s", got)
	}
	if !strings.Contains(got, "\n- "+strings.Repeat("é", 499)+"… (2026-11-21)\n") {
		t.Errorf("long note not cut to 500 characters:\n%s", got)
	}
}

func TestAppendLearningConcurrent(t *testing.T) {
	fs := afero.NewMemMapFs()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if err := AppendLearning(fs, sfRoot, fmt.Sprintf("note %d", i), sfNow); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got := sfRead(t, fs, AgentFile)
	for i := range 20 {
		if !strings.Contains(got, fmt.Sprintf("- note %d (", i)) {
			t.Errorf("lost note %d", i)
		}
	}
}

// sfNoRewriteFs fails any write to the progress file that is not an
// append, and any rename, so a test proves the file is never rewritten.
type sfNoRewriteFs struct{ afero.Fs }

func (f sfNoRewriteFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if filepath.Base(name) == ProgressFile && flag&(os.O_WRONLY|os.O_RDWR) != 0 &&
		(flag&os.O_APPEND == 0 && flag&os.O_EXCL == 0 || flag&os.O_TRUNC != 0) {
		return nil, fmt.Errorf("rewrite of %s with flags %#x", name, flag)
	}
	return f.Fs.OpenFile(name, flag, perm)
}

func (f sfNoRewriteFs) Create(name string) (afero.File, error) {
	return f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

func (f sfNoRewriteFs) Rename(oldname, newname string) error {
	return fmt.Errorf("rename %s to %s", oldname, newname)
}

func TestAppendProgress(t *testing.T) {
	fs := sfNoRewriteFs{afero.NewMemMapFs()}
	err := AppendProgress(fs, sfRoot, ProgressEntry{
		Time: sfNow.In(time.FixedZone("X", 3600)), Title: "Add\n--json", Body: "Added the flag.\n\n- tests pass\n",
		SessionID: "20261121T140309Z-abc", Iteration: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	first := sfRead(t, fs, ProgressFile)
	want := "\n## 2026-11-21 14:03 UTC — Add --json\n\nAdded the flag.\n\n- tests pass\n\n_session 20261121T140309Z-abc, iteration 3_\n"
	if !strings.HasPrefix(first, "# Progress\n") || !strings.HasSuffix(first, want) {
		t.Errorf("first entry:\n%q", first)
	}
	// A person's edit to an earlier entry survives the next append.
	edited := first + "\nA note by hand, no newline"
	sfWrite(t, fs.Fs, ProgressFile, edited)
	if err := AppendProgress(fs, sfRoot, ProgressEntry{Time: sfNow.Add(time.Minute), Title: "Next"}); err != nil {
		t.Fatal(err)
	}
	second := sfRead(t, fs, ProgressFile)
	if second != edited+"\n## 2026-11-21 14:04 UTC — Next\n\n" {
		t.Errorf("second append: previous bytes not an exact prefix, or bad entry:\n%q", second)
	}
	if err := AppendProgress(fs, sfRoot, ProgressEntry{Time: sfNow, Iteration: 7}); err != nil {
		t.Fatal(err)
	}
	if third := sfRead(t, fs, ProgressFile); !strings.HasPrefix(third, second) ||
		!strings.HasSuffix(third, "— Iteration 7\n\n_iteration 7_\n") {
		t.Errorf("third append:\n%q", third)
	}
}
