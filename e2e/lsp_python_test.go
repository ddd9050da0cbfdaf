package e2e

import "testing"

// TestLSPPythonTypeErrorAndFix: the model's edit gives a variable
// declared int a string; the tool result carries pyright's type error at
// the string's line and column, and the fix clears it. pyright-langserver
// is the built-in table's, found on PATH with no config; pyproject.toml
// marks the project's root.
func TestLSPPythonTypeErrorAndFix(t *testing.T) {
	t.Parallel()
	needServer(t, "pyright-langserver")
	srv := editTurns(t, "python-type", "app.py",
		[2]string{`x: int = 1`, `x: int = "a"`},
		[2]string{`x: int = "a"`, `x: int = 2`})
	proj, env := lspProject(t, srv.URL, map[string]string{
		"pyproject.toml": "[project]\nname = \"app\"\nversion = \"0.1.0\"\n",
		"app.py":         "x: int = 1\nprint(x)\n",
	}, lspWaitConfig(lspContentWait, lspContentWait))
	results := runEdits(t, srv, proj, env)
	if len(results) != 2 {
		t.Fatalf("%d tool results, want 2", len(results))
	}
	wantResult(t, "the breaking edit", results[0],
		"diagnostics from pyright for app.py (errors first;",
		`app.py:1:10: error: Type "Literal['a']" is not assignable to declared type "int"`)
	wantResult(t, "the fixing edit", results[1], "diagnostics from pyright for app.py: none")
}
