package providers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// moduleRoot is the root of ralph's module, from this package's folder.
const moduleRoot = "../.."

// TestProviderFactsLiveInTheTable fails when a string in any package of
// the module but this one spells one of the table's facts (a key, token,
// endpoint or model variable; an endpoint's host, or a local one's host
// and port): a second copy drifts from the row, as ANTHROPIC_BASE_URL
// once did beside the table that names it. The packages are found by
// walking the module, so that a new package is scanned from its first
// commit; the model→family patterns live here too (families.go), so
// that workers/tools, which offers each family its tools, asks for them.
func TestProviderFactsLiveInTheTable(t *testing.T) {
	t.Parallel()
	facts := tableFacts()
	dirs := packageDirs(t, moduleRoot)
	if len(dirs) < 20 {
		t.Fatalf("found only %d packages under %s; the walk is broken", len(dirs), moduleRoot)
	}
	self, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		if abs, _ := filepath.Abs(dir); abs == self {
			continue
		}
		for _, s := range spelledFacts(t, dir, facts) {
			t.Errorf("%s; read it from the provider table instead", s)
		}
	}
}

// TestFactsGuardSeesAPlantedFact plants a package that spells a fact in a
// module of its own and checks that the guard's walk finds the package
// and its scan the fact, so that the guard cannot pass by seeing nothing.
func TestFactsGuardSeesAPlantedFact(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	anthropic, _ := Named("anthropic")
	ollama, _ := Named("ollama")
	write("go.mod", "module example.com/planted\n")
	write("deep/inner/help.go", "package inner\n\nconst help = `set "+anthropic.BaseURLEnv+" to move it`\n")
	write("local/local.go", "package local\n\nvar u = \""+ollama.BaseURL+"\"\n")
	write("deep/inner/help_test.go", "package inner\n\nconst inTest = \""+anthropic.KeyEnv+"\"\n")
	write("testdata/skipped/x.go", "package skipped\n\nconst x = \""+anthropic.KeyEnv+"\"\n")
	write("other/go.mod", "module example.com/other\n")
	write("other/x.go", "package other\n\nconst x = \""+anthropic.KeyEnv+"\"\n")
	write("clean/clean.go", "package clean\n\nconst x = \"no facts here\"\n")

	var found []string
	for _, dir := range packageDirs(t, root) {
		found = append(found, spelledFacts(t, dir, tableFacts())...)
	}
	if len(found) != 2 || !strings.Contains(found[0]+found[1], anthropic.BaseURLEnv) || !strings.Contains(found[0]+found[1], "ollama's endpoint") {
		t.Errorf("the guard found %q; want the planted %s in deep/inner/help.go and Ollama's endpoint in local/local.go, and nothing in tests, testdata or another module", found, anthropic.BaseURLEnv)
	}
}

// tableFacts maps each fact of the table to what it is.
func tableFacts() map[string]string {
	facts := map[string]string{OpenAIBaseURLEnv: "OpenAI's endpoint variable"}
	for _, p := range All() {
		for what, v := range map[string]string{"KeyEnv": p.KeyEnv, "TokenEnv": p.TokenEnv, "BaseURLEnv": p.BaseURLEnv, "ModelEnv": p.ModelEnv} {
			if v != "" {
				facts[v] = p.Name + "'s " + what
			}
		}
		u, err := url.Parse(p.BaseURL)
		switch {
		case err != nil:
		case u.Hostname() != "localhost":
			facts[u.Hostname()] = p.Name + "'s endpoint"
		case u.Port() != "":
			// A local server's host alone is every local server's;
			// with its port it is this one's.
			facts[u.Host] = p.Name + "'s endpoint"
		}
	}
	return facts
}

// packageDirs lists the folders under root that hold Go files of root's
// module: not testdata, vendored or third-party code, hidden folders, or
// a nested module (ralph-temporal has its own go.mod).
func packageDirs(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root {
			if name == "testdata" || name == "vendor" || name == "third_party" || name == "node_modules" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		if files, _ := filepath.Glob(filepath.Join(p, "*.go")); len(files) > 0 {
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// spelledFacts lists, as sentences, the string literals of dir's non-test
// Go files that spell a fact.
func spelledFacts(t *testing.T, dir string, facts map[string]string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			for fact, what := range facts {
				if strings.Contains(lit.Value, fact) {
					out = append(out, fset.Position(lit.Pos()).String()+" spells "+what+" ("+fact+") in "+lit.Value)
				}
			}
			return true
		})
	}
	return out
}
