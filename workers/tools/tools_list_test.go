package tools

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/workers/workerstest"
)

// TestEveryToolIsInTheOneList checks the shape of the tools: every row of
// the list has its <key>.md and a Go file of its own beside it (the task
// loop's complete_task shares complete_task.go), every .md here is a
// row's, and every tool this package makes, spawn_agent and the review's
// included, is a row's definition.
func TestEveryToolIsInTheOneList(t *testing.T) {
	keys := map[string]bool{}
	for _, row := range tools {
		keys[row.key] = true
		if _, err := os.Stat(row.key + ".md"); err != nil {
			t.Errorf("tool %s has no %s.md beside it", row.key, row.key)
		}
		if _, err := os.Stat(strings.TrimSuffix(row.key, "_loop") + ".go"); err != nil {
			t.Errorf("tool %s has no file %s.go of its own", row.key, row.key)
		}
	}
	// A family's face of a tool has its description beside the tool's
	// (families.go).
	for _, fam := range providers.Families() {
		for _, fc := range familyOf(fam).faces {
			if fc.hiddenFace {
				continue
			}
			if _, err := os.Stat(fc.doc + ".md"); err != nil {
				t.Errorf("the %s face %s of %s has no %s.md", fam.Name(), fc.name, fc.tool, fc.doc)
			}
			if !isListName(fc.tool) {
				t.Errorf("the %s face %s is of %s, which is no tool of the list", fam.Name(), fc.name, fc.tool)
			}
			keys[fc.doc] = true
		}
	}
	mds, _ := filepath.Glob("*.md")
	for _, md := range mds {
		if !keys[strings.TrimSuffix(md, ".md")] {
			t.Errorf("%s describes no tool of the list in tools.go, nor a family's face of one (families.go)", md)
		}
	}
	for _, d := range goldenDefs(t) {
		found := false
		for _, row := range tools {
			if def := Def(row.key); def.Name == d.Name && def.Description == d.Description {
				found = true
			}
		}
		if !found {
			t.Errorf("the tool %s is made outside the list of tools.go", d.Name)
		}
	}
}

// toolSites are the files outside this package allowed to make a tool
// or a tool definition themselves, each with why. Every other tool a
// model is offered is a row of the one list (tools.go), made by Build
// from the dependencies a caller hands it and filtered by Toolset.For.
var toolSites = map[string]string{
	// An MCP server's tools are defined by the server, not by ralph.
	"workers/mcp/": "an MCP server's tools, defined by the server (a Source of the Toolset)",
	// `ralph doctor` asks whether the endpoint takes tools at all; the
	// probe's tool is never offered to a model at work.
	"coordinator/llm/endpoint.go": "ralph doctor's probe of whether the endpoint takes tools",
	// A family's face of a tool of the list: the same tool under the
	// name, description and input shape a model was trained on, made
	// from the list's definition as the mode and role filtered it.
	"workers/tools/families.go": "a tool family's face of a tool of the list (its definition as a model family is offered it)",
}

// listConstructors are the functions of package tools that make a tool of the list
// or its definition: only the list calls them (Build).
var listConstructors = map[string]bool{"NewTool": true, "Def": true}

// TestToolsAreBuiltInTheList fails when a Go file outside this package
// hands a model a tool the list did not build: a ToolDef literal, a tool
// adapter of its own (a Def method), a call of a tool's constructor
// (tools.NewTool, tools.Def, tools.New…Tool) or a Register on a
// Toolset. Such a tool would bypass what its row declares (its roles,
// and the mode's filter of --sandbox read-only and --no-network).
func TestToolsAreBuiltInTheList(t *testing.T) {
	seen := map[string]bool{}
	workerstest.ModuleGoFiles(t, filepath.Join("..", ".."), func(rel, path string) {
		if rel == "workers/tools/tools.go" || strings.Contains("/"+rel, "/testdata/") {
			return
		}
		// The list's own package calls the constructors it lists; it
		// builds no definition or adapter but tools.go's either.
		for _, bad := range toolsMadeIn(t, path, filepath.Dir(rel) == "workers/tools") {
			if site := toolSite(rel); site != "" {
				seen[site] = true
				continue
			}
			t.Errorf("%s:%s; hand the tool's dependencies to tools.Build (a row of workers/tools/tools.go), or add the file to toolSites with why", rel, bad)
		}
	})
	for site := range toolSites {
		if !seen[site] {
			t.Errorf("toolSites lists %s, which makes no tool any more: take it off", site)
		}
	}
}

// toolSite is the entry of toolSites that allows the file rel, "" when
// none does.
func toolSite(rel string) string {
	for site := range toolSites {
		if rel == site || strings.HasSuffix(site, "/") && strings.HasPrefix(rel, site) {
			return site
		}
	}
	return ""
}

// toolsMadeIn lists the places in the Go file at path that make a tool
// or a tool definition outside the list; inList: the file is of the
// list's package, whose files call its constructors.
func toolsMadeIn(t *testing.T, path string, inList bool) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	toolsName := ""
	for _, imp := range f.Imports {
		if imp.Path.Value == `"github.com/ralph-dev/ralph/workers/tools"` {
			toolsName = "tools"
			if imp.Name != nil {
				toolsName = imp.Name.Name
			}
		}
	}
	var out []string
	at := func(n ast.Node, what string) {
		out = append(out, fmt.Sprintf("%d: %s", fset.Position(n.Pos()).Line, what))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if isToolDef(n.Type) {
				at(n, "a ToolDef built outside the list")
			}
		case *ast.FuncDecl:
			if n.Recv != nil && n.Name.Name == "Def" {
				at(n, "a tool adapter of its own (a Def method)")
			}
		case *ast.SelectorExpr:
			if inList {
				break
			}
			x, ok := n.X.(*ast.Ident)
			name := n.Sel.Name
			switch {
			case ok && toolsName != "" && x.Name == toolsName &&
				(listConstructors[name] || strings.HasPrefix(name, "New") && strings.HasSuffix(name, "Tool")):
				at(n, "tools."+name+" makes a tool outside the list")
			case toolsName != "" && name == "Register":
				at(n, "a tool registered outside the list (use Toolset.Add)")
			}
		}
		return true
	})
	return out
}

func isToolDef(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == "ToolDef"
	case *ast.SelectorExpr:
		return e.Sel.Name == "ToolDef"
	}
	return false
}
