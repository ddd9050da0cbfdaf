package planfile

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory"

	"github.com/spf13/afero"
)

// Set RALPH_UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate
// change to the import's output; then read the diff before committing it.
var updateGolden = os.Getenv("RALPH_UPDATE_GOLDEN") != ""

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "prd", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "prd", name)
	if updateGolden {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with RALPH_UPDATE_GOLDEN=1 to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the import's output:\n--- got ---\n%s--- want ---\n%s", name, got, want)
	}
}

// importInto writes start (nil: no file) as root's task file, imports the
// fixture, and returns the result and the file's bytes afterwards.
func importInto(t *testing.T, fs afero.Fs, start []byte, fixture string) (ImportResult, []byte) {
	t.Helper()
	path := filepath.Join("/proj", memory.TasksFile)
	if start != nil {
		if err := afero.WriteFile(fs, path, start, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := ImportPRD(fs, "/proj", readFixture(t, fixture))
	if err != nil {
		t.Fatalf("ImportPRD(%s): %v", fixture, err)
	}
	out, err := afero.ReadFile(fs, path)
	if err != nil {
		t.Fatal(err)
	}
	return res, out
}

// initTasks is the task file ralph init writes, read back as a person
// would find it.
func initTasks(t *testing.T) []byte {
	t.Helper()
	fs := afero.NewMemMapFs()
	if _, err := memory.InitProject(fs, "/p", time.Now()); err != nil {
		t.Fatal(err)
	}
	b, err := afero.ReadFile(fs, "/p/"+memory.TasksFile)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestImportPRDGolden(t *testing.T) {
	tests := []struct {
		name, fixture, golden string
		start                 []byte
		added, updated        int
	}{
		{"new file", "task-priority.json", "task-priority.golden.md", nil, 7, 0},
		{"after ralph init", "task-priority.json", "task-priority-template.golden.md", initTasks(t), 7, 0},
		{"merge into hand-written", "task-priority.json", "task-priority-merge.golden.md", readFixture(t, "existing.md"), 5, 2},
		{"edge cases", "edge-cases.json", "edge-cases.golden.md", nil, 6, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := afero.NewMemMapFs()
			res, out := importInto(t, fs, tc.start, tc.fixture)
			checkGolden(t, tc.golden, out)
			if res.Added != tc.added || res.Updated != tc.updated || res.Unchanged != 0 {
				t.Errorf("first import: %+v, want %d added, %d updated", res, tc.added, tc.updated)
			}

			// Importing the same prd.json again finds every story's task and
			// changes nothing, down to the byte.
			res2, again := importInto(t, fs, nil, tc.fixture)
			if !bytes.Equal(again, out) {
				t.Errorf("second import changed the file:\n%s", again)
			}
			if res2.Added != 0 || res2.Updated != 0 || res2.Unchanged != tc.added+tc.updated {
				t.Errorf("second import: %+v, want all %d unchanged", res2, tc.added+tc.updated)
			}

			// The text under each task is prose to the parser: exactly one
			// task per story beyond what the file already had.
			before := len(ParseTasks(tc.start).Tasks())
			if n := len(ParseTasks(out).Tasks()); n != before+tc.added {
				t.Errorf("the file has %d tasks, want %d", n, before+tc.added)
			}
		})
	}
}

// The merge keeps every byte of the hand-written file: each of its lines is
// still there, in order, and the only ones that differ are the two tasks
// whose ids are stories, and those only in their state and ralph comment.
func TestImportPRDKeepsHandWrittenBytes(t *testing.T) {
	start := readFixture(t, "existing.md")
	_, out := importInto(t, afero.NewMemMapFs(), start, "task-priority.json")
	got := strings.SplitAfter(string(out), "\n")
	j := 0
	for _, want := range strings.SplitAfter(string(start), "\n") {
		for j < len(got) && got[j] != want && !sameTaskButRalphOwned(got[j], want) {
			j++
		}
		if j == len(got) {
			t.Fatalf("line %q of the hand-written file is missing or out of order:\n%s", want, out)
		}
		j++
	}
	// Every added line is after the hand-written tasks and before the fence.
	if !strings.HasSuffix(string(out), "\n\n```sh\n- [ ] not a task: inside a fence\n```\n") {
		t.Errorf("the fence at the end moved:\n%s", out)
	}
}

// sameTaskButRalphOwned reports whether two task lines differ only in the
// bytes ralph owns: the state character and the ralph comment.
func sameTaskButRalphOwned(a, b string) bool {
	ra, oka := parseTaskLine(strings.TrimSuffix(a, "\n"))
	rb, okb := parseTaskLine(strings.TrimSuffix(b, "\n"))
	if !oka || !okb || ra.title != rb.title {
		return false
	}
	ida, _ := ra.metaGet("id")
	idb, _ := rb.metaGet("id")
	return ida == idb && ida != ""
}

// A story that does not pass never reopens a task that is done, and one that
// passes finishes a task in any other state; hand-set meta survives.
func TestImportPRDUpdatesWithoutUndoing(t *testing.T) {
	start := "- [x] US-003 by hand <!-- ralph:id=US-003 -->\n" +
		"- [~] US-002 in progress <!-- ralph:id=US-002 attempts=2 -->\n" +
		"- [!] US-001 failed once <!-- ralph:id=US-001 priority=7 depends=t9 -->\n" +
		"- [ ] t9 <!-- ralph:id=t9 -->\n"
	res, out := importInto(t, afero.NewMemMapFs(), []byte(start), "task-priority.json")
	f := ParseTasks(out)
	want := map[string]string{
		"US-003": "done 2 [US-002]", // passes false: stays done, meta from the story
		"US-002": "done 2 [US-001]", // passes true: in progress becomes done
		"US-001": "done 1 [t9]",     // passes true; no dependsOn in the story, so t9 stays
		"t9":     "open 100 []",     // not a story: untouched
		"US-004": "open 3 [US-002]", // new
		"US-007": "open 5 []",       // new
		"US-006": "open 1 [US-002]", // new
		"US-005": "open 4 [US-003 US-004]",
	}
	for id, w := range want {
		tk, ok := f.Find(id)
		if !ok {
			t.Errorf("task %s missing", id)
			continue
		}
		got := string(tk.State) + " " + strconv.Itoa(tk.Priority) + " [" + strings.Join(tk.Depends, " ") + "]"
		if got != w {
			t.Errorf("task %s: %s, want %s", id, got, w)
		}
	}
	if tk, _ := f.Find("US-002"); tk.Meta["attempts"] != "2" {
		t.Errorf("US-002 lost its attempts meta: %v", tk.Meta)
	}
	if res.Added != 4 || res.Updated != 3 || res.Unchanged != 0 {
		t.Errorf("result %+v, want 4 added, 3 updated", res)
	}
	if !strings.HasPrefix(string(out), "- [x] US-003 by hand <!-- ralph:id=US-003 priority=2 depends=US-002 -->\n") {
		t.Errorf("US-003 was rewritten beyond its state and comment:\n%s", out)
	}
}

func TestImportPRDLineEndings(t *testing.T) {
	// A CRLF file gets CRLF lines.
	_, out := importInto(t, afero.NewMemMapFs(), []byte("- [ ] mine\r\n"), "task-priority.json")
	if strings.Count(string(out), "\n") != strings.Count(string(out), "\r\n") {
		t.Errorf("mixed line endings in a CRLF file:\n%q", out)
	}
	if !strings.HasPrefix(string(out), "- [ ] mine\r\n- [x] US-001: ") {
		t.Errorf("CRLF import:\n%q", out)
	}
	// A file without a final newline still has none.
	_, out = importInto(t, afero.NewMemMapFs(), []byte("- [ ] mine"), "task-priority.json")
	if !strings.HasPrefix(string(out), "- [ ] mine\n- [x] US-001: ") || strings.HasSuffix(string(out), "\n") {
		t.Errorf("no-final-newline import:\n%q", out)
	}
	if strings.Contains(string(out), "\r") {
		t.Errorf("CR in an LF file:\n%q", out)
	}
}

func TestImportPRDWarnings(t *testing.T) {
	res, _ := importInto(t, afero.NewMemMapFs(), nil, "edge-cases.json")
	want := []string{
		`Stories 1 and 3 both have id "CLI 1"; the second is imported as CLI-1-2.`,
		`Story 4 has no id; it is imported as story-4.`,
		`Story 6 has id "???", which has no letters or digits; it is imported as story-6.`,
		`Story "CLI 1" (task CLI-1) has priority "high", which is not a whole number; it is imported without one.`,
		`Story 2 has priority 1.5, which is not a whole number; it is imported without one.`,
		`Story 2 has no title; its task is titled by its description.`,
		`Story "CLI 1" (task CLI-1-2) depends on "CLI-9", which is neither a story in this file nor a task in RALPH_TASKS.md; its task waits until a task with that id exists.`,
		`Story 4 (task story-4) depends on "t1", which is neither a story in this file nor a task in RALPH_TASKS.md; its task waits until a task with that id exists.`,
		`Story "L7" (task story-L7) depends on itself; that dependency is left out.`,
	}
	if !reflect.DeepEqual(res.Warnings, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(res.Warnings, "\n"), strings.Join(want, "\n"))
	}
	// A dependency on a hand-written task is no surprise: no warning.
	res, _ = importInto(t, afero.NewMemMapFs(), readFixture(t, "existing.md"), "edge-cases.json")
	for _, w := range res.Warnings {
		if strings.Contains(w, `"t1"`) {
			t.Errorf("warned about t1, which the file has: %s", w)
		}
	}
	// The realistic fixture is clean.
	if res, _ := importInto(t, afero.NewMemMapFs(), nil, "task-priority.json"); len(res.Warnings) != 0 {
		t.Errorf("task-priority.json warnings: %q", res.Warnings)
	}
}

func TestImportPRDBadInput(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"syntax", string(readFixture(t, "bad-syntax.json")),
			`prd.json line 7, column 7: invalid character '"' after object key:value pair`},
		{"type", string(readFixture(t, "bad-type.json")),
			"prd.json line 7, column 17: userStories.passes must be true or false, not string"},
		{"truncated", "{\n  \"userStories\": [\n    {\"id\": \"a\"",
			"prd.json line 3, column 15: the JSON ends before the object is complete"},
		{"trailing", "{\"userStories\": []}\n{\"userStories\": []}\n",
			"prd.json line 2, column 1: unexpected text after the end of the JSON object"},
		{"top-level array", "[\n  {\"id\": \"a\"}\n]",
			"prd.json line 1, column 1: the top level must be an object, not array"},
		{"criteria not a list", "{\"userStories\": [{\"id\": \"a\", \"acceptanceCriteria\": \"x\"}]}",
			"prd.json line 1, column 52: userStories.acceptanceCriteria must be a list of strings, not string"},
		{"no stories", `{"name": "x", "tasks": []}`,
			"prd.json has no userStories list, so there is nothing to import"},
		{"id an object", `{"userStories": [{"id": {"n": 1}}]}`,
			"prd.json: the id of story 1 must be a string, not an object"},
		{"dependency a list", `{"userStories": [{"id": "a", "dependsOn": [["b"]]}]}`,
			"prd.json: dependency 1 of story 1 must be a string, not a list"},
		{"empty", "", "prd.json line 1, column 1: the JSON ends before the object is complete"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := afero.NewMemMapFs()
			start := []byte("- [ ] mine\n")
			path := filepath.Join("/proj", memory.TasksFile)
			if err := afero.WriteFile(fs, path, start, 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := ImportPRD(fs, "/proj", []byte(tc.data))
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v\nwant  %s", err, tc.want)
			}
			if !reflect.DeepEqual(res, ImportResult{}) {
				t.Errorf("result %+v on error", res)
			}
			if out, _ := afero.ReadFile(fs, path); !bytes.Equal(out, start) {
				t.Errorf("a failed import changed the file:\n%s", out)
			}
		})
	}
}

