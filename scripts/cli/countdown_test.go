package cli

import (
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNextMark(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		left, mark time.Duration
		ok         bool
	}{
		{40 * time.Minute, 35 * time.Minute, true},
		{12*time.Minute + 3*time.Second, 10 * time.Minute, true},
		{10 * time.Minute, 9 * time.Minute, true},
		{4*time.Minute + 59*time.Second, 4 * time.Minute, true},
		{time.Minute, 10 * time.Second, true},
		{50 * time.Second, 10 * time.Second, true},
		{10 * time.Second, 0, false},
		{3 * time.Second, 0, false},
	} {
		if mark, ok := nextMark(c.left); mark != c.mark || ok != c.ok {
			t.Errorf("nextMark(%s) = %s, %v; want %s, %v", c.left, mark, ok, c.mark, c.ok)
		}
	}
}

// syncBuffer is a strings.Builder the countdown's goroutine and the test
// share.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCountdownSaysTheTimeLeftAtSaneIntervals: a breaker open for 4m59s
// is said at the start, at each whole minute left and at ten seconds, in
// plain lines (no control sequences), and nothing once it has ended.
func TestCountdownSaysTheTimeLeftAtSaneIntervals(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	var mu sync.Mutex
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	c := newCountdown(&out)
	c.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	// The fake clock jumps to the moment each wait ends.
	c.after = func(d time.Duration) <-chan time.Time {
		mu.Lock()
		now = now.Add(d)
		mu.Unlock()
		ch := make(chan time.Time, 1)
		ch <- now
		return ch
	}
	c.begin(now.Add(4*time.Minute + 59*time.Second))
	c.wg.Wait()
	c.end()
	want := ""
	for _, left := range []string{"4m59s", "4m00s", "3m00s", "2m00s", "1m00s", "10s"} {
		want += "ralph: the circuit breaker is open; ralph tries one task again in " + left + " (Ctrl-C stops)\n"
	}
	if got := out.String(); got != want {
		t.Errorf("the countdown said\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(out.String(), "\x1b") || strings.Contains(out.String(), "\r") {
		t.Errorf("the countdown wrote control sequences: %q", out.String())
	}
}

// TestCountdownEndsWhenTheBreakerChanges: end stops the lines at once.
func TestCountdownEndsWhenTheBreakerChanges(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	c := newCountdown(&out)
	c.begin(time.Now().Add(time.Hour))
	c.end()
	if n := strings.Count(out.String(), "\n"); n != 1 {
		t.Errorf("%d lines after end, want the first alone:\n%s", n, out.String())
	}
}
