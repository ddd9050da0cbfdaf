package report

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// decisionsFixture is the task run's record with its decisions: a routine
// pick, a child's record_decision, a retry, a person's approval, a
// breaker transition, and a hostile decision text.
func decisionsFixture(t *testing.T, picks int) afero.Fs {
	t.Helper()
	fs := afero.NewMemMapFs()
	fixtureRun(t, fs)
	s, _, err := memory.OpenSession(fs, root, idRun)
	must(t, err)
	defer s.Close()
	conf := 0.7
	decs := []memory.DecisionRecord{
		{Time: at(100), Kind: "task_picked", Task: "t1", Detail: "t1 (Set up the module), attempt 1", Reason: "the only ready task"},
		{Time: at(101), Kind: "agent_decision", Task: "t1", Agent: "a1", By: memory.DecidedByAgent, Detail: "use a map, not a slice",
			Reason: "lookups by id dominate", Confidence: &conf, Alternatives: []string{"a sorted slice", "a btree"}},
		{Time: at(103), Kind: "task_retry", Task: "t2", Detail: "t2 attempt 1 failed; it is tried again in 2s, told what went wrong",
			Reason: "verification failed: FAIL a_test.go:12; --on-error retry allows 2 retries and this is retry 1"},
		{Time: at(103), Kind: "approval", By: memory.DecidedByPerson, Detail: "allowed to run `make build` this once",
			Reason: "the person answered yes when asked; no remembered rule allowed `make build`"},
		{Time: at(104), Kind: "breaker_open", Detail: "closed → open: no task starts until 00:50", Reason: "3 attempts in a row completed no task"},
		{Time: at(105), Kind: "agent_decision", Task: "t3", Agent: "a2", By: memory.DecidedByAgent, Detail: "# heading <script>\x1b[2J",
			Reason: "because\nof lines"},
	}
	for i := range picks {
		decs = append(decs, memory.DecisionRecord{Time: at(106), Kind: "task_picked", Task: "t4", Detail: fmt.Sprintf("pick %d", i), Reason: "the only ready task"})
	}
	for _, d := range decs {
		must(t, s.AppendLog(memory.DecisionsLog, d))
	}
	return fs
}

// TestAnalyzeShowsDecisions: ralph analyze counts decisions by kind and
// by who made them, and lists the notable ones with reason, confidence
// and alternatives, leaving the routine task picks out.
func TestAnalyzeShowsDecisions(t *testing.T) {
	fs := decisionsFixture(t, 0)
	a, err := Analyze(fs, root, idRun)
	must(t, err)
	d := a.Decisions
	if d.Total != 6 || d.ByKind["agent_decision"] != 2 || d.ByPerson != 1 || d.ByAgent != 2 || len(d.Notable) != 5 {
		t.Fatalf("decision stats = %+v", d)
	}
	txt := a.Text()
	for _, want := range []string{
		"decisions      6: agent_decision 2, approval 1, breaker_open 1, task_picked 1, task_retry 1 (1 by the person, 2 by agents)\n",
		"agent_decision (t1, by agent a1): use a map, not a slice\n",
		"      why: lookups by id dominate\n",
		"      confidence 0.7; alternatives: a sorted slice; a btree\n",
		"task_retry (t2): t2 attempt 1 failed",
		"      why: verification failed: FAIL a_test.go:12; --on-error retry allows 2 retries and this is retry 1\n",
		"approval (by the person): allowed to run `make build` this once\n",
		"breaker_open: closed → open",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("analyze text lacks %q:\n%s", want, txt)
		}
	}
	if strings.Contains(txt, "the only ready task") {
		t.Errorf("analyze lists a routine pick:\n%s", txt)
	}
	b, err := json.Marshal(a)
	must(t, err)
	if !strings.Contains(string(b), `"decisions":{"total":6,`) || !strings.Contains(string(b), `"confidence":0.7,"alternatives":["a sorted slice","a btree"]`) {
		t.Errorf("analyze JSON: %s", b)
	}
}

// TestReportShowsDecisions: the markdown and HTML reports give every
// decision its reason, confidence and alternatives; a long list leaves
// the routine picks out and says so; the model's words stay text.
func TestReportShowsDecisions(t *testing.T) {
	fs := decisionsFixture(t, 0)
	md, _, err := Report(fs, root, idRun, at(200))
	must(t, err)
	for _, want := range []string{
		"- `00:49:48` **task_picked** (`t1`): t1 (Set up the module), attempt 1\n  - why: the only ready task\n",
		"- `00:49:49` **agent_decision** (`t1`, by agent a1): use a map, not a slice\n  - why: lookups by id dominate\n  - confidence 0.7; alternatives: a sorted slice; a btree\n",
		"**approval** (by the person): allowed to run `make build` this once\n  - why: the person answered yes when asked;",
		"**agent_decision** (`t3`, by agent a2): # heading &lt;script>",
		"  - why: because of lines\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	path, err := HTMLReport(fs, root, idRun, "", at(200))
	must(t, err)
	page, err := afero.ReadFile(fs, path)
	must(t, err)
	for _, want := range []string{
		`<td>agent_decision</td><td>t1 by agent a1</td><td>use a map, not a slice<br><span class="why">why: lookups by id dominate</span><br><span class="why">confidence 0.7; alternatives: a sorted slice; a btree</span></td>`,
		`# heading &lt;script&gt;`,
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(string(page), "<script>") || strings.Contains(string(page), "\x1b") {
		t.Error("report.html passed the model's markup or escape through")
	}

	fs = decisionsFixture(t, recordsLimit)
	md, _, err = Report(fs, root, idRun, at(200))
	must(t, err)
	if strings.Contains(md, "pick 3") || !strings.Contains(md, "51 routine task picks are left out here") ||
		!strings.Contains(md, "**breaker_open**") {
		t.Errorf("a long list:\n%s", md)
	}
}