func TestImportPRDByteOrderMark(t *testing.T) {
	fs := afero.NewMemMapFs()
	res, err := ImportPRD(fs, "/proj", []byte("\ufeff{\"userStories\": [{\"id\": \"a\", \"title\": \"A\", \"priority\": \"2\"}]}"))
	if err != nil || res.Added != 1 || len(res.Warnings) != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	out, _ := afero.ReadFile(fs, filepath.Join("/proj", memory.TasksFile))
	if want := "# Tasks\n\n- [ ] a: A <!-- ralph:id=a priority=2 -->\n"; string(out) != want {
		t.Errorf("got %q, want %q", out, want)
	}
	_, err = ImportPRD(fs, "/proj", []byte("\ufeff{\n  \"userStories\": [}"))
	if err == nil || err.Error() != "prd.json line 2, column 19: invalid character '}' looking for beginning of value" {
		t.Errorf("error after a BOM: %v", err)
	}
}

func TestImportPRDEmptyStoriesCreatesNothing(t *testing.T) {
	fs := afero.NewMemMapFs()
	res, err := ImportPRD(fs, "/proj", []byte(`{"name": "Nothing yet", "userStories": []}`))
	if err != nil || !reflect.DeepEqual(res, ImportResult{}) {
		t.Fatalf("%+v, %v", res, err)
	}
	if ok, _ := afero.Exists(fs, filepath.Join("/proj", memory.TasksFile)); ok {
		t.Error("an import of no stories created the task file")
	}
}

