package memory

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

// detWrite lays out a fixture: a name ending in "/" is a directory.
func detWrite(t *testing.T, fs afero.Fs, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			if err := fs.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := fs.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := afero.WriteFile(fs, p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDetectProjectFixtures(t *testing.T) {
	makefile := "# build things\nGO ?= go\nX := a:b\n.PHONY: build test lint\n\nbuild:\n\t$(GO) build\n" +
		"test lint: build\n\tgo test\n%.o: %.c\n\tcc\ninstall:\n\tcp\n"
	tests := []struct {
		name  string
		files map[string]string
		want  ProjectInfo
	}{
		{"nothing", map[string]string{"README.md": "hi"}, ProjectInfo{}},
		{"go module", map[string]string{"go.mod": "module x\n", "main.go": "package main"}, ProjectInfo{
			Languages: []string{"Go"}, Build: []string{"go build ./..."}, Test: []string{"go test ./..."},
			Lint: []string{"go vet ./..."},
		}},
		{"go with golangci", map[string]string{"go.mod": "module x\n", ".golangci.yml": ""}, ProjectInfo{
			Languages: []string{"Go"}, Build: []string{"go build ./..."}, Test: []string{"go test ./..."},
			Lint: []string{"go vet ./...", "golangci-lint run"},
		}},
		{"node with pnpm", map[string]string{
			"package.json":   `{"name":"x","scripts":{"build":"tsc","test":"vitest","lint":"eslint ."}}`,
			"pnpm-lock.yaml": "", "tsconfig.json": "{}",
		}, ProjectInfo{
			Languages: []string{"TypeScript"}, Build: []string{"pnpm run build"}, Test: []string{"pnpm test"},
			Lint: []string{"pnpm run lint"},
		}},
		{"node with yarn, only a test script", map[string]string{
			"package.json": `{"scripts":{"test":"jest"}}`, "yarn.lock": "",
		}, ProjectInfo{Languages: []string{"JavaScript"}, Test: []string{"yarn test"}}},
		{"npm init's failing test script is not a suite", map[string]string{
			"package.json": `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`,
		}, ProjectInfo{Languages: []string{"JavaScript"}}},
		{"broken package.json", map[string]string{"package.json": `{"scripts":`},
			ProjectInfo{Languages: []string{"JavaScript"}}},
		{"python with pytest", map[string]string{
			"pyproject.toml": "[project]\nname='x'\n\n[tool.ruff]\n", "tests/": "", "app.py": "",
		}, ProjectInfo{Languages: []string{"Python"}, Test: []string{"pytest"}, Lint: []string{"ruff check ."}}},
		{"python pytest from config", map[string]string{
			"requirements.txt": "requests\n", "setup.cfg": "[tool:pytest]\naddopts=-q\n",
		}, ProjectInfo{Languages: []string{"Python"}, Test: []string{"pytest"}}},
		{"python without pytest evidence", map[string]string{"setup.py": ""},
			ProjectInfo{Languages: []string{"Python"}}},
		{"rust", map[string]string{"Cargo.toml": "[package]\n", "src/": ""}, ProjectInfo{
			Languages: []string{"Rust"}, Build: []string{"cargo build"}, Test: []string{"cargo test"},
			Lint: []string{"cargo clippy"},
		}},
		{"makefile targets", map[string]string{"Makefile": makefile, "main.c": "", "util.h": ""}, ProjectInfo{
			Languages: []string{"C/C++"}, Build: []string{"make build"}, Test: []string{"make test"},
			Lint: []string{"make lint"},
		}},
		{"makefile without those targets", map[string]string{"Makefile": "all:\n\tcc\nBUILD = x\n"},
			ProjectInfo{}},
		{"makefile first, then go", map[string]string{"Makefile": "test:\n\tgo test -race ./...\n", "go.mod": ""},
			ProjectInfo{
				Languages: []string{"Go"}, Build: []string{"go build ./..."},
				Test: []string{"make test", "go test ./..."}, Lint: []string{"go vet ./..."},
			}},
		{"justfile", map[string]string{"justfile": "version := \"1\"\nbuild:\n  cargo build\n@test *args:\n  cargo test {{args}}\n"},
			ProjectInfo{Build: []string{"just build"}, Test: []string{"just test"}}},
		{"maven wrapper", map[string]string{"pom.xml": "<project/>", "mvnw": ""}, ProjectInfo{
			Languages: []string{"Java"}, Build: []string{"./mvnw compile"}, Test: []string{"./mvnw test"},
		}},
		{"gradle wrapper", map[string]string{"build.gradle.kts": "", "gradlew": ""}, ProjectInfo{
			Languages: []string{"Java"}, Build: []string{"./gradlew build"}, Test: []string{"./gradlew test"},
		}},
		{"ruby", map[string]string{"Gemfile": "", "spec/": "", ".rubocop.yml": ""}, ProjectInfo{
			Languages: []string{"Ruby"}, Test: []string{"bundle exec rspec"}, Lint: []string{"bundle exec rubocop"},
		}},
		{"cmake", map[string]string{"CMakeLists.txt": "", "main.cpp": ""}, ProjectInfo{
			Languages: []string{"C/C++"}, Build: []string{"cmake -B build && cmake --build build"},
			Test: []string{"ctest --test-dir build"},
		}},
		{"languages by evidence", map[string]string{
			"go.mod": "", "package.json": "{}", "a.py": "", "b.py": "", "tool.js": "",
		}, ProjectInfo{
			Languages: []string{"Go", "JavaScript", "Python"}, Build: []string{"go build ./..."},
			Test: []string{"go test ./..."}, Lint: []string{"go vet ./..."},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fs := afero.NewOsFs()
			detWrite(t, fs, dir, tt.files)
			got := DetectProject(fs, dir)
			// Git is whatever the machine's temp dir is in; it has its own test.
			got.Git, got.Branch = false, ""
			tt.want.Root = dir
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DetectProject:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestDetectProjectGit(t *testing.T) {
	fs := afero.NewMemMapFs()
	detWrite(t, fs, "/", map[string]string{
		"/repo/.git/HEAD":                   "ref: refs/heads/feature/x\n",
		"/repo/sub/dir/":                    "",
		"/detached/.git/HEAD":               "3f5a0c2e9d1b7a6f4e3c2b1a0f9e8d7c6b5a4f3e\n",
		"/main/.git/worktrees/wt/HEAD":      "ref: refs/heads/wt-branch\n",
		"/wt/.git":                          "gitdir: /main/.git/worktrees/wt\n",
		"/rel/.git":                         "gitdir: ../main/.git/worktrees/wt\n",
		"/plain/x.txt":                      "",
		"/broken/.git/":                     "",
		"/repo/sub/dir/.keep":               "",
		"/main/.git/worktrees/wt/commondir": "../..\n",
	})
	tests := []struct {
		root   string
		git    bool
		branch string
	}{
		{"/repo", true, "feature/x"},
		{"/repo/sub/dir", true, "feature/x"},
		{"/detached", true, ""},
		{"/wt", true, "wt-branch"},
		{"/rel", true, "wt-branch"},
		{"/plain", false, ""},
		{"/broken", true, ""},
	}
	for _, tt := range tests {
		info := DetectProject(fs, tt.root)
		if info.Git != tt.git || info.Branch != tt.branch {
			t.Errorf("%s: Git=%v Branch=%q, want %v %q", tt.root, info.Git, info.Branch, tt.git, tt.branch)
		}
	}
}

func TestDetectProjectReadsLittle(t *testing.T) {
	// A huge package.json must not be read whole; a cut-off one just
	// yields no scripts rather than an error or a stall.
	dir := t.TempDir()
	big := `{"scripts":{"test":"jest"},"x":"` + strings.Repeat("a", 2*maxMarkerRead) + `"}`
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	info := DetectProject(afero.NewOsFs(), dir)
	if len(info.Test) != 0 || !reflect.DeepEqual(info.Languages, []string{"JavaScript"}) {
		t.Errorf("got %+v", info)
	}
}
