package interrupts

import (
	"syscall"
	"testing"
)

// A stop's reason names what a person did, not Go's name of the signal
// ("interrupted by interrupt", "interrupted by terminated" before).
func TestStopReason(t *testing.T) {
	for _, c := range []struct {
		it   Interrupt
		want string
	}{
		{Interrupt{Kind: HardStop, Signal: syscall.SIGINT}, "stopped by Ctrl-C"},
		{Interrupt{Kind: HardStop, Signal: syscall.SIGTERM}, "stopped by SIGTERM"},
		{Interrupt{Kind: HardStop, Signal: syscall.SIGHUP}, "stopped by SIGHUP"},
		{Interrupt{Kind: HardStop, Text: "ralph stop from another terminal"}, "stopped by ralph stop from another terminal"},
		{Interrupt{Kind: HardStop}, "stopped by you"},
	} {
		if got := StopReason(c.it); got != c.want {
			t.Errorf("StopReason(%+v) = %q, want %q", c.it, got, c.want)
		}
	}
}
