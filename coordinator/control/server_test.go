package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/coordinator/remote"
)

// fakeTarget records what the socket asked of it.
type fakeTarget struct {
	mu  sync.Mutex
	got []string
}

func (f *fakeTarget) add(s string) Reply {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, s)
	return Done("did %s", s)
}

func (f *fakeTarget) Stop(string) Reply { return f.add("stop") }
func (f *fakeTarget) Say(text string, urgent bool) Reply {
	return f.add(fmt.Sprintf("say %q urgent=%v", text, urgent))
}
func (f *fakeTarget) Pause() Reply    { return f.add("pause") }
func (f *fakeTarget) Continue() Reply { return f.add("continue") }

func (f *fakeTarget) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}

// project makes a project directory with .ralph/ under dir.
func project(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startServer serves a project at root with a broker whose events a
// synchronous recorder writes to events.jsonl, as a session records them.
func startServer(t *testing.T, root string) (*Server, *fakeTarget, *pubsub.Broker[event.Event]) {
	t.Helper()
	events := pubsub.NewBroker[event.Event]()
	path := filepath.Join(root, ".ralph", "events.jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	stopRec := events.Subscribe(context.Background(), func(ev event.Event) {
		if ev.Type == event.TextDelta {
			return
		}
		b, _ := json.Marshal(ev)
		_, _ = f.Write(append(b, '\n'))
	}, pubsub.Sync())
	t.Cleanup(stopRec)
	target := &fakeTarget{}
	srv, err := Start(Options{Root: root, Session: func() (string, string) { return "s1", path }, Mode: "run", Target: target, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, target, events
}

func TestRequestsReachTheTarget(t *testing.T) {
	root := project(t, t.TempDir())
	srv, target, _ := startServer(t, root)
	fi, err := os.Stat(srv.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the socket is %v, want an owner-only socket", fi.Mode())
	}
	ctx := context.Background()
	for _, req := range []Request{{Op: remote.OpStop}, {Op: remote.OpSay, Text: "hello"}, {Op: remote.OpSay, Text: "now", Urgent: true}, {Op: remote.OpPause}, {Op: remote.OpContinue}} {
		r, err := Call(ctx, Here(root), req)
		if err != nil || !r.OK || !strings.HasPrefix(r.Text, "did ") {
			t.Fatalf("%+v: %+v, %v", req, r, err)
		}
	}
	want := []string{"stop", `say "hello" urgent=false`, `say "now" urgent=true`, "pause", "continue"}
	if got := target.calls(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("the target got %q, want %q", got, want)
	}
	if r, err := Call(ctx, Here(root), Request{Op: "dance"}); err != nil || r.OK || !r.Bad {
		t.Fatalf("an unknown request: %+v, %v", r, err)
	}
	if r, err := Call(ctx, Here(root), Request{Op: remote.OpAnswer, Text: "y"}); err != nil || r.OK {
		t.Fatalf("an answer without questions: %+v, %v", r, err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(srv.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the socket outlived its server: %v", err)
	}
	if _, err := Call(ctx, Here(root), Request{Op: remote.OpStop}); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("a call after Close: %v, want ErrNotRunning", err)
	}
}

// TestStaleSocketIsReplaced: a socket file a killed ralph left behind
// refuses connections (nothing listens) and is replaced by the next
// server.
func TestStaleSocketIsReplaced(t *testing.T) {
	root := project(t, t.TempDir())
	l, err := net.Listen("unix", mySocket(root))
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if _, err := Call(context.Background(), Here(root), Request{Op: remote.OpStop}); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("a stale socket: %v, want ErrNotRunning", err)
	}
	_, target, _ := startServer(t, root)
	if r, err := Call(context.Background(), Here(root), Request{Op: remote.OpStop}); err != nil || !r.OK {
		t.Fatalf("after the stale socket was replaced: %+v, %v", r, err)
	}
	if len(target.calls()) != 1 {
		t.Fatal("the stop did not arrive")
	}
}

// TestDeepProjectPath: a project deeper than a socket address holds
// still gets its socket, reached through the directory's descriptor.
func TestDeepProjectPath(t *testing.T) {
	root := t.TempDir()
	// The socket lives in ralph's state directory, not the project: a
	// deep one makes the path long.
	state := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("RALPH_HOME", state)
	for len(mySocket(root)) <= 200 {
		state = filepath.Join(state, strings.Repeat("deep", 10))
		t.Setenv("RALPH_HOME", state)
	}
	project(t, root)
	_, target, _ := startServer(t, root)
	if r, err := Call(context.Background(), Here(root), Request{Op: remote.OpPause}); err != nil || !r.OK {
		t.Fatalf("a %d-byte socket path: %+v, %v", len(mySocket(root)), r, err)
	}
	if len(target.calls()) != 1 {
		t.Fatal("the pause did not arrive")
	}
}

// TestWatchMissesNothing: events published from several goroutines
// before, during and after a watch joins; the events file up to the
// Hello's offset followed by the watched events is the whole file.
func TestWatchMissesNothing(t *testing.T) {
	for round := 0; round < 10; round++ {
		root := project(t, t.TempDir())
		srv, _, events := startServer(t, root)
		var wg sync.WaitGroup
		publish := func(g, n int) {
			defer wg.Done()
			for i := range n {
				events.Publish(event.Event{Type: event.ToolCall, AgentID: fmt.Sprint(g), Turn: i + 1})
				events.PublishLossy(event.Event{Type: event.TextDelta, Text: "x"})
			}
		}
		wg.Add(3)
		for g := range 3 {
			go publish(g, 300)
		}
		time.Sleep(time.Duration(round) * time.Millisecond)
		st, err := Watch(context.Background(), Here(root))
		if err != nil {
			t.Fatal(err)
		}
		var got []event.Event
		done := make(chan error, 1)
		go func() {
			for {
				ev, err := st.Next()
				if err == io.EOF {
					done <- nil
					return
				}
				if err != nil {
					done <- err
					return
				}
				if ev.Type != event.TextDelta {
					got = append(got, ev)
				}
			}
		}()
		wg.Wait()
		srv.Close() // every watcher gets what was published, then the end
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(root, ".ralph", "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		before := strings.Count(string(data[:st.Hello.Offset]), "\n")
		all := strings.Split(strings.TrimSpace(string(data)), "\n")
		if before+len(got) != len(all) {
			t.Fatalf("round %d: %d events before the join + %d watched, the file has %d", round, before, len(got), len(all))
		}
		for i, ev := range got {
			b, _ := json.Marshal(ev)
			if string(b) != all[before+i] {
				t.Fatalf("round %d: watched event %d is\n%s\nthe file has\n%s", round, i, b, all[before+i])
			}
		}
		if st.Hello.SessionID != "s1" || st.Hello.PID != os.Getpid() {
			t.Fatalf("hello = %+v", st.Hello)
		}
	}
}

// TestControlClientHelper is the client of TestAnotherUserIsRefused, run
// as another user; it prints what became of its stop.
func TestControlClientHelper(t *testing.T) {
	root := os.Getenv("RALPH_CONTROL_CLIENT")
	if root == "" {
		t.Skip("run by TestAnotherUserIsRefused")
	}
	r, err := Call(context.Background(), Here(root), Request{Op: remote.OpStop})
	switch {
	case errors.Is(err, ErrRefused):
		fmt.Println("refused:", err)
	case err != nil:
		fmt.Println("error:", err)
	default:
		fmt.Printf("delivered: %+v\n", r)
	}
}

// TestSlowRequestDoesNotHoldOthers: a client that connects and sends
// nothing does not keep another from being served.
func TestSlowRequestDoesNotHoldOthers(t *testing.T) {
	root := project(t, t.TempDir())
	startServer(t, root)
	idle, err := net.Dial("unix", mySocket(root))
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	start := time.Now()
	if r, err := Call(context.Background(), Here(root), Request{Op: remote.OpPause}); err != nil || !r.OK {
		t.Fatalf("%+v, %v", r, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a request took %s beside an idle connection", d)
	}
	// The idle one is answered too, once it speaks.
	fmt.Fprintln(idle, `{"op":"continue"}`)
	line, err := bufio.NewReader(idle).ReadString('\n')
	if err != nil || !strings.Contains(line, `"ok":true`) {
		t.Fatalf("%q, %v", line, err)
	}
}

// TestBoundAhead: a socket bound before its server starts holds a request
// made meanwhile until the server answers it; one given up without a
// server leaves no socket file behind.
func TestBoundAhead(t *testing.T) {
	root := project(t, t.TempDir())
	b, err := Bind(root)
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan Reply, 1)
	go func() {
		r, _ := Call(context.Background(), Here(root), Request{Op: remote.OpStop})
		answered <- r
	}()
	time.Sleep(50 * time.Millisecond) // the request waits in the backlog
	target := &fakeTarget{}
	srv, err := Start(Options{Root: root, Session: func() (string, string) { return "s1", "" }, Mode: "oneshot", Target: target, Events: pubsub.NewBroker[event.Event](), Listener: b})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-answered:
		if !r.OK {
			t.Fatalf("reply %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request made before the server started got no answer")
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mySocket(root)); !os.IsNotExist(err) {
		t.Fatalf("socket left after Close: %v", err)
	}

	b, err = Bind(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mySocket(root)); !os.IsNotExist(err) {
		t.Fatalf("socket left after giving it up: %v", err)
	}
}

// mySocket is where this process serves the control socket of root.
func mySocket(root string) string { return SocketPathIn(root, os.Getpid(), os.Getenv) }

// TestWatchTakesABurstLargerThanItHolds: a burst of events far larger
// than a watch holds before it writes (maxHeld), published while the
// client reads nothing, reaches the client whole and in order once it
// reads.
func TestWatchTakesABurstLargerThanItHolds(t *testing.T) {
	root := project(t, t.TempDir())
	srv, _, events := startServer(t, root)
	st, err := Watch(context.Background(), Here(root))
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("a line of a long answer\n", 200) // ~4.8 kB an event
	const n = 400                                           // ~1.9 MB, over seven times maxHeld
	published := make(chan struct{})
	go func() {
		defer close(published)
		for i := range n {
			events.Publish(event.Event{Type: event.Assistant, Text: big, Turn: i + 1})
		}
	}()
	<-published // nothing was read while the burst was published
	go srv.Close()
	for i := range n {
		ev, err := st.Next()
		if err != nil {
			t.Fatalf("event %d of %d: %v", i+1, n, err)
		}
		if ev.Turn != i+1 || ev.Text != big {
			t.Fatalf("event %d of %d is turn %d with %d bytes of text", i+1, n, ev.Turn, len(ev.Text))
		}
	}
	if _, err := st.Next(); err != io.EOF {
		t.Fatalf("after the burst: %v, want the end", err)
	}
}
