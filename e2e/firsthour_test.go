package e2e

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestStatusCallsAPlanSessionAPlan: the session `ralph plan` leaves is
// recorded as a plan, so ralph status says "plan", not "oneshot".
func TestStatusCallsAPlanSessionAPlan(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(plannerModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "plan", "add a cache"); r.code != 0 {
		t.Fatalf("plan: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	js := ralph(t, dir, env, nil, "status", "--json")
	var st struct {
		Session struct{ Mode string }
	}
	if err := json.Unmarshal([]byte(js.stdout), &st); err != nil || js.code != 0 || st.Session.Mode != "plan" {
		t.Fatalf("status --json: exit %d %v, mode %q\n%s", js.code, err, st.Session.Mode, js.stdout)
	}
	txt := ralph(t, dir, env, nil, "status")
	if !regexp.MustCompile(`(?m)^mode\s+plan$`).MatchString(txt.stdout) {
		t.Fatalf("status does not say the session was a plan:\n%s", txt.stdout)
	}
}

// TestReportSaysWhereItWroteTheReport: ralph report prints the report on
// stdout and, on stderr, the one line that says where final-report.md is.
func TestReportSaysWhereItWroteTheReport(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"hello","responses":[{"text":"hello there"}]}`)
	dir := t.TempDir()
	env := cleanEnv(t)
	one := ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "say hello")
	if one.code != 0 {
		t.Fatalf("one-shot: exit %d\n%s", one.code, one.stderr)
	}
	id, _ := resultLine(t, one.stdout)["session_id"].(string)
	r := ralph(t, dir, env, nil, "report")
	want := filepath.Join(".ralph", "sessions", id, "final-report.md")
	if r.code != 0 || !strings.Contains(r.stdout, "# Session report") || strings.Contains(r.stdout, "final-report.md") {
		t.Fatalf("report: exit %d\nstdout:\n%s", r.code, r.stdout)
	}
	if r.stderr != "ralph: wrote "+want+"\n" {
		t.Fatalf("report's stderr is %q, want the line that says it wrote %s", r.stderr, want)
	}
	if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
		t.Fatalf("the path report gave: %v", err)
	}
}

// TestGraphSaysEveryTaskIsDone: a task list whose every task is done is
// finished, not stuck, and status --graph says so.
func TestGraphSaysEveryTaskIsDone(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ tasks, want string }{
		"all done":  {"- [x] a <!-- ralph:id=a -->\n- [x] b <!-- ralph:id=b depends=a -->\n- [X] c\n", "All 3 tasks are done; nothing is left to start.\n"},
		"one done":  {"- [x] a <!-- ralph:id=a -->\n", "The one task is done; nothing is left to start.\n"},
		"one stuck": {"- [x] a <!-- ralph:id=a -->\n- [!] b <!-- ralph:id=b -->\n", "No open task can start.\n"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			mustWrite(t, filepath.Join(dir, "RALPH_TASKS.md"), "# Tasks\n\n"+tc.tasks)
			r := ralph(t, dir, cleanEnv(t), nil, "status", "--graph")
			if r.code != 0 || r.stdout != tc.want {
				t.Fatalf("status --graph: exit %d %q, want %q\n%s", r.code, r.stdout, tc.want, r.stderr)
			}
		})
	}
}

// TestDistArchivesCarryTheLicence: make dist puts LICENSE (MIT) in every
// archive, the .tar.gz and the Windows .zip alike. It builds two targets
// into a directory of the test's own, leaving the checkout's bin/ and dist/
// alone (about 2 minutes cold, seconds with the build cache warm).
func TestDistArchivesCarryTheLicence(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds release archives")
	}
	needTool(t, "make", "make")
	needTool(t, "zip", "zip, for the Windows archive")
	tmp := t.TempDir()
	out := filepath.Join(tmp, "dist")
	cmd := exec.Command("make", "dist", "DIST="+out, "BIN="+filepath.Join(tmp, "ralph"), "VERSION=v0.0.0-licence",
		"TARGETS=linux/amd64 windows/amd64")
	cmd.Dir = moduleRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make dist: %v\n%s", err, b)
	} else if strings.Contains(string(b), "LICENSE") {
		t.Fatalf("make dist warned about the licence:\n%s", b)
	}
	licence, err := os.ReadFile(filepath.Join(moduleRoot, "LICENSE"))
	if err != nil || !strings.HasPrefix(string(licence), "MIT License\n\nCopyright (c) 2026 the ralph authors\n") {
		t.Fatalf("LICENSE is not the MIT licence of the ralph authors: %v\n%s", err, licence)
	}
	for _, name := range []string{"ralph-v0.0.0-licence-linux-amd64.tar.gz", "ralph-v0.0.0-licence-windows-amd64.zip"} {
		got := archivedFile(t, filepath.Join(out, name), strings.TrimSuffix(strings.TrimSuffix(name, ".tar.gz"), ".zip")+"/LICENSE")
		if got != string(licence) {
			t.Fatalf("%s: LICENSE is %q, not the repository's", name, got)
		}
	}
}

// archivedFile is the content of the file at path inside a .tar.gz or .zip
// archive, failing the test when the archive lacks it.
func archivedFile(t *testing.T, archive, path string) string {
	t.Helper()
	if strings.HasSuffix(archive, ".zip") {
		z, err := zip.OpenReader(archive)
		if err != nil {
			t.Fatal(err)
		}
		defer z.Close()
		f, err := z.Open(path)
		if err != nil {
			t.Fatalf("%s has no %s: %v", archive, path, err)
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			t.Fatalf("%s has no %s", archive, path)
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == path {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
}
