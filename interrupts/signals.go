package interrupts

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// NotifySignals turns SIGINT and SIGTERM into HardStop interrupts on q until
// ctx is done or the returned stop function is called. The first signal is
// pushed with the signal attached so the face can pick the exit code (130 or
// 143); later signals are pushed too, so a consumer that is already stopping
// can treat a second one as "stop harder".
func NotifySignals(ctx context.Context, q *Queue) (stop func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case sig := <-ch:
				q.Push(Interrupt{Kind: HardStop, Signal: sig})
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		cancel()
		<-done
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
