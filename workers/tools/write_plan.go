package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
)

// ToolWritePlan writes a planned feature's goals and tasks (ralph plan).
const ToolWritePlan = "write_plan"

// WritePlanParams are write_plan's arguments.
type WritePlanParams struct {
	Title string        `json:"title" required:"true" description:"the feature's name, a few words: the heading of its goals"`
	Goals string        `json:"goals" required:"true" description:"what the feature is for and what done means, as markdown: it goes under the heading in RALPH_GOALS.md"`
	Tasks []PlannedTask `json:"tasks" required:"true" description:"the tasks, in the order a person would read them"`
}

// PlannedTask is one task of a plan.
type PlannedTask struct {
	ID                 string   `json:"id" required:"true" description:"a short stable id: letters, digits and dashes"`
	Title              string   `json:"title" required:"true" description:"what to do, one line"`
	Description        string   `json:"description,omitempty" description:"more about the task, if the title is not enough"`
	AcceptanceCriteria []string `json:"acceptance_criteria,omitempty" description:"what must hold when the task is done"`
	Verify             string   `json:"verify,omitempty" description:"a command that passes only when the task is done, such as a test; ralph run runs it after the agent says the task is done, and the task is done only if it passes"`
	Priority           *int     `json:"priority,omitempty" description:"lower is sooner; leave out where the order does not matter"`
	DependsOn          []string `json:"depends_on,omitempty" description:"ids of tasks that must be done first"`
}

// Plan is what write_plan wrote last, for the face that shows it.
type Plan struct {
	Title string        `json:"title"`
	Goals string        `json:"goals"`
	Tasks []PlannedTask `json:"tasks"`
	// Warnings are what the task list's import said (a dependency that
	// names no task, a duplicate id).
	Warnings []string `json:"warnings,omitempty"`
}

// PlanWriter is the write_plan tool of one `ralph plan`. It keeps the
// task list and the goals as they were before the plan, byte for byte:
// every write_plan starts from them (so a revision replaces the plan
// rather than adding to it), and Drop puts them back.
type PlanWriter struct {
	fs   afero.Fs
	root string

	mu      sync.Mutex
	before  map[string]*[]byte // file -> bytes before the plan; nil: it did not exist
	perm    map[string]os.FileMode
	plan    *Plan
	written bool
}

// NewPlanWriter keeps the task list and the goals as they are now.
func NewPlanWriter(fs afero.Fs, root string) (*PlanWriter, error) {
	w := &PlanWriter{fs: fs, root: root, before: map[string]*[]byte{}, perm: map[string]os.FileMode{}}
	for _, name := range []string{memory.TasksFile, memory.GoalsFile} {
		path := filepath.Join(root, name)
		data, err := afero.ReadFile(fs, path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			w.before[name], w.perm[name] = nil, 0o644
		case err != nil:
			return nil, fmt.Errorf("plan: %w", err)
		default:
			w.before[name] = &data
			w.perm[name] = 0o644
			if fi, err := fs.Stat(path); err == nil {
				w.perm[name] = fi.Mode().Perm()
			}
		}
	}
	return w, nil
}

// tool is write_plan, for the planning coordinator's toolset (Deps.Plan).
func (w *PlanWriter) tool() Tool {
	return NewTool(Def("write_plan"), func(_ context.Context, args json.RawMessage) workers.Result {
		var a WritePlanParams
		if err := json.Unmarshal(args, &a); err != nil {
			return workers.Result{IsError: true, Output: "write_plan needs {\"title\", \"goals\", \"tasks\": [{\"id\", \"title\", ...}]}: " + err.Error()}
		}
		if len(a.Tasks) == 0 {
			return workers.Result{IsError: true, Output: "write_plan needs at least one task"}
		}
		p, err := w.write(a)
		if err != nil {
			return workers.Result{IsError: true, Output: "the plan was not written: " + err.Error()}
		}
		out := fmt.Sprintf("wrote %s to %s and the goals to %s", text.Counted(len(p.Tasks), "task", "tasks"), memory.TasksFile, memory.GoalsFile)
		if len(p.Warnings) > 0 {
			out += "; fix these and call write_plan again: " + strings.Join(p.Warnings, " ")
		}
		return workers.Result{Output: out}
	})
}

