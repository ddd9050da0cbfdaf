package memory

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// ProjectInfo is what ralph can tell about a project from its marker files,
// written into AGENT.md by `ralph init` so the model starts with the right
// build and test commands instead of guessing them.
type ProjectInfo struct {
	Root      string   `json:"root"`
	Git       bool     `json:"git"`       // a .git dir or file exists at root or above
	Branch    string   `json:"branch"`    // from .git/HEAD if readable (no git binary needed)
	Languages []string `json:"languages"` // strongest evidence first
	Build     []string `json:"build"`
	Test      []string `json:"test"`
	Lint      []string `json:"lint"`
}

// maxMarkerRead bounds every file detection reads: marker files are small,
// and a huge generated package.json must not stall `ralph init`.
const maxMarkerRead = 256 << 10

// ecosystem is one row of the detection table. Detection only looks at the
// root directory listing plus, for a few rows, one small file, so it never
// runs a command and stays fast on any repository.
type ecosystem struct {
	lang    string
	markers []string // any one present at the root selects the row
	weight  int      // evidence strength of a marker, against source-file counts
	cmds    func(p *probe) (build, test, lint []string)
}

var ecosystems = []ecosystem{
	{"Go", []string{"go.mod"}, 10, func(p *probe) ([]string, []string, []string) {
		lint := []string{"go vet ./..."}
		if p.hasAny(".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json") {
			lint = append(lint, "golangci-lint run")
		}
		return []string{"go build ./..."}, []string{"go test ./..."}, lint
	}},
	{"Rust", []string{"Cargo.toml"}, 10, func(*probe) ([]string, []string, []string) {
		return []string{"cargo build"}, []string{"cargo test"}, []string{"cargo clippy"}
	}},
	{"JavaScript", []string{"package.json"}, 6, (*probe).nodeCommands},
	{"Python", []string{"pyproject.toml", "setup.py", "requirements.txt"}, 8, (*probe).pythonCommands},
	{"Java", []string{"pom.xml", "build.gradle", "build.gradle.kts"}, 10, (*probe).javaCommands},
	{"Ruby", []string{"Gemfile"}, 8, (*probe).rubyCommands},
	{"C/C++", []string{"CMakeLists.txt"}, 8, func(*probe) ([]string, []string, []string) {
		return []string{"cmake -B build && cmake --build build"}, []string{"ctest --test-dir build"}, nil
	}},
}

// sourceExts lets loose source files at the root count as weak evidence, so
// a plain C project with only a Makefile still gets a language, and so the
// order of languages reflects what the project is mostly written in.
var sourceExts = map[string]string{
	".go": "Go", ".rs": "Rust", ".ts": "TypeScript", ".tsx": "TypeScript",
	".js": "JavaScript", ".mjs": "JavaScript", ".py": "Python", ".java": "Java",
	".rb": "Ruby", ".c": "C/C++", ".h": "C/C++", ".cc": "C/C++",
	".cpp": "C/C++", ".hpp": "C/C++",
}

// probe is the root directory as detection sees it: one listing, read once.
type probe struct {
	fs    afero.Fs
	root  string
	names map[string]bool // entry name -> is a directory
}

func (p *probe) has(name string) bool { _, ok := p.names[name]; return ok }

func (p *probe) hasAny(names ...string) bool { return slices.ContainsFunc(names, p.has) }

func (p *probe) isDir(name string) bool { return p.names[name] }

// read returns the head of a root file, or nil when it cannot be read:
// detection is best effort and a broken marker file only loses commands.
func (p *probe) read(name string) []byte {
	b, _ := rootfs.ReadHead(p.fs, filepath.Join(p.root, name), maxMarkerRead)
	return b
}

// DetectProject describes the project at root from marker files only. It
// never runs a command and reads at most a few small files, so `ralph init`
// is instant and safe in any directory.
func DetectProject(fs afero.Fs, root string) ProjectInfo {
	info := ProjectInfo{Root: root}
	info.Git, info.Branch = detectGit(fs, root)
	p := &probe{fs: fs, root: root, names: map[string]bool{}}
	entries, _ := afero.ReadDir(fs, root)
	score := map[string]int{}
	for _, e := range entries {
		p.names[e.Name()] = e.IsDir()
		if lang := sourceExts[filepath.Ext(e.Name())]; lang != "" && !e.IsDir() && score[lang] < 5 {
			score[lang]++
		}
	}
	// Task runners are the project's own entry points, wrapping the
	// language tools with whatever flags the project needs, so they go first.
	for _, name := range []string{"Makefile", "makefile", "GNUmakefile"} {
		if p.has(name) {
			addTargets(&info, "make", makeTargets(p.read(name)))
			break
		}
	}
	for _, name := range []string{"justfile", "Justfile", ".justfile"} {
		if p.has(name) {
			addTargets(&info, "just", justRecipes(p.read(name)))
			break
		}
	}
	for _, eco := range ecosystems {
		if !p.hasAny(eco.markers...) {
			continue
		}
		lang := eco.lang
		if lang == "JavaScript" && (p.has("tsconfig.json") || score["TypeScript"] > 0) {
			lang = "TypeScript"
		}
		score[lang] += eco.weight
		b, t, l := eco.cmds(p)
		info.Build = appendNew(info.Build, b...)
		info.Test = appendNew(info.Test, t...)
		info.Lint = appendNew(info.Lint, l...)
	}
	for lang := range score {
		info.Languages = append(info.Languages, lang)
	}
	slices.SortFunc(info.Languages, func(a, b string) int {
		if score[a] != score[b] {
			return score[b] - score[a]
		}
		return strings.Compare(a, b)
	})
	return info
}

