// Package proctree reads the process tree from /proc: who started whom.
// The sandbox asks it whether a socket's listener is one of its own
// commands, and the control socket whether a peer is one of ralph's. It
// also reads a process's memory (Memory), for the benchmarks and for
// ralph's own figure at exit (RALPH_MEMSTATS), and what a finished
// process used at most as wait4 says it (MaxRSS), for cmd/benchpeers.
package proctree

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
)

// ParentPID reads field 4 of /proc/<pid>/stat. The command name before
// it is in parentheses and may hold spaces and parentheses itself, so the
// fields are counted from the last ')'.
func ParentPID(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 2 {
		return 0, errors.New("malformed /proc stat")
	}
	return strconv.Atoi(fields[1])
}
