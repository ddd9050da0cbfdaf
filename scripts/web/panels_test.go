package web

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
)

// panelsFixture is a server over one session whose plan, decisions,
// reviews and errors hold what a hostile model would write.
func panelsFixture(t *testing.T) (*Server, sessionRef) {
	t.Helper()
	fs := afero.NewMemMapFs()
	write := func(path, body string) {
		if err := afero.WriteFile(fs, path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	jsonl := func(vs ...any) string {
		var b strings.Builder
		for _, v := range vs {
			line, _ := json.Marshal(v)
			b.Write(line)
			b.WriteByte('\n')
		}
		return b.String()
	}
	write(testRoot+"/"+memory.TasksFile, "# Tasks\n\n"+
		"- [ ] later "+hostile+" <!-- ralph:id=t1 depends=t2 -->\n"+
		"- [ ] first <!-- ralph:id=t2 -->\n"+
		"- [x] done already <!-- ralph:id=t3 -->\n")
	write(memory.LogPath(testRoot, testSession, memory.DecisionsLog), jsonl(
		memory.DecisionRecord{Kind: "task_retry", Task: "t1", Detail: "retry " + hostile, Reason: "because " + hostile},
		memory.DecisionRecord{Kind: "review_finding", Task: "t1", Detail: "finding " + hostile},
	))
	write(memory.LogPath(testRoot, testSession, memory.ErrorsLog), jsonl(
		memory.ErrorRecord{Kind: "tool", ToolName: "run_command", Message: "error " + hostile},
	))
	write(memory.LogPath(testRoot, testSession, memory.EventsLog), jsonl(
		event.Event{Type: event.SessionStarted},
		event.Event{Type: event.AgentSpawned, AgentID: "agent-1", Task: "t2", ToolID: "c1"},
		event.Event{Type: event.LimitWait, Text: "waiting for the rate limit " + hostile, Until: time.Now().Add(time.Minute)},
		event.Event{Type: event.Breaker, State: "open", Text: hostile},
	))
	s, err := New(Options{Addr: "127.0.0.1:7777", Fs: fs, Token: testToken,
		Sessions: func() []memory.RegistryEntry { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return s, sessionRef{Project: testRoot, Key: projectKey(testRoot), ID: testSession, Live: true}
}

// renderPanels is the panels fragment as the server sends it.
func renderPanels(t *testing.T, s *Server, ref sessionRef, p *panelData) string {
	t.Helper()
	data := map[string]any{"S": ref}
	s.putPanels(context.Background(), data, ref, s.records(context.Background(), ref, 0))
	if p != nil {
		data["Panels"] = *p
	}
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, "panels", data); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// assertInert fails when html holds markup a model's string could have
// made live: a script or an image element (whose onerror would run) or a
// javascript: address. Escaped, "onerror=" is text and may stay.
func assertInert(t *testing.T, html string) {
	t.Helper()
	for _, bad := range []string{"<script", "<img", `href="javascript:`, `src="javascript:`} {
		if strings.Contains(html, bad) {
			t.Errorf("the panels hold %q:\n%s", bad, html)
		}
	}
}

// TestPanelsRenderModelStringsAsText: a task title, a decision and its
// reason, a review's finding, an error, a limit and the breaker's text,
// each holding a <script>, an <img onerror> and a javascript: link, are
// escaped text in the panels.
func TestPanelsRenderModelStringsAsText(t *testing.T) {
	s, ref := panelsFixture(t)
	html := renderPanels(t, s, ref, nil)
	assertInert(t, html)
	for _, want := range []string{
		"later &lt;script&gt;alert(1)&lt;/script&gt;", "retry &lt;script&gt;", "because &lt;script&gt;",
		"finding &lt;script&gt;", "error &lt;script&gt;", "&lt;img src=x onerror=alert(2)&gt;", "waiting for the rate limit &lt;script&gt;",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the panels do not hold %q:\n%s", want, html)
		}
	}
	if !strings.Contains(html, `class="panel reviews"`) || !strings.Contains(html, `class="panel decisions"`) ||
		!strings.Contains(html, `class="panel agents"`) || !strings.Contains(html, `class="panel breaker"`) {
		t.Errorf("a panel is missing:\n%s", html)
	}
}

// TestPanelsTaskOrderIsTheGraphs: the open tasks are listed in the order
// ralph run takes them (t2 before t1, which depends on it), the done one
// after them.
func TestPanelsTaskOrderIsTheGraphs(t *testing.T) {
	s, ref := panelsFixture(t)
	p := s.panelsOf(context.Background(), ref, s.records(context.Background(), ref, 0))
	var got []string
	for _, r := range p.Order {
		got = append(got, r.ID+":"+r.Status)
	}
	if strings.Join(got, " ") != "t2:open t1:open" {
		t.Errorf("order %q, want t2 then t1", got)
	}
	if len(p.Rest) != 1 || p.Rest[0].ID != "t3" || p.Rest[0].Status != "done" {
		t.Errorf("rest %+v, want t3 done", p.Rest)
	}
	if len(p.Agents) != 1 || p.Agents[0].State != "running" {
		t.Errorf("agents %+v, want one running", p.Agents)
	}
}

// TestPanelsDiffIsTextAndClassed: a checkpoint whose file name and lines
// hold markup shows them as text, each line classed for its colour, and
// the pre's text is the patch unchanged.
func TestPanelsDiffIsTextAndClassed(t *testing.T) {
	s, ref := panelsFixture(t)
	name := `<script>alert(4)</script><img src=x onerror=alert(5)>.go`
	patch := "diff --git a/" + name + " b/" + name + "\n@@ -1 +1 @@\n-old " + hostile + "\n+new\n ctx\n"
	p := s.panelsOf(context.Background(), ref, s.records(context.Background(), ref, 0))
	p.Checkpoints = []checkpoint{{What: "request 1", Command: "ralph diff s1 --request 1", Files: []string{name}, Lines: diffLines(patch)}}
	html := renderPanels(t, s, ref, &p)
	assertInert(t, html)
	for _, want := range []string{`<span class="del">-old &lt;script&gt;`, `<span class="add">&#43;new`, `<span class="hunk">@@`, `<span class="head">diff --git`} {
		if !strings.Contains(html, want) {
			t.Errorf("the diff does not hold %q:\n%s", want, html)
		}
	}
	var joined strings.Builder
	for _, l := range diffLines(patch) {
		joined.WriteString(l.Text)
	}
	if joined.String() != patch {
		t.Errorf("the lines read together are %q, not the patch", joined.String())
	}
}

// TestAnswerCodeIsHighlightedWithClasses: fenced code in an answer is
// highlighted by chroma with classes, never a style attribute (the CSP
// refuses inline styles), and what the code holds stays text.
func TestAnswerCodeIsHighlightedWithClasses(t *testing.T) {
	// The second block asks for a highlighted line and line numbers in a
	// table, which chroma styles inline unless it uses classes.
	md := "```go\nfunc main() { println(\"<script>alert(1)</script>\") }\n```\n\n" +
		"```python {hl_lines=[1] linenos=table}\nprint('<script>')\nx = 1\n```\n\n" +
		"```nosuchlanguage\n<img src=x onerror=alert(2)>\n```\n\n" + hostile
	x, ok := eventRow(1, event.Event{Type: event.Assistant, Text: md})
	if !ok {
		t.Fatal("no row")
	}
	html := string(x.HTML)
	if !strings.Contains(html, `<pre class="chroma">`) || !strings.Contains(html, `<span class="kd">func</span>`) ||
		!strings.Contains(html, `class="line hl"`) || !strings.Contains(html, `class="lntable"`) {
		t.Errorf("the Go code is not highlighted with classes:\n%s", html)
	}
	if strings.Contains(html, "style=") {
		t.Errorf("the answer holds a style attribute, which the CSP refuses:\n%s", html)
	}
	assertInert(t, html)
	if !strings.Contains(html, "&lt;img src=x onerror=alert(2)&gt;") {
		t.Errorf("the code of an unknown language is not escaped text:\n%s", html)
	}
}
