package planfile

import (
	"strings"
	"testing"

	"github.com/spf13/afero"
)

const ralphexPlan = "# Plan: add caching\n\n## Overview\n\nCache reads.\n\n" +
	"## Implementation Steps\n\n### Task 1: add the cache interface\n\n**Files:**\n- Modify: `cache.go`\n\n" +
	"- [ ] write the interface\n- [ ] add tests\n\n### Task 2: wire it in\n\n- [x] already started\n- [ ] finish it\r\n\n" +
	"## Validation Commands\n\n- `go test ./...` - run the tests\n- `go vet ./...`\n"

func TestRalphexPlanIsATaskPerSection(t *testing.T) {
	fs := afero.NewMemMapFs()
	if err := afero.WriteFile(fs, "/p/docs/plans/cache.md", []byte(ralphexPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := OpenTracker(fs, "/p", "docs/plans/cache.md")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Name() != "docs/plans/cache.md" || tr.Verify() != "go test ./... && go vet ./..." {
		t.Fatalf("name %q, verify %q", tr.Name(), tr.Verify())
	}
	f, err := tr.Load()
	if err != nil {
		t.Fatal(err)
	}
	tasks := f.Tasks()
	if len(tasks) != 2 || tasks[0].ID != "task-1" || tasks[0].Title != "add the cache interface" ||
		len(tasks[1].Depends) != 1 || tasks[1].Depends[0] != "task-1" {
		t.Fatalf("tasks: %+v", tasks)
	}
	if notes := f.Notes("task-1"); !strings.Contains(notes, "- write the interface") || !strings.Contains(notes, "Modify: `cache.go`") {
		t.Fatalf("notes of task-1: %q", notes)
	}
	if next, _ := f.Next(); next.ID != "task-1" {
		t.Fatalf("next is %s", next.ID)
	}
	// Claimed, then done: its steps are checked in the file, nothing else
	// changes, and what the file cannot hold waits beside it.
	if _, err := tr.Update(func(f *TaskFile) error { return f.SetState("task-1", TaskInProgress) }); err != nil {
		t.Fatal(err)
	}
	if got, _ := afero.ReadFile(fs, "/p/docs/plans/cache.md"); string(got) != ralphexPlan {
		t.Fatalf("claiming changed the plan:\n%s", got)
	}
	if f, _ := tr.Load(); f.Tasks()[0].State != TaskInProgress {
		t.Fatal("the claim was not kept")
	}
	if _, err := tr.Update(func(f *TaskFile) error { return f.SetState("task-1", TaskDone) }); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(strings.Replace(ralphexPlan, "- [ ] write the interface", "- [x] write the interface", 1), "- [ ] add tests", "- [x] add tests", 1)
	if got, _ := afero.ReadFile(fs, "/p/docs/plans/cache.md"); string(got) != want {
		t.Fatalf("done task's steps not checked, or more changed:\n%q", got)
	}
	if next, _ := mustLoad(t, tr).Next(); next.ID != "task-2" {
		t.Fatalf("after task-1, next is %q", next.ID)
	}
}

const prdFile = `{
  "name": "Cache",
  "userStories": [
    {
      "id": "US-001",
      "title": "Schema",
      "description": "Define it.",
      "acceptanceCriteria": ["tables exist"],
      "priority": 2,
      "passes": false
    },
    { "id": "US-002", "title": "Reads", "priority": 1, "dependsOn": ["US-001"], "passes": false, "notes": "" },
    {"id": "US-003", "title": "Writes", "priority": 1}
  ]
}
`

func TestPRDIsWorkedInPlace(t *testing.T) {
	fs := afero.NewMemMapFs()
	if err := afero.WriteFile(fs, "/p/prd.json", []byte(prdFile), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := OpenTracker(fs, "/p", "prd.json")
	if err != nil {
		t.Fatal(err)
	}
	f := mustLoad(t, tr)
	var order []string
	for _, tk := range f.Order() {
		order = append(order, tk.ID)
	}
	// US-003 (priority 1, nothing waits) before US-001 (priority 2)
	// even though US-002 waits for US-001: priority comes first.
	if strings.Join(order, " ") != "US-003 US-001 US-002" {
		t.Fatalf("order %v", order)
	}
	for _, id := range []string{"US-001", "US-003"} {
		if _, err := tr.Update(func(f *TaskFile) error { return f.SetState(id, TaskDone) }); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := afero.ReadFile(fs, "/p/prd.json")
	want := strings.Replace(prdFile, `"passes": false
    },`, `"passes": true
    },`, 1)
	want = strings.Replace(want, `{"id": "US-003", "title": "Writes", "priority": 1}`, `{"id": "US-003", "title": "Writes", "priority": 1, "passes": true}`, 1)
	if string(got) != want {
		t.Fatalf("prd.json:\n%s\nwant:\n%s", got, want)
	}
	if next, _ := mustLoad(t, tr).Next(); next.ID != "US-002" {
		t.Fatalf("next is %q", next.ID)
	}
}

func mustLoad(t *testing.T, tr Tracker) *TaskFile {
	t.Helper()
	f, err := tr.Load()
	if err != nil {
		t.Fatal(err)
	}
	return f
}
