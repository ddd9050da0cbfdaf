package e2e

import (
	"strings"
	"testing"
)

// goProject is a module without dependencies whose main.go builds; the
// tests' edits break line 6 and mend it.
var goProject = map[string]string{
	"go.mod":  "module example.com/hello\n\ngo 1.22\n",
	"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n",
}

// The edit that breaks the build (a call of an undefined function, at
// line 6 column 14: the tab is one column) and the one that mends it.
var (
	goBreak = [2]string{`fmt.Println("hi")`, `fmt.Println(foo())`}
	goMend  = [2]string{`fmt.Println(foo())`, `fmt.Println("mended")`}
)

// goUndefined is gopls's diagnostic for the break, as the tool result
// carries it.
const goUndefined = "main.go:6:14: error: undefined: foo"

// TestLSPGoEditBreaksAndMends: the model's edit_file breaks a Go build
// and the tool result it gets carries gopls's own diagnostic, with its
// line and column; the next edit mends it and the result says none for
// main.go. gopls is the built-in table's, found on PATH with no config.
func TestLSPGoEditBreaksAndMends(t *testing.T) {
	t.Parallel()
	needServer(t, "gopls")
	srv := editTurns(t, "go-break-mend", "main.go", goBreak, goMend)
	proj, env := lspProject(t, srv.URL, goProject, lspWaitConfig(lspContentWait, lspContentWait))
	results := runEdits(t, srv, proj, env)
	if len(results) != 2 {
		t.Fatalf("%d tool results, want 2", len(results))
	}
	wantResult(t, "the breaking edit", results[0], goUndefined)
	if !strings.Contains(results[0], "diagnostics from gopls for main.go (errors first;") {
		t.Fatalf("the breaking edit's result has no diagnostics header from gopls:\n%s", results[0])
	}
	if i, j := strings.Index(results[0], "edited main.go"), strings.Index(results[0], "\n\ndiagnostics from gopls"); i < 0 || j < i {
		t.Fatalf("the diagnostics do not follow the edit's own output after a blank line:\n%s", results[0])
	}
	wantResult(t, "the mending edit", results[1], "diagnostics from gopls for main.go: none")
	if got := readFileT(t, proj+"/main.go"); !strings.Contains(got, `fmt.Println("mended")`) {
		t.Fatalf("main.go = %q, want the mended line", got)
	}
}

// TestLSPGoDiagnosticsToolForTheWorkspace: after an edit breaks the
// build, the model's diagnostics call without a path answers with the
// workspace's diagnostics in the same lines, the break among them.
func TestLSPGoDiagnosticsToolForTheWorkspace(t *testing.T) {
	t.Parallel()
	needServer(t, "gopls")
	srv := inlineServer(t, toolScenario(t, "go-diagnostics-tool", [][]toolCall{
		{{"edit_file", editArgs("main.go", goBreak[0], goBreak[1])}},
		{{"diagnostics", `{}`}},
		{{"diagnostics", `{"path":"main.go"}`}},
	}, "Done."))
	proj, env := lspProject(t, srv.URL, goProject, lspWaitConfig(lspContentWait, lspContentWait))
	results := runEdits(t, srv, proj, env)
	if len(results) != 3 {
		t.Fatalf("%d tool results, want 3", len(results))
	}
	wantResult(t, "the edit", results[0], goUndefined)
	wantResult(t, "diagnostics for the workspace", results[1], goUndefined)
	wantResult(t, "diagnostics for main.go", results[2], goUndefined)
	if !strings.Contains(results[2], "diagnostics from gopls for main.go") {
		t.Fatalf("the diagnostics tool's answer for main.go names no server:\n%s", results[2])
	}
}

// TestLSPDoctorListsGopls: `ralph doctor` in a Go project, with the set-up's
// gopls on PATH, lists gopls as found, with where.
func TestLSPDoctorListsGopls(t *testing.T) {
	t.Parallel()
	gopls := needServer(t, "gopls")
	srv := inlineServer(t, `{"name":"doctor","loop":true,"responses":[{"text":"hi"}]}`)
	proj, env := lspProject(t, srv.URL, goProject, "")
	r := ralph(t, proj, env, nil, "doctor")
	var line string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, "gopls") {
			line = l
			break
		}
	}
	if line == "" {
		t.Fatalf("ralph doctor names no gopls (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, gopls) && !strings.Contains(r.stdout, realPath(t, gopls)) {
		t.Fatalf("ralph doctor's gopls does not say where it is (%s):\n%s", gopls, r.stdout)
	}
	if low := strings.ToLower(line); strings.Contains(low, "not found") || strings.Contains(low, "missing") {
		t.Fatalf("ralph doctor says gopls is missing: %q", line)
	}
}
