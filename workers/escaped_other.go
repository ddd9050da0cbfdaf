//go:build !linux

package workers

import "time"

// agentTokenVar names the variable that marks an agent's descendants.
const agentTokenVar = "RALPH_AGENT_RUN"

// BecomeSubreaper does nothing where the kernel has no child subreapers:
// processes that leave an agent's group are then beyond ralph's reach.
func BecomeSubreaper() error { return nil }

// procInfo is a process as /proc describes it; without /proc nothing is
// known.
type procInfo struct{ pid int }

func readProc(pid int) (procInfo, bool) { return procInfo{}, false }

func agentProcesses(token string, roots ...procInfo) []procInfo { return nil }

func stopEscaped(token string, timeout time.Duration, roots ...procInfo) {}