// After an import ralph works through the stories the way ralph-tui would:
// the lowest priority number among the stories whose dependencies are done.
func TestImportPRDNextFollowsPrioritiesAndDependencies(t *testing.T) {
	_, out := importInto(t, afero.NewMemMapFs(), nil, "task-priority.json")
	f := ParseTasks(out)
	if v := f.Validate(); len(v) != 0 {
		t.Fatalf("Validate: %q", v)
	}
	var order []string
	for {
		tk, ok := f.Next()
		if !ok {
			break
		}
		order = append(order, tk.ID)
		if err := f.SetState(tk.ID, TaskDone); err != nil {
			t.Fatal(err)
		}
	}
	// US-001 and US-002 pass already. US-006 (priority 1) comes before
	// US-003 (2) and US-004 (3); US-005 (4) waits for both of those, and
	// US-007 (5) is last although it depends on nothing.
	want := []string{"US-006", "US-003", "US-004", "US-005", "US-007"}
	if !reflect.DeepEqual(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if c := f.Counts(); c.Done != 7 || c.Total != 7 {
		t.Errorf("counts %+v", c)
	}
}

func TestSanitizeTaskID(t *testing.T) {
	tests := map[string]string{
		"US-001":     "US-001",
		"US 001":     "US-001",
		"US/001 ":    "US-001",
		"feat:login": "feat-login",
		"a__b":       "a__b",
		"--x--":      "x",
		"L7":         "story-L7",
		"L07x":       "L07x",
		"Ärger-1":    "Ärger-1",
		"!!!":        "",
		"42":         "42",
	}
	for in, want := range tests {
		if got := sanitizeTaskID(in); got != want {
			t.Errorf("sanitizeTaskID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlainLineNeverATask(t *testing.T) {
	for _, s := range []string{"- [ ] a", "[x] b", "1. [ ] c", "* [~] d", "# e", "```", "~~~ f", "<!-- g", "plain"} {
		for _, indent := range []string{"", "  ", "    "} {
			line := plainLine(indent, s)
			f := ParseTasks([]byte("- [ ] parent\n" + line + "\n- [ ] after\n"))
			if n := len(f.Tasks()); n != 2 {
				t.Errorf("plainLine(%q, %q) = %q makes %d tasks", indent, s, line, n)
			}
			if k := f.info[1].kind; k != kindText && k != kindList {
				t.Errorf("plainLine(%q, %q) = %q is a %v line", indent, s, line, f.info[1].kind)
			}
		}
	}
}

// FuzzImportPRD checks, for any input, that an import never panics, never
// makes a story's text into a task, and is idempotent.
func FuzzImportPRD(f *testing.F) {
	for _, name := range []string{"task-priority.json", "edge-cases.json", "bad-syntax.json", "bad-type.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "prd", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "")
	}
	f.Add([]byte(`{"userStories":[{"id":"a","title":"x <!-- ralph:id=b -->","description":"- [ ] y\n  # z","acceptanceCriteria":["<!--","`+"```"+`"]}]}`), "- [ ] mine\n```\n")
	f.Fuzz(func(t *testing.T, data []byte, start string) {
		fs := afero.NewMemMapFs()
		path := filepath.Join("/proj", memory.TasksFile)
		if err := afero.WriteFile(fs, path, []byte(start), 0o644); err != nil {
			t.Fatal(err)
		}
		before := len(ParseTasks([]byte(start)).Tasks())
		res, err := ImportPRD(fs, "/proj", data)
		if err != nil {
			return
		}
		out, _ := afero.ReadFile(fs, path)
		if n := len(ParseTasks(out).Tasks()); n != before+res.Added {
			t.Fatalf("%d tasks after adding %d to %d:\n%s", n, res.Added, before, out)
		}
		res2, err := ImportPRD(fs, "/proj", data)
		if err != nil {
			t.Fatalf("second import: %v", err)
		}
		again, _ := afero.ReadFile(fs, path)
		if !bytes.Equal(again, out) || res2.Added != 0 || res2.Updated != 0 {
			t.Fatalf("second import %+v changed\n%q\nto\n%q", res2, out, again)
		}
	})
}
