package providers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// factReaders are the packages that read providers' facts: the model
// client, the configuration that resolves a provider, and the coordinator
// code that makes clients and fallbacks. Each asks the table rather than
// spelling a fact of it.
var factReaders = []string{
	"../../coordinator/llm",
	"../../coordinator/models",
	"../../coordinator/project",
	"../../coordinator/remote",
	"../config",
}

// TestProviderFactsLiveInTheTable fails when a string in a package that
// reads the table spells one of its facts (a key, token, endpoint or model
// variable; an endpoint's host): a second copy drifts from the row, as
// ANTHROPIC_BASE_URL once did beside the table that names it.
func TestProviderFactsLiveInTheTable(t *testing.T) {
	t.Parallel()
	facts := map[string]string{OpenAIBaseURLEnv: "OpenAI's endpoint variable"}
	for _, p := range All() {
		for what, v := range map[string]string{"KeyEnv": p.KeyEnv, "TokenEnv": p.TokenEnv, "BaseURLEnv": p.BaseURLEnv, "ModelEnv": p.ModelEnv} {
			if v != "" {
				facts[v] = p.Name + "'s " + what
			}
		}
		if u, err := url.Parse(p.BaseURL); err == nil && u.Hostname() != "localhost" {
			facts[u.Hostname()] = p.Name + "'s endpoint"
		}
	}
	for _, dir := range factReaders {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s (%v)", dir, err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, name, src, 0)
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
						t.Errorf("%s spells %s (%s) in %s; read it from the provider table instead", fset.Position(lit.Pos()), what, fact, lit.Value)
					}
				}
				return true
			})
		}
	}
}
