package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLSPTypeScriptTypeErrorAndFix: the model's edit gives a number a
// string; the tool result carries TS2322's message from
// typescript-language-server at the name's line and column, and the fix
// clears it. The project has its package.json, tsconfig.json and
// node_modules/typescript, as a real one has (the server loads the
// project's own tsserver): a link to the typescript the set-up installed.
func TestLSPTypeScriptTypeErrorAndFix(t *testing.T) {
	t.Parallel()
	needServer(t, "typescript-language-server")
	// tsc is node_modules/typescript/bin/tsc in the set-up's npm prefix.
	typescript := filepath.Dir(filepath.Dir(realPath(t, needServer(t, "tsc"))))
	srv := editTurns(t, "typescript-type", "index.ts",
		[2]string{`export const n: number = 1;`, `export const n: number = "a";`},
		[2]string{`export const n: number = "a";`, `export const n: number = 2;`})
	proj, env := lspProject(t, srv.URL, map[string]string{
		"package.json":  `{"name":"app","private":true,"devDependencies":{"typescript":"5.9.3"}}` + "\n",
		"tsconfig.json": `{"compilerOptions":{"strict":true,"noEmit":true,"target":"es2020","module":"commonjs"},"include":["*.ts"]}` + "\n",
		"index.ts":      "export const n: number = 1;\n",
		".gitignore":    "node_modules/\n",
	}, lspWaitConfig(lspContentWait, lspContentWait))
	if err := os.MkdirAll(filepath.Join(proj, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(typescript, filepath.Join(proj, "node_modules", "typescript")); err != nil {
		t.Fatal(err)
	}
	results := runEdits(t, srv, proj, env)
	if len(results) != 2 {
		t.Fatalf("%d tool results, want 2", len(results))
	}
	wantResult(t, "the breaking edit", results[0],
		"diagnostics from typescript-language-server for index.ts (errors first;",
		"index.ts:1:14: error: Type 'string' is not assignable to type 'number'.")
	wantResult(t, "the fixing edit", results[1], "diagnostics from typescript-language-server for index.ts: none")
}
