package web

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strconv"
	"sync"

	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/spf13/afero"
	"github.com/yuin/goldmark"
	highlighting "github.com/yuin/goldmark-highlighting/v2"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/util"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/report"
	"github.com/ralph-dev/ralph/scripts/screen/view"
)

// pages are the html/template pages: every value is escaped for where
// it stands, so a model's `<script>` in a line, a file name or a command
// is text. They are parsed on first use, not at every start of ralph
// (docs/development.md, "Start-up budget"), which parsing them in
// package init cost (~0.5 ms).
var pages lazyPages

// lazyPages parses the pages the first time one is executed.
type lazyPages struct{}

var parsedPages = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("pages").Funcs(pageFuncs).ParseFS(assets, "assets/*.html"))
})

// pageFuncs give the pages people's words from the one place ralph keeps
// them: a status as eventwords says it ("waiting for your answer", "in
// progress"), never the enum session.json holds, and a count with its
// noun as text.Counted makes it ("1 turn").
var pageFuncs = template.FuncMap{
	"status":     eventwords.Status,
	"taskStatus": func(state any) string { return eventwords.TaskStatus(fmt.Sprint(state)) },
	"counted":    text.Counted,
	"plural":     text.Plural,
}

// ExecuteTemplate executes the page or template name with data into w.
func (lazyPages) ExecuteTemplate(w io.Writer, name string, data any) error {
	return parsedPages().ExecuteTemplate(w, name, data)
}

// markdown renders answers inert: goldmark's defaults leave raw HTML out
// (not passed through), and safeLinks keeps links to the web only and
// shows no images (links.go). Fenced code
// is highlighted by chroma, the highlighter ralph already links for the
// terminal (glamour's), with CSS classes rather than style attributes:
// the pages' Content-Security-Policy refuses inline styles, and
// style.css colours the classes for light and dark. A language chroma
// does not know is left plain, escaped as goldmark escapes it. It is made
// on first use, not at every start of ralph (docs/development.md,
// "Start-up budget").
var markdown = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(goldmark.WithExtensions(highlighting.NewHighlighting(
		highlighting.WithFormatOptions(chromahtml.WithClasses(true)),
	)), goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(safeLinks{}, 1000))))
})

// running is whether session id of the project at root is being worked
// now, as ralph logs --follow decides it.
var running = report.SessionRunning

// idleSessions are a project's sessions a chat keeps open at its prompt
// (control.IdleSessions); a variable for the tests.
var idleSessions = control.IdleSessions

// row is one event as the session page shows it.
type row struct {
	ID int `json:"id"`
	// Type is the event's type, for the page's scripts (steer.js,
	// panels.js) that follow more than the line.
	Type  event.Type    `json:"type"`
	Text  string        `json:"text,omitempty"`
	Class string        `json:"class"`
	HTML  template.HTML `json:"html,omitempty"`
}

// eventRow is ev as a page shows it: the line ralph watch prints, or, for
// an answer, its markdown as HTML. ok is false for an event no face shows.
func eventRow(id int, ev event.Event) (row, bool) {
	if ev.Type == event.Assistant && ev.Text != "" {
		var b bytes.Buffer
		if err := markdown().Convert([]byte(text.StripControls(ev.Text)), &b); err == nil {
			return row{ID: id, Type: ev.Type, Class: "answer", HTML: template.HTML(b.String())}, true //nolint:gosec // goldmark without raw HTML, see markdown
		}
	}
	if q := ev.Question; ev.Type == event.Question && q != nil && q.Plain != "" {
		// The log names no keys a page does not take ([y]es): the
		// question as its buttons ask it.
		plain := *q
		plain.Text = q.Plain
		ev.Question = &plain
	}
	l, ok := eventwords.EventLine(ev)
	if !ok {
		return row{}, false
	}
	class := "note"
	switch l.Style {
	case eventwords.StyleError:
		class = "error"
	case eventwords.StylePrompt:
		class = "prompt"
	}
	return row{ID: id, Type: ev.Type, Text: l.String(), Class: class}, true
}

// rower makes a session's rows from its events in order, with the
// prompts of records older than the user_message that carries them
// (view.Prompts) in their place.
type rower struct{ prompts view.Prompts }

// rows are the rows of event n: its prompt, in an older record, and its
// own line.
func (r *rower) rows(n int, ev event.Event) []row {
	var out []row
	if p, ok := r.prompts.Next(ev); ok {
		if x, ok := eventRow(n, p); ok {
			out = append(out, x)
		}
	}
	if x, ok := eventRow(n, ev); ok {
		out = append(out, x)
	}
	return out
}

// pass takes event n in as rows does, without making its rows: for the
// events before a feed's first follower, who makes their rows itself.
func (r *rower) pass(ev event.Event) { r.prompts.Next(ev) }

// end is the row of the prompt an older record's last session_started
// carried, once the records are known to end there.
func (r *rower) end(n int) []row {
	if p, ok := r.prompts.Flush(); ok {
		if x, ok := eventRow(n, p); ok {
			return []row{x}
		}
	}
	return nil
}

// sessionEvents reads a session's events from its records, numbered from
// 1 in the order they were written; the numbers are the SSE event ids.
func sessionEvents(fs afero.Fs, root, id string, fn func(n int, ev event.Event)) (int, error) {
	n := 0
	_, err := view.ReplayEvents(fs, memory.LogPath(root, id, memory.EventsLog), 0, -1, func(ev event.Event) {
		n++
		fn(n, ev)
	})
	return n, err
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	s.render(w, "index.html", map[string]any{"Sessions": s.list()})
}

func (s *Server) session(w http.ResponseWriter, r *http.Request) {
	ref, ok := s.find(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	var rows []row
	var evs []event.Event
	var rw rower
	last, err := sessionEvents(s.o.Fs, ref.Project, ref.ID, func(n int, ev event.Event) {
		evs = append(evs, ev)
		rows = append(rows, rw.rows(n, ev)...)
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if !ref.Live {
		// A live run writes the prompt right after its start.
		rows = append(rows, rw.end(last)...)
	}
	data := map[string]any{"S": ref, "Rows": rows, "Last": strconv.Itoa(last), "Reply": r.URL.Query().Get("reply")}
	s.addSteer(data, ref)
	s.addPanels(data, ref, evs)
	s.addFleet(data, ref)
	s.render(w, "session.html", data)
}

func (s *Server) render(w http.ResponseWriter, name string, data any) {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}
