package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/e2e/browser"
)

// fleetRow is one task of the fleet section as the page shows it.
type fleetRow struct{ Task, State, Worker string }

// fleetRows reads the page's fleet table.
func fleetRows(t *testing.T, page *browser.Page) map[string]fleetRow {
	t.Helper()
	var s string
	page.EvalInto(`JSON.stringify([...document.querySelectorAll('#fleet tr[data-task]')].map(r => ({Task: r.dataset.task, State: r.dataset.state, Worker: r.dataset.worker})))`, &s)
	var rows []fleetRow
	if err := json.Unmarshal([]byte(s), &rows); err != nil {
		t.Fatal(err)
	}
	out := map[string]fleetRow{}
	for _, r := range rows {
		out[r.Task] = r
	}
	return out
}

// endRun kills what follows the run on Temporal of project: a ralph
// killed by the test's cleanup leaves its ralph-temporal following a run
// whose attempts wait, holding ralph's output open.
func endRun(project string) {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte("ralph-temporal")) || !bytes.Contains(b, []byte(project)) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			if proc, err := os.FindProcess(pid); err == nil {
				_ = proc.Kill()
			}
		}
	}
}

// TestTemporalServeShowsTheFleet: a ralph run --engine temporal of three
// attempts at once on two workers that take one attempt each (--parallel
// 1); its page in ralph serve, open in Chromium, shows the tasks with the
// worker (host:pid) holding each, as Temporal says, the one waiting for a
// worker, and follows the run without a reload: a task released by the
// test turns done on the page, and the waiting one shows on the worker
// that freed up.
func TestTemporalServeShowsTheFleet(t *testing.T) {
	t.Parallel()
	needChromium(t)
	addr := startDevServer(t)
	titles := []string{"write w1.txt one", "write w2.txt two", "write w3.txt three", "write w4.txt <i>four</i>"}
	project, _ := temporalProject(t, titles...)
	// Each task's agent waits for the test before it writes its file.
	release := map[string]chan struct{}{}
	for i := range titles {
		release[fmt.Sprintf("t%d", i+1)] = make(chan struct{})
	}
	var releaseMu sync.Mutex
	let := func(ids ...string) {
		releaseMu.Lock()
		defer releaseMu.Unlock()
		for _, id := range ids {
			select {
			case <-release[id]:
			default:
				close(release[id])
			}
		}
	}
	srv := fileTaskModel(t, func(id string) {
		if c, ok := release[id]; ok {
			<-c
		}
	})
	t.Cleanup(func() { let("t1", "t2", "t3", "t4") })
	env := append(cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), personGit...)
	workers := []*tworker{startWorker(t, addr, env, "--parallel", "1"), startWorker(t, addr, env, "--parallel", "1")}
	run, out, errb := startRalph(t, project, env, "run", "--engine", "temporal", "--address", addr, "--parallel", "3", "-y")
	t.Cleanup(func() { endRun(project) })
	var id string
	// The first event comes after the workflow has read the task file
	// through a worker's clone of the remote: minutes on a loaded machine.
	waitFor(t, "the run on Temporal's session", 4*time.Minute, func() bool {
		// Not the dot-name it is built under.
		m, _ := filepath.Glob(filepath.Join(project, ".ralph", "sessions", "[^.]*"))
		if len(m) == 1 {
			id = filepath.Base(m[0])
		}
		return id != ""
	})
	page := browser.Open(t, serveURL(t, project, env))
	page.WaitText("body", id, 20*time.Second)
	page = page.OpenTab(page.Eval(`document.querySelector('a[href$="/` + id + `"]').href`).(string))
	page.WaitJS(`!!document.getElementById('fleet')`, 30*time.Second)
	// A reload would lose this.
	page.Eval(`window.__sameDocument = true`)

	// Three attempts held on two workers: both work.
	page.WaitJS(`(() => { const r = [...document.querySelectorAll('#fleet tr[data-state="in_progress"]')];
		return r.length == 3 && new Set(r.map(r => r.dataset.worker).filter(w => w)).size == 2 })()`, 3*time.Minute)
	pids := map[string]bool{}
	for _, w := range workers {
		pids[fmt.Sprint(w.cmd.Process.Pid)] = true
	}
	rows := fleetRows(t, page)
	held := map[string][]string{}
	for _, task := range []string{"t1", "t2", "t3"} {
		r := rows[task]
		if r.Worker == "" {
			continue // waits for a worker
		}
		_, pid, _ := strings.Cut(r.Worker, ":")
		if !pids[pid] {
			t.Fatalf("%s is held by %q, not one of the workers %v: %+v", task, r.Worker, pids, rows)
		}
		held[r.Worker] = append(held[r.Worker], task)
	}
	if r := rows["t4"]; r.State != "open" || r.Worker != "" {
		t.Errorf("t4 before any task is done: %+v", r)
	}

	text := page.Text("#fleet")
	for w, tasks := range held {
		if want := w + ": holds " + strings.Join(tasks, ", "); !strings.Contains(text, want) {
			t.Errorf("the workers' list lacks %q:\n%s", want, text)
		}
	}
	// The task's title is text: its <i> is not an element.
	if !strings.Contains(text, "write w4.txt <i>four</i>") || page.Eval(`document.querySelectorAll('#fleet i').length`).(float64) != 0 {
		t.Errorf("t4's title is not shown as text:\n%s", text)
	}

	// The first task a worker holds is released: the page shows it done
	// by that worker, and every task begun so far on a worker, without a
	// reload.
	first := rows["t1"]
	if first.Worker == "" {
		first = rows["t2"]
	}
	let(first.Task)
	page.WaitJS(`(() => { const d = document.querySelector('#fleet tr[data-task="`+first.Task+`"]');
		return d && d.dataset.state == "done" && [...document.querySelectorAll('#fleet tr[data-task="t1"], #fleet tr[data-task="t2"], #fleet tr[data-task="t3"]')].every(r => r.dataset.worker) })()`, 2*time.Minute)
	rows = fleetRows(t, page)
	if rows[first.Task].Worker != first.Worker {
		// Seen once in a full suite at load 15 (124 s), never alone nor
		// beside 12 busy loops: what the run and both workers said is
		// what tells a retry on the other worker from a wrong display.
		t.Errorf("%s is shown done by %q; %q held it\nthe run's events of %s:\n%s\nthe workers said:\n%s\n---\n%s",
			first.Task, rows[first.Task].Worker, first.Worker, first.Task,
			taskEvents(filepath.Join(project, ".ralph", "sessions", id, "events.jsonl"), first.Task),
			lastLines(workers[0].out.String(), 30), lastLines(workers[1].out.String(), 30))
	}
	for _, r := range rows {
		if _, pid, _ := strings.Cut(r.Worker, ":"); r.Worker != "" && !pids[pid] {
			t.Errorf("%s is held by %q, not a worker", r.Task, r.Worker)
		}
	}
	if !strings.Contains(page.Text("#fleet"), "1 of 4 tasks done") {
		t.Errorf("the progress after t1:\n%s", page.Text("#fleet"))
	}

	let("t1", "t2", "t3")
	page.WaitJS(`[...document.querySelectorAll('#fleet tr[data-state="done"]')].length == 3`, 2*time.Minute)
	if !strings.Contains(page.Text("#fleet"), "3 of 4 tasks done") {
		t.Errorf("the progress after t3:\n%s", page.Text("#fleet"))
	}
	if page.Eval(`window.__sameDocument === true`) != true {
		t.Error("the page was reloaded")
	}
	let("t4")
	if code, _ := exitCode(t, run, 2*time.Minute); code != 0 {
		t.Fatalf("the run exited %d\n%s\n%s", code, out.String(), errb.String())
	}
	if errs := page.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	// The run is a finished session of the project, as a local run is.
	st := readFileT(t, filepath.Join(project, ".ralph", "sessions", id, "session.json"))
	if !strings.Contains(st, `"status": "completed"`) {
		t.Errorf("the run's session after it ended:\n%s", st)
	}
}

// taskEvents is the lines of a session's events file that name task id.
func taskEvents(path, id string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, `"`+id+`"`) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
