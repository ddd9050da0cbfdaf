package agents

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These helpers watch the processes an agent started, from outside the
// workers package whose own test helpers read its unexported process
// tables: /proc where there is one, a signal 0 elsewhere.

// waitForPID polls for a file holding a pid written by a test command.
func waitForPID(t testing.TB, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("no pid appeared in %s", path)
	return 0
}

// procState is the state letter and process group of pid from /proc,
// and whether /proc had it.
func procState(pid int) (state byte, pgrp int, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err = strconv.Atoi(string(fields[2]))
	return fields[0][0], pgrp, err == nil
}

// processAlive reports whether pid is running; with /proc a zombie counts
// as gone, without it as running.
func processAlive(pid int) bool {
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		state, _, ok := procState(pid)
		return ok && state != 'Z' && state != 'X'
	}
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}

// assertNoLiveMember fails if a process of group pgid is running (not a
// zombie) right now; without /proc it checks nothing.
func assertNoLiveMember(t testing.TB, pgid int) {
	t.Helper()
	names, _ := filepath.Glob("/proc/[0-9]*")
	for _, n := range names {
		pid, _ := strconv.Atoi(filepath.Base(n))
		if state, pgrp, ok := procState(pid); ok && pgrp == pgid && state != 'Z' && state != 'X' {
			t.Fatalf("process group %d still has a live member %d after Run returned", pgid, pid)
		}
	}
}
