package project

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
)

// How long --force waits for a live holder on this host to leave after
// SIGTERM (it saves its state and exits) and then after SIGKILL.
var (
	termGrace = 10 * time.Second
	killGrace = 5 * time.Second
)

// acquire takes the project lock. With force, a live ralph on this host is
// stopped first — SIGTERM, a grace period to save, then SIGKILL — and the
// lock is taken only once it is gone, so there are never two writers; a
// holder on another host, which cannot be signalled, is displaced.
func acquire(fs afero.Fs, root string, force bool, notify func(string), secrets ...string) (*memory.Lock, error) {
	lock, err := memory.AcquireLock(fs, root, "", false, secrets...)
	var le *memory.LockedError
	if !force || !errors.As(err, &le) {
		return lock, err
	}
	if le.Foreign || le.Holder.PID <= 0 || le.Holder.PID == os.Getpid() {
		return memory.AcquireLock(fs, root, "", true, secrets...)
	}
	pid := le.Holder.PID
	for _, step := range []struct {
		sig   syscall.Signal
		grace time.Duration
	}{{syscall.SIGTERM, termGrace}, {syscall.SIGKILL, killGrace}} {
		if err := interrupts.Kill(pid, step.sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return nil, fmt.Errorf("--force: cannot stop the ralph (pid %d) holding this project: %w", pid, err)
		}
		deadline := time.Now().Add(step.grace)
		for time.Now().Before(deadline) {
			lock, err = memory.AcquireLock(fs, root, "", false, secrets...)
			if !errors.As(err, &le) {
				if err == nil {
					notify(fmt.Sprintf("--force: stopped the ralph (pid %d) that held this project (%s) and took it over", pid, step.sig))
				}
				return lock, err
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil, fmt.Errorf("--force: the ralph (pid %d) holding this project did not stop after SIGTERM and SIGKILL", pid)
}
