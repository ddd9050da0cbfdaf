// Package taskprompt writes what the task loop tells the agent working a
// task: ralph's own prompt, or the person's Go text/template
// (--prompt-template, prompt_template in the config) filled with the same
// facts. Either way a retried task is told what went wrong last time.
package taskprompt

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"text/template"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/text"
)

// Data is what a template sees. docs/run.md lists these fields; renaming
// one breaks the templates people wrote.
type Data struct {
	// Task is the task being worked.
	Task Task
	// Plan is the plan file the task is in, relative to the project
	// root: RALPH_TASKS.md unless ralph run was given another.
	Plan string
	// Notes are the lines under the task in RALPH_TASKS.md (acceptance
	// criteria, hints), without its subtasks.
	Notes string
	// Goals is RALPH_GOALS.md (its head, when long).
	Goals string
	// Progress is the most recent entries of RALPH_PROGRESS.md, bounded.
	Progress string
	// Attempt counts from 1; a retry is 2 or more.
	Attempt int
	// LastError, LastVerify and LastSummary say how the previous attempt
	// failed: why, the end of its --verify output, and the worker's last
	// summary. All are "" on a first attempt.
	LastError   string
	LastVerify  string
	LastSummary string
	// Branch is the task's own git branch under --worktrees, else "".
	Branch string
	// Dir is the directory the agent works in: the project root, or the
	// task's own worktree under --worktrees.
	Dir string
	// Date is today's date, 2006-01-02.
	Date string
	// Agent is the external agent working the task (claude, codex,
	// gemini, exec), "" for ralph's own.
	Agent string
	// Finish says how the agent reports that the task is done: ralph's
	// own agents call complete_task, an external agent prints a marker.
	Finish string
	// Default is ralph's own prompt for this attempt, for a template that
	// only adds to it.
	Default string
	// Verify are the commands that decide whether the task is done, in
	// the order ralph runs them once the agent says it is: the run's
	// --verify (or the plan's validation commands), then the task's own.
	// Empty when none is set: then the agent's word decides.
	Verify []string
}

// Task is a task of RALPH_TASKS.md as a template sees it.
type Task struct {
	ID       string
	Title    string
	Priority int
	Depends  []string
}

// Fields names the fields for error messages and help.
const Fields = ".Task.ID, .Task.Title, .Task.Priority, .Task.Depends, .Notes, .Goals, .Progress, .Attempt, " +
	".LastError, .LastVerify, .LastSummary, .Branch, .Dir, .Date, .Agent, .Finish, .Verify and .Default"

// funcs are the functions a template may call beside text/template's
// own: join, for a list such as .Task.Depends ({{join .Task.Depends ", "}}).
var funcs = template.FuncMap{"join": strings.Join}

// Template is a parsed prompt template.
type Template struct {
	name string
	t    *template.Template
}

// ErrBad marks a template that cannot be used: missing, unreadable, or
// not a template that fills in.
var ErrBad = errors.New("bad prompt template")

// badTemplate is an ErrBad that says what is wrong in one sentence of
// its own ("the prompt template p.tmpl:3:7: …").
type badTemplate struct{ msg string }

func (e *badTemplate) Error() string        { return e.msg }
func (e *badTemplate) Is(target error) bool { return target == ErrBad }

func bad(format string, args ...any) error {
	return &badTemplate{msg: "the prompt template " + fmt.Sprintf(format, args...)}
}

// Load reads and parses the template at path, and fills it in once with
// sample facts, so that a misspelt field is found before any work starts
// rather than at the first task.
func Load(fs afero.Fs, path string) (*Template, error) {
	data, err := afero.ReadFile(fs, path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, bad("%s does not exist", path)
		}
		return nil, bad("%s cannot be read: %v", path, err)
	}
	return Parse(path, string(data))
}

// Parse parses text as a template named name and tries it on sample
// facts.
func Parse(name, text string) (*Template, error) {
	if strings.TrimSpace(text) == "" {
		return nil, bad("%s is empty; it must tell the agent its task (for example with {{.Task.Title}})", name)
	}
	t, err := template.New(name).Option("missingkey=error").Funcs(funcs).Parse(text)
	if err != nil {
		return nil, bad("%s", errorLine(err))
	}
	tp := &Template{name: name, t: t}
	sample := Data{Task: Task{ID: "t1", Title: "a task", Priority: 1, Depends: []string{"t0"}}, Notes: "notes", Goals: "goals",
		Progress: "progress", Attempt: 2, LastError: "error", LastVerify: "verify output", LastSummary: "summary", Branch: "ralph/t1",
		Dir: "/project", Date: "2006-01-02"}
	sample.Default = Default(sample)
	out, err := tp.execute(sample)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(out) == "" {
		return nil, bad("%s fills in to nothing; it must tell the agent its task (for example with {{.Task.Title}})", name)
	}
	return tp, nil
}

// Name is where the template came from.
func (t *Template) Name() string { return t.name }

// Prompt is the prompt for d: t filled in, or ralph's own when t is nil.
// d.Default is set here.
func (t *Template) Prompt(d Data) (string, error) {
	d.Default = Default(d)
	if t == nil {
		return d.Default, nil
	}
	return t.execute(d)
}

func (t *Template) execute(d Data) (string, error) {
	var b bytes.Buffer
	if err := t.t.Execute(&b, d); err != nil {
		return "", bad("%s (the fields are %s)", errorLine(err), Fields)
	}
	return b.String(), nil
}

// errorLine is an error as one line: text/template's messages name the file,
// line and column already ("template: p.tmpl:3:7: executing "p.tmpl" at
// <.Task.Titel>: can't evaluate field Titel …"), so only the words that
// repeat them go: "p.tmpl:3:7: at <.Task.Titel>: can't evaluate …".
func errorLine(err error) string {
	s := text.OneLine(err.Error())
	s = strings.TrimPrefix(s, "template: ")
	return goNoise().ReplaceAllString(s, "")
}

// goNoise is what text/template says that means nothing to the person:
// "executing "name" " before a failed action, which names the template a
// second time, and the Go type of a field it could not find.
var goNoise = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`executing "[^"]*" | in type taskprompt\.\w+`) })
