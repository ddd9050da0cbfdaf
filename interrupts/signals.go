package interrupts

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// The process catches SIGINT, SIGTERM and SIGHUP through one listener. Registering
// it is slow for a command-line program: the Go runtime starts a thread of
// its own for signal masks and hands each signal to it, about a millisecond
// on a busy two-core machine. Listen starts that work early, on a goroutine,
// so a one-shot pays for it while it waits for its disk instead of on its
// way to the model; NotifySignals then only attaches a queue.
var (
	// stopSignals end the work the same way: a cancel, the running
	// command's own end (which puts protected paths back), a save, an exit
	// of 128+n. SIGHUP is among them because a closed terminal or a lost
	// ssh session must not skip the command's restore. SIGQUIT is left to
	// Go's default (a goroutine dump), which a person sends on purpose to
	// debug a hung ralph.
	stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

	listenMu sync.Mutex
	current  *listener
)

// listener is the process's signal registration. Until a queue is
// attached, a signal ends the process as it would with no handler at all,
// so listening early changes nothing a person can see.
type listener struct {
	ch         chan os.Signal
	registered chan struct{} // closed once signal.Notify has returned
	done       chan struct{} // closed when the loop has ended

	mu     sync.Mutex
	q      *Queue
	closed bool
}

// Listen registers for SIGINT, SIGTERM and SIGHUP on a goroutine of its own and
// returns at once; the next NotifySignals attaches to it. Call it only on
// the way to NotifySignals: until then a signal still ends the process.
func Listen() {
	listenMu.Lock()
	defer listenMu.Unlock()
	if current == nil {
		current = startListener()
	}
}

func startListener() *listener {
	l := &listener{ch: make(chan os.Signal, 4), registered: make(chan struct{}), done: make(chan struct{})}
	go l.loop()
	return l
}

func (l *listener) loop() {
	defer close(l.done)
	signal.Notify(l.ch, stopSignals...)
	close(l.registered)
	for sig := range l.ch {
		l.mu.Lock()
		q, closed := l.q, l.closed
		l.mu.Unlock()
		if closed {
			return
		}
		if q == nil {
			// Nobody handles signals yet: end the process by the signal,
			// exactly as an unhandled one would.
			signal.Reset(sig)
			raise(sig.(syscall.Signal))
			continue
		}
		q.Push(Interrupt{Kind: HardStop, Signal: sig})
	}
}

// NotifySignals turns SIGINT, SIGTERM and SIGHUP into HardStop interrupts on q until
// ctx is done or the returned stop function is called; signals are caught
// by the time it returns. The first signal is pushed with the signal
// attached so the face can pick the exit code (130, 143 or 129); later signals
// are pushed too, so a consumer that is already stopping can treat a
// second one as "stop harder". After stop, signals have their default
// effect again.
func NotifySignals(ctx context.Context, q *Queue) (stop func()) {
	listenMu.Lock()
	l := current
	if l == nil {
		l = startListener()
	}
	// The listener belongs to this call now; a later Listen starts afresh.
	current = nil
	listenMu.Unlock()
	<-l.registered
	l.mu.Lock()
	l.q = q
	l.mu.Unlock()
	var once sync.Once
	release := func() {
		once.Do(func() {
			signal.Stop(l.ch)
			l.mu.Lock()
			l.closed = true
			l.mu.Unlock()
			close(l.ch)
			<-l.done
		})
	}
	// ctx's end releases the signals too; a stop before it lets go of
	// ctx, which may outlive this call by far.
	unhook := context.AfterFunc(ctx, release)
	return func() {
		unhook()
		release()
	}
}

// ExitCode is the conventional shell exit code for a process stopped by sig:
// 130 for SIGINT, 143 for SIGTERM, 128+n otherwise.
func ExitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// signalNames are the signals that stop ralph by their usual names; the
// syscall package has them on every platform (x/sys/unix's SignalName
// has no Windows).
var signalNames = map[syscall.Signal]string{
	syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGKILL: "SIGKILL", syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGABRT: "SIGABRT",
}

// StopReason says in words what stopped the work: "stopped by Ctrl-C" for
// SIGINT, "stopped by SIGTERM" and the like for other signals, "stopped by
// <who>" for a hard stop that says where it came from (ralph stop), and
// "stopped by you" for one typed at the chat prompt. Go's own names of the
// signals ("interrupt", "terminated") read badly after "stopped by".
func StopReason(it Interrupt) string {
	switch {
	case it.Signal == syscall.SIGINT:
		return "stopped by Ctrl-C"
	case it.Signal != nil:
		if s, ok := it.Signal.(syscall.Signal); ok {
			if name, ok := signalNames[s]; ok {
				return "stopped by " + name
			}
		}
		return "stopped by signal " + it.Signal.String()
	case it.Text != "":
		return "stopped by " + it.Text
	}
	return "stopped by you"
}
