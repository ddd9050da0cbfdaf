package taskprompt

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

func retry() Data {
	return Data{Task: Task{ID: "t6", Title: "make the widget count right", Priority: 2, Depends: []string{"t1", "t4"}},
		Notes: "- count must be 42", Goals: "a widget shop", Progress: "## t5 done", Attempt: 2,
		LastError: "the --verify command failed", LastVerify: "noise\nBROKEN: widget count 41", LastSummary: "I changed count.go",
		Dir: "/project", Date: "2026-11-23"}
}

// TestDefaultTellsARetryWhatWentWrong: ralph's own prompt names the task
// first, then tells a retry why the last attempt failed, with the exact
// verify output even when it holds backticks.
func TestDefaultTellsARetryWhatWentWrong(t *testing.T) {
	d := retry()
	d.LastVerify = "```go\nBROKEN: widget count 41\n```"
	p := Default(d)
	for _, want := range []string{
		"Your task (t6 in RALPH_TASKS.md): make the widget count right\n",
		"Notes under the task in RALPH_TASKS.md:\n\n```\n- count must be 42\n```\n",
		"This is attempt 2: earlier attempts failed.",
		"Why it failed:\n\n```\nthe --verify command failed\n```\n",
		"The end of the --verify command's output:\n\n````\n```go\nBROKEN: widget count 41\n```\n````\n",
		"The last words of the agent that worked it:\n\n```\nI changed count.go\n```\n",
		"call record_decision",
		"The latest entries of RALPH_PROGRESS.md",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, p)
		}
	}
	if !strings.HasPrefix(p, "Your task (t6 in RALPH_TASKS.md)") {
		t.Errorf("the prompt does not begin with the task:\n%s", p)
	}
	first := Default(Data{Task: Task{ID: "t1", Title: "x"}, Attempt: 1, LastError: "stale"})
	if strings.Contains(first, "attempt") || strings.Contains(first, "stale") {
		t.Errorf("a first attempt is told about earlier ones:\n%s", first)
	}
	if ext := Default(Data{Task: Task{ID: "t1", Title: "x"}, Attempt: 1, Agent: "claude"}); strings.Contains(ext, "record_decision") {
		t.Errorf("an external agent is told of a tool it does not have:\n%s", ext)
	}
}

// TestTemplateFillsEveryField: every documented field reaches the
// template, join joins a list, and .Default is ralph's own prompt.
func TestTemplateFillsEveryField(t *testing.T) {
	tp, err := Parse("all.tmpl", `{{.Task.ID}}|{{.Task.Title}}|{{.Task.Priority}}|{{join .Task.Depends ","}}|{{.Notes}}|{{.Goals}}|`+
		`{{.Progress}}|{{.Attempt}}|{{.LastError}}|{{.LastVerify}}|{{.LastSummary}}|{{.Branch}}|{{.Dir}}|{{.Date}}|{{.Agent}}|{{len .Default}}`)
	if err != nil {
		t.Fatal(err)
	}
	d := retry()
	d.Branch, d.Agent = "ralph/t6", "exec"
	got, err := tp.Prompt(d)
	if err != nil {
		t.Fatal(err)
	}
	want := "t6|make the widget count right|2|t1,t4|- count must be 42|a widget shop|## t5 done|2|the --verify command failed|" +
		"noise\nBROKEN: widget count 41|I changed count.go|ralph/t6|/project|2026-11-23|exec|"
	if !strings.HasPrefix(got, want) || strings.HasSuffix(got, "|0") {
		t.Errorf("filled in:\n%q\nwant it to begin\n%q", got, want)
	}
	var nilTemplate *Template
	if p, err := nilTemplate.Prompt(d); err != nil || p != Default(d) {
		t.Errorf("no template: %q, %v", p, err)
	}
	// Every field docs/run.md names is one the template sees.
	for _, f := range strings.FieldsFunc(strings.TrimSuffix(Fields, "."), func(r rune) bool { return r == ',' || r == ' ' }) {
		if !strings.HasPrefix(f, ".") {
			continue // "and"
		}
		if _, err := Parse("f.tmpl", "x{{"+f+"}}"); err != nil {
			t.Errorf("Fields names %s, which a template cannot use: %v", f, err)
		}
	}
}