// write puts the files back as they were before the plan and writes the
// plan into them: the tasks through the task list's import (ralph's own
// grammar; every other line kept), the goals as a section at the end.
func (w *PlanWriter) write(a WritePlanParams) (*Plan, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.restore(); err != nil {
		return nil, err
	}
	type story struct {
		ID                 string   `json:"id"`
		Title              string   `json:"title"`
		Description        string   `json:"description,omitempty"`
		AcceptanceCriteria []string `json:"acceptanceCriteria,omitempty"`
		Priority           *int     `json:"priority,omitempty"`
		DependsOn          []string `json:"dependsOn,omitempty"`
	}
	doc := struct {
		Name        string  `json:"name"`
		UserStories []story `json:"userStories"`
	}{Name: a.Title}
	for _, t := range a.Tasks {
		criteria := t.AcceptanceCriteria
		if v := strings.TrimSpace(t.Verify); v != "" {
			criteria = append(criteria[:len(criteria):len(criteria)], "Verify: `"+v+"` passes")
		}
		doc.UserStories = append(doc.UserStories, story{ID: t.ID, Title: t.Title, Description: t.Description,
			AcceptanceCriteria: criteria, Priority: t.Priority, DependsOn: t.DependsOn})
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	res, err := planfile.ImportPlan(w.fs, w.root, data)
	if err != nil {
		return nil, err
	}
	if err := w.appendGoals(a.Title, a.Goals); err != nil {
		return nil, err
	}
	w.plan = &Plan{Title: a.Title, Goals: a.Goals, Tasks: a.Tasks, Warnings: res.Warnings}
	w.written = true
	return w.plan, nil
}

// appendGoals adds the feature's goals as a section of RALPH_GOALS.md.
func (w *PlanWriter) appendGoals(title, goals string) error {
	var b strings.Builder
	if prev := w.before[memory.GoalsFile]; prev != nil {
		b.Write(*prev)
		if len(*prev) > 0 && !strings.HasSuffix(string(*prev), "\n") {
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	title = strings.Join(strings.Fields(title), " ")
	fmt.Fprintf(&b, "## %s\n\n%s\n", title, strings.TrimSpace(goals))
	return memory.WriteFileAtomic(w.fs, filepath.Join(w.root, memory.GoalsFile), []byte(b.String()), w.perm[memory.GoalsFile])
}

// restore puts both files back as they were before the plan: the same
// bytes, or no file where there was none.
func (w *PlanWriter) restore() error {
	for name, data := range w.before {
		path := filepath.Join(w.root, name)
		if data == nil {
			if err := w.fs.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("plan: %w", err)
			}
			continue
		}
		if cur, err := afero.ReadFile(w.fs, path); err == nil && string(cur) == string(*data) {
			continue
		}
		if err := memory.WriteFileAtomic(w.fs, path, *data, w.perm[name]); err != nil {
			return fmt.Errorf("plan: %w", err)
		}
	}
	return nil
}

// Drop takes the plan back: both files are as they were before it.
func (w *PlanWriter) Drop() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.plan, w.written = nil, false
	return w.restore()
}

// Plan is the plan written last, nil before write_plan was called.
func (w *PlanWriter) Plan() *Plan {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.plan
}

// PlanPrompt is the request that starts a plan of feature (/plan in
// chat): PlanNote, then the person's words.
func PlanPrompt(feature string) string {
	return PlanNote() + "\n\n" + feature
}

// PlanNote is what ralph asks of the model about a feature to plan. ralph
// plan gives it as the note before the person's words (the
// coordinator's AddNote), so the prompt it records and lists is theirs.
func PlanNote() string {
	return "Plan this feature; do not build it now. " +
		"First read the project with your read-only tools: its layout, how it is built and tested, " +
		memory.GoalsFile + " and " + memory.TasksFile + ". Ask the person with " + ToolAskUser +
		" about what matters and you cannot find out (one question at a time, only what changes the plan). " +
		"Then call " + ToolWritePlan + " once with the goals and the tasks. Do not change any file " +
		"except through " + ToolWritePlan + ". End with a short summary of the plan. The feature, in the person's words:"
}

// RevisePlanNote is what ralph asks of the model with a person's words
// on what to change in the plan it wrote.
func RevisePlanNote() string {
	return "Revise the plan as the person asks below, then call " + ToolWritePlan + " again with the whole revised plan."
}
