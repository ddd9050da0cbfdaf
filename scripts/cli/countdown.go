package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory"
)

// countdown says on standard error, when that is no terminal (no
// progress display shows the loop's state), how long an open circuit
// breaker keeps the task loop waiting: a run in the foreground of a
// script or a CI job would otherwise sit silent for its cooldown (5
// minutes, doubling with each trip), and look hung. It says it when the
// breaker opens, then at each whole five minutes left while more than ten
// are, each whole minute below that, and with ten seconds left: plain
// lines for a log, never a control sequence. Its goroutine is owned by
// the countdown: begin starts it, a later begin or end stops it.
type countdown struct {
	w io.Writer
	// now and after are the clock (a variable one in tests).
	now   func() time.Time
	after func(time.Duration) <-chan time.Time

	mu   sync.Mutex
	stop chan struct{}
	wg   sync.WaitGroup
}

func newCountdown(w io.Writer) *countdown {
	return &countdown{w: w, now: time.Now, after: time.After}
}

// begin says the breaker is open until until, and goes on saying how
// long is left until then or until end.
func (c *countdown) begin(until time.Time) {
	c.end()
	c.mu.Lock()
	defer c.mu.Unlock()
	stop := make(chan struct{})
	c.stop = stop
	c.say(until.Sub(c.now()))
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			mark, ok := nextMark(until.Sub(c.now()))
			if !ok {
				return
			}
			select {
			case <-stop:
				return
			case <-c.after(until.Add(-mark).Sub(c.now())):
			}
			c.mu.Lock()
			select {
			case <-stop:
				c.mu.Unlock()
				return
			default:
			}
			c.say(mark)
			c.mu.Unlock()
		}
	}()
}

// end stops the countdown: the breaker changed state, or the run ended.
func (c *countdown) end() {
	c.mu.Lock()
	if c.stop != nil {
		close(c.stop)
		c.stop = nil
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// say prints one line with left to go; callers hold c.mu.
func (c *countdown) say(left time.Duration) {
	left = max(left, 0)
	if left >= time.Second {
		left = left.Round(time.Second)
	}
	fmt.Fprintf(c.w, "ralph: the circuit breaker is open; ralph tries one task again in %s (Ctrl-C stops)\n", eventwords.Duration(left))
}

// nextMark is the time left at which the next line is due after one said
// with left to go: the whole five minutes below left while that is more
// than ten minutes, else the whole minute below it, and ten seconds at
// last; ok is false when no line is due any more.
func nextMark(left time.Duration) (mark time.Duration, ok bool) {
	const last = 10 * time.Second
	switch {
	case left <= last:
		return 0, false
	case left > 10*time.Minute:
		return max((left-1)/(5*time.Minute)*(5*time.Minute), 10*time.Minute), true
	}
	return max((left-1)/time.Minute*time.Minute, last), true
}

// breakerCountdown starts saying how long an open breaker has left, or
// stops when it is no longer open.
func (o *OneShot) breakerCountdown(ev event.Event) {
	if o.breaker == nil {
		o.breaker = newCountdown(o.Stderr)
	}
	if ev.State == memory.BreakerOpen && !ev.Until.IsZero() {
		o.breaker.begin(ev.Until)
		return
	}
	o.breaker.end()
}
