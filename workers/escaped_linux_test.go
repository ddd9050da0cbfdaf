package workers

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	line := "1234 (we (ird) name) S 77 987 987 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 555666 1000 10"
	p, ok := parseProcStat(1234, []byte(line))
	if !ok || p.state != 'S' || p.ppid != 77 || p.pgrp != 987 || p.start != 555666 {
		t.Fatalf("parseProcStat = %+v, %v", p, ok)
	}
	if _, ok := parseProcStat(1, []byte("1 (x) S 1 1")); ok {
		t.Fatal("parsed a short line")
	}
}

// Processes that left the agent's group — by setsid, and even with an
// emptied environment — are stopped with it, however it ends.
func TestExternalStopKillsEscapedProcesses(t *testing.T) {
	for _, c := range []struct {
		name    string
		timeout time.Duration
		hang    bool
	}{{"stop", 0, true},
		// Nothing stops it: it exits.
		{"exit", 0, false}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile, escaped, bare := filepath.Join(dir, "pid"), filepath.Join(dir, "escaped"), filepath.Join(dir, "bare")
			command := `setsid sleep 300 & echo $! > ` + escaped + `; ` +
				`setsid env -i /bin/sh -c 'echo $$ > ` + bare + `; exec sleep 300' & ` +
				`while [ ! -s ` + bare + ` ]; do sleep 0.01; done; echo $$ > ` + pidFile
			if c.hang {
				command += `; sleep 300`
			}
			runAgentProcess(t, command, pidFile, c.hang)
			files := []string{escaped, bare}
			if !c.hang {
				// An orphan with an emptied environment is linked to the
				// agent only while the agent lives; after a normal exit
				// nothing ties it to ralph any more.
				files = files[:1]
				defer func() { syscall.Kill(waitForPID(t, bare), syscall.SIGKILL) }()
			}
			for _, f := range files {
				pid := waitForPID(t, f)
				if ProcessAlive(pid) {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Errorf("%s: process %d outlived the agent", filepath.Base(f), pid)
				}
			}
		})
	}
}

// TestSubreaperReapsOrphans runs, in a child test process that is a child
// subreaper, agents and a command that leave processes behind whose
// parents exit first: they are reparented to that process, and once Run
// and RunVerify (let out) return none of them is left, not even as a zombie.
func TestSubreaperReapsOrphans(t *testing.T) {
	if os.Getenv("RALPH_TEST_SUBREAPER_HELPER") == "1" {
		subreaperHelper(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSubreaperReapsOrphans$", "-test.v")
	cmd.Env = append(os.Environ(), "RALPH_TEST_SUBREAPER_HELPER=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("helper: %v\n%s", err, out)
	}
}

func subreaperHelper(t *testing.T) {
	if err := BecomeSubreaper(); err != nil {
		t.Skip(err)
	}
	self := os.Getpid()
	children := func() []procInfo {
		var out []procInfo
		names, _ := filepath.Glob("/proc/[0-9]*")
		for _, n := range names {
			pid, _ := strconv.Atoi(filepath.Base(n))
			if p, ok := readProc(pid); ok && p.ppid == self {
				out = append(out, p)
			}
		}
		return out
	}
	// A background job in the group whose shell exits first, and one in
	// a session of its own.
	orphans := `(sleep 300 &); (setsid sleep 300 &); sleep 0.05; echo done`
	runAgentProcess(t, orphans, "", false)
	if left := children(); len(left) != 0 {
		t.Fatalf("after an agent: children left %+v", left)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	runAgentProcess(t, orphans+"; echo $$ > "+pidFile+"; sleep 300", pidFile, true)
	if left := children(); len(left) != 0 {
		t.Fatalf("after a stopped agent: children left %+v", left)
	}
	w := newTestWorkspace(t, Options{})
	w.RunVerify(context.Background(), `(sleep 300 &); sleep 0.05`, 5*time.Second, true)
	if left := children(); len(left) != 0 {
		t.Fatalf("after a command: children left %+v", left)
	}
}
