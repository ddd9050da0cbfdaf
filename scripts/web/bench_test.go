package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers/tools"
)

// BenchmarkSessionPage10000 serves the page of a session of 10,000
// events (tool calls, results and answers in turn), the bound
// being 300 ms a page.
func BenchmarkSessionPage10000(b *testing.B) {
	fs := afero.NewMemMapFs()
	var sb strings.Builder
	for i := range 10000 {
		ev := event.Event{Type: event.ToolResult, Output: "ok", ToolName: tools.ToolRunCommand}
		switch i % 3 {
		case 0:
			args, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("go test ./pkg%d", i)})
			ev = event.Event{Type: event.ToolCall, ToolName: tools.ToolRunCommand, ToolArgs: args}
		case 2:
			ev = event.Event{Type: event.Assistant, Text: "## step\n\nThe tests **pass**; see `main.go`.\n\n- one\n- two\n"}
		}
		line, _ := json.Marshal(ev)
		sb.Write(line)
		sb.WriteByte('\n')
	}
	if err := afero.WriteFile(fs, memory.LogPath(testRoot, testSession, memory.EventsLog), []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	s, err := New(Options{Addr: "127.0.0.1:7777", Fs: fs, Token: testToken, Sessions: func() []memory.RegistryEntry {
		return []memory.RegistryEntry{{Root: testRoot, SessionID: testSession, Status: "done", UpdatedAt: time.Now()}}
	}})
	if err != nil {
		b.Fatal(err)
	}
	path := "/s/" + projectKey(testRoot) + "/" + testSession
	start := time.Now()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7777"+path, nil)
		req.AddCookie(&http.Cookie{Name: cookieName, Value: testToken})
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, req)
		if w.Code != http.StatusOK || strings.Count(w.Body.String(), "<li class=") != 10000 {
			b.Fatalf("%d, %d lines", w.Code, strings.Count(w.Body.String(), "<li class="))
		}
	}
	b.ReportMetric(float64(time.Since(start))/float64(time.Millisecond)/float64(b.N), "ms/page")
}