// appendNew appends the commands not already listed, so a Makefile and a
// manifest naming the same command do not list it twice.
func appendNew(list []string, cmds ...string) []string {
	for _, c := range cmds {
		if !slices.Contains(list, c) {
			list = append(list, c)
		}
	}
	return list
}

func addTargets(info *ProjectInfo, tool string, targets map[string]bool) {
	for _, t := range []struct {
		name string
		list *[]string
	}{{"build", &info.Build}, {"test", &info.Test}, {"lint", &info.Lint}} {
		if targets[t.name] {
			*t.list = appendNew(*t.list, tool+" "+t.name)
		}
	}
}

// makeTargets finds explicit rule targets ("name:" or "a b: deps" at the
// start of a line). Variable assignments like "X := a" and recipe lines are
// not rules and are skipped.
func makeTargets(b []byte) map[string]bool {
	targets := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '\t' || line[0] == ' ' || line[0] == '#' {
			continue
		}
		head, rest, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(rest, "=") || strings.ContainsAny(head, "=$%") {
			continue
		}
		for _, t := range strings.Fields(head) {
			targets[t] = true
		}
	}
	return targets
}

// justRecipe matches a recipe header such as "test:", "@lint:" or
// "build target='x':" but not an assignment such as "build := 'x'".
var justRecipe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^@?([A-Za-z0-9_-]+)(?:\s+[^:=]*)?:(?:[^=]|$)`) })

func justRecipes(b []byte) map[string]bool {
	recipes := map[string]bool{}
	for line := range strings.Lines(string(b)) {
		if m := justRecipe().FindStringSubmatch(strings.TrimRight(line, "\r\n")); m != nil {
			recipes[m[1]] = true
		}
	}
	return recipes
}

// nodeCommands reads package.json's scripts, because a Node project's build
// and test commands are whatever its scripts say, run by the package manager
// its lockfile belongs to.
func (p *probe) nodeCommands() (build, test, lint []string) {
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if json.Unmarshal(p.read("package.json"), &pkg) != nil {
		return nil, nil, nil
	}
	runner := "npm"
	switch {
	case p.has("pnpm-lock.yaml"):
		runner = "pnpm"
	case p.has("yarn.lock"):
		runner = "yarn"
	case p.hasAny("bun.lock", "bun.lockb"):
		runner = "bun"
	}
	if _, ok := pkg.Scripts["build"]; ok {
		build = []string{runner + " run build"}
	}
	// npm init writes a test script that only fails; it is not a test suite.
	if s, ok := pkg.Scripts["test"]; ok && !strings.Contains(s, "no test specified") {
		if runner == "bun" {
			test = []string{"bun run test"} // "bun test" is bun's own runner, not the script
		} else {
			test = []string{runner + " test"}
		}
	}
	if _, ok := pkg.Scripts["lint"]; ok {
		lint = []string{runner + " run lint"}
	}
	return build, test, lint
}

// pythonCommands suggests pytest only when the project shows it uses
// pytest; plain "python -m unittest" projects would fail under a guess.
func (p *probe) pythonCommands() (build, test, lint []string) {
	pyproject := p.read("pyproject.toml")
	if p.isDir("tests") || p.hasAny("pytest.ini", "conftest.py") ||
		bytes.Contains(pyproject, []byte("[tool.pytest")) ||
		bytes.Contains(p.read("setup.cfg"), []byte("[tool:pytest]")) ||
		bytes.Contains(p.read("tox.ini"), []byte("[pytest]")) {
		test = []string{"pytest"}
	}
	if p.hasAny("ruff.toml", ".ruff.toml") || bytes.Contains(pyproject, []byte("[tool.ruff")) {
		lint = []string{"ruff check ."}
	}
	return nil, test, lint
}

// javaCommands prefers the project's wrapper script, which pins the build
// tool version the project expects.
func (p *probe) javaCommands() (build, test, lint []string) {
	tool, buildGoal := "gradle", "build"
	switch {
	case p.has("pom.xml") && p.has("mvnw"):
		tool, buildGoal = "./mvnw", "compile"
	case p.has("pom.xml"):
		tool, buildGoal = "mvn", "compile"
	case p.has("gradlew"):
		tool = "./gradlew"
	}
	return []string{tool + " " + buildGoal}, []string{tool + " test"}, nil
}

func (p *probe) rubyCommands() (build, test, lint []string) {
	switch {
	case p.isDir("spec") || p.has(".rspec"):
		test = []string{"bundle exec rspec"}
	case p.has("Rakefile"):
		test = []string{"bundle exec rake test"}
	}
	if p.has(".rubocop.yml") {
		lint = []string{"bundle exec rubocop"}
	}
	return nil, test, lint
}

// detectGit looks for .git at root or above without running git. A .git
// file (worktrees, submodules) points at the real git directory.
func detectGit(fs afero.Fs, root string) (bool, string) {
	dir := filepath.Clean(root)
	if abs, err := filepath.Abs(dir); err == nil && !filepath.IsAbs(dir) {
		dir = abs
	}
	for {
		dotgit := filepath.Join(dir, ".git")
		if fi, err := fs.Stat(dotgit); err == nil {
			gitDir := dotgit
			if !fi.IsDir() {
				b, _ := afero.ReadFile(fs, dotgit)
				target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
				if !ok {
					return true, ""
				}
				gitDir = strings.TrimSpace(target)
				if !filepath.IsAbs(gitDir) {
					gitDir = filepath.Join(dir, gitDir)
				}
			}
			head, _ := afero.ReadFile(fs, filepath.Join(gitDir, "HEAD"))
			ref, _ := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: ")
			branch, ok := strings.CutPrefix(ref, "refs/heads/")
			if !ok {
				branch = "" // detached HEAD or unreadable: no branch to report
			}
			return true, branch
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false, ""
		}
		dir = parent
	}
}
