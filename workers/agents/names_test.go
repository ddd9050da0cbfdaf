package agents

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOnlyTheTableNamesTheAgents fails when a Go file other than an
// agent's own file names an agent kind in code: an identifier or a string
// literal holding one of the kinds as a word. Adding an agent is then one
// file and one row of clis, and no list or switch elsewhere can fall
// behind. Comments are prose and may name them, and so may three pieces of
// help prose that compare ralph to a CLI or show a command line (see
// helpProse). Left out, since they name models and not the agents:
// coordinator/llm (model names and the stand-in model's Gemini API) and
// memory/providers (the model providers' table: claude-… and gemini-…
// model names), the tool families (the tool sets models were trained
// on); and
// tests, which pick agents to drive. A literal is matched in lower case,
// as a kind is spelled, so the CLAUDE.md instruction file is no agent.
func TestOnlyTheTableNamesTheAgents(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	own := map[string]bool{"workers/agents/cli.go": true}
	for _, name := range Names() {
		kinds = append(kinds, name)
		own["workers/agents/"+name+".go"] = true
	}
	word := regexp.MustCompile(`\b(` + strings.Join(kinds, "|") + `)\b`)
	ident := regexp.MustCompile(`(?i)(` + strings.Join(kinds, "|") + `)`)
	// The tool families (workers/tools/famil*.go) are the tool sets the
	// models were trained on, Claude Code's and codex's, named after the
	// models' makers' harnesses as memory/providers names them: not the
	// agents ralph runs.
	skipFile := map[string]bool{"workers/tools/families.go": true, "workers/tools/family_claude.go": true, "workers/tools/family_codex.go": true,
		// The claude shape is Claude Code's stream-json and its Agent
		// SDK's flags and input, a format ralph prints and reads as
		// claude -p does: named after that CLI as the tool families are,
		// not a list of the agents ralph runs.
		"scripts/cli/claudeshape.go": true, "scripts/cli/claudeface.go": true, "scripts/cli/claudeflags.go": true, "scripts/cli/claudeinput.go": true}
	skipDir := map[string]bool{"coordinator/llm": true, "memory/providers": true, "testdata": true, ".git": true, "e2e": true, "third_party": true,
		"cmd/benchpeers": true} // it times the peers' CLIs by name, as tests drive them
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skipDir[rel] || skipDir[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || own[rel] || skipFile[rel] {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Ident:
				if ident.MatchString(n.Name) {
					t.Errorf("%s: the identifier %s names an agent; only its own file and the table in cli.go may", fset.Position(n.Pos()), n.Name)
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING && word.MatchString(n.Value) && !isHelpProse(rel, n.Value) {
					t.Errorf("%s: the literal %s names an agent; take it from the table (agents.Names, agents.Choices) instead", fset.Position(n.Pos()), clip(n.Value))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked; is the module root %s?", checked, root)
	}
}

// helpProse are the help texts that may name a CLI, by file: what in
// them does. They are documentation, not lists ralph acts on.
var helpProse = map[string][]string{
	"scripts/cli/conventions.go": {"(as claude -p)"}, // -p is the flag people know
	"scripts/cli/mcp.go": {
		"as codex does",                           // the config shape it shares
		"another agent (Claude Code, codex",       // ralph mcp serve: who calls it
		"claude mcp add ralph -- ralph mcp serve", // and the line to add it
	},
	"scripts/cli/run.go": {"ralph run --agent claude --on-error skip"}, // the examples
	"scripts/cli/cli.go": {
		"the same, as codex exec: never the chat shell", // ralph exec: whose habit it keeps
		"(as codex exec)", "(as claude -p)", // --output-schema and --json-schema: whose flags they are
	},
	"scripts/cli/exec.go": {"as codex exec"}, // ralph exec: whose habit it keeps
	"scripts/cli/hooks.go": { // where hooks come from, as a person looks for them
		"Hooks are commands that run when something happens in a session",
		"no hooks: ralph reads them from your config",
	},
	"scripts/cli/plugin.go": {
		"(.claude-plugin/plugin.json",         // ralph plugin's help: what a plugin holds
		".claude-plugin/plugin.json). Adding", // and ralph plugin add's
		"claude-code-hooks",                   // and the example of adding one
		"one (claude-plugins-official) when",  // and the marketplace a bare name prefers
	},
}

// isHelpProse says whether the literal lit in file rel is help prose.
func isHelpProse(rel, lit string) bool {
	for _, marker := range helpProse[rel] {
		if strings.Contains(lit, marker) {
			return true
		}
	}
	return false
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