// TestBadTemplates: each is one sentence naming the file and, where it
// has one, the line, and is ErrBad.
func TestBadTemplates(t *testing.T) {
	fs := afero.NewMemMapFs()
	for name, c := range map[string]struct{ text, want string }{
		"field.tmpl":  {"Do {{.Task.Titel}}.", "the prompt template field.tmpl:1:10: at <.Task.Titel>: can't evaluate field Titel (the fields are .Task.ID,"},
		"syntax.tmpl": {"Do {{.Task.Title}\n", `the prompt template syntax.tmpl:1: bad character U+007D '}'`},
		"func.tmpl":   {"{{upper .Task.Title}}", `the prompt template func.tmpl:1: function "upper" not defined`},
		"empty.tmpl":  {"  \n", "the prompt template empty.tmpl is empty"},
		"blank.tmpl":  {"{{if .Branch}}{{.Branch}}{{end}}{{/* nothing else */}}", ""},
		"nothing.tmpl": {"{{if eq .Task.ID \"none\"}}x{{end}}\n",
			"the prompt template nothing.tmpl fills in to nothing; it must tell the agent its task"},
	} {
		if err := afero.WriteFile(fs, name, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(fs, name)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if !errors.Is(err, ErrBad) || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") ||
			strings.Contains(err.Error(), "taskprompt.") {
			t.Errorf("%s: %v\nwant it to begin %q", name, err, c.want)
		}
	}
	if _, err := Load(fs, "missing.tmpl"); !errors.Is(err, ErrBad) || err.Error() != "the prompt template missing.tmpl does not exist" {
		t.Errorf("missing: %v", err)
	}
}

// TestRalphTUITemplate: docs/run.md's translation of ralph-tui's default
// template parses, fills in, and is the one docs/run.md shows.
func TestRalphTUITemplate(t *testing.T) {
	tp, err := Load(afero.NewOsFs(), filepath.Join("testdata", "ralph-tui.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := tp.Prompt(retry())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**ID**: t6\n**Title**: make the widget count right\n", "## Description\n- count must be 42\n",
		"**Dependencies**: t1, t4\n", "## Attempt 2: what went wrong last time\nthe --verify command failed\nnoise\nBROKEN: widget count 41\n",
		"call complete_task with the id t6"} {
		if !strings.Contains(got, want) {
			t.Errorf("ralph-tui template lacks %q:\n%s", want, got)
		}
	}
	src, err := os.ReadFile(filepath.Join("testdata", "ralph-tui.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "run.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```gotemplate\n"+string(src)+"```\n") {
		t.Error("docs/run.md does not show testdata/ralph-tui.tmpl as it is")
	}
}

// An external agent has no complete_task: its prompt says how it finishes
// in the caller's words, once, and never names the tool it lacks.
func TestDefaultFinishForAnExternalAgent(t *testing.T) {
	d := Data{Task: Task{ID: "t1", Title: "add a flag"}, Attempt: 1}
	if got := Default(d); !strings.Contains(got, "call complete_task") {
		t.Errorf("ralph's own agent is not told about complete_task:\n%s", got)
	}
	d.Agent, d.Finish = "codex", "When it is done, print <promise>COMPLETE</promise>."
	got := Default(d)
	if strings.Contains(got, "complete_task") || strings.Contains(got, "record_decision") {
		t.Errorf("an external agent is told about a tool it does not have:\n%s", got)
	}
	if strings.Count(got, d.Finish) != 1 {
		t.Errorf("the finish instructions are not there once:\n%s", got)
	}
}
