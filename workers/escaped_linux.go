package workers

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// An external agent may start processes that leave its process group:
// claude runs each shell command in a session of its own, and any agent
// can call setsid. Killing the group misses them, so a `sleep 300` the
// agent started would outlive ralph. ralph finds them in two ways:
//
//   - every agent gets a variable of its own in its environment
//     (agentTokenVar), which its descendants inherit, so a scan of /proc
//     finds them wherever they were reparented;
//   - descendants of those processes (and of the agent while it lives) are
//     found through their parent pids, for the few programs that empty
//     their environment.
//
// With ralph a child subreaper (BecomeSubreaper), orphans are reparented to
// ralph instead of init: their pids cannot be reused until ralph reaps
// them, and ralph does reap them, so none is left a zombie.

// agentTokenVar names the variable that marks an agent's descendants.
const agentTokenVar = "RALPH_AGENT_RUN"

// BecomeSubreaper makes this process the child subreaper of its
// descendants (prctl PR_SET_CHILD_SUBREAPER): processes that outlive
// their parent are reparented to it. Call it once, before starting
// external agents.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become a child subreaper: %w", err)
	}
	subreaper.Store(true)
	return nil
}

// subreaper is set once this process is a child subreaper: only then can
// orphans become its zombies, and only then is reapGroup worth a scan.
var subreaper atomic.Bool

// procInfo is what ralph reads of a process from /proc/PID/stat.
type procInfo struct {
	pid, ppid, pgrp int
	state           byte
	start           uint64 // start time in clock ticks since boot, to tell a reused pid
}

// readProc reads /proc/PID/stat.
func readProc(pid int) (procInfo, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	return parseProcStat(pid, data)
}

// parseProcStat parses "pid (comm) state ppid pgrp ... starttime ...";
// comm may contain spaces and parentheses, so fields are counted from the
// last ')'. starttime is field 22, the 20th after comm.
func parseProcStat(pid int, data []byte) (procInfo, bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procInfo{}, false
	}
	return procInfo{pid: pid, ppid: ppid, pgrp: pgrp, state: f[0][0], start: start}, true
}

func (p procInfo) live() bool { return p.state != 'Z' && p.state != 'X' }

// agentProcesses lists the processes of an agent: those whose environment
// carries token, the roots (when their pid still names the same process),
// and every descendant of either. ralph itself is never listed.
func agentProcesses(token string, roots ...procInfo) []procInfo {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	self := os.Getpid()
	mark := []byte(agentTokenVar + "=" + token + "\x00")
	var all []procInfo
	in := map[int]bool{}
	root := map[int]uint64{}
	for _, r := range roots {
		root[r.pid] = r.start
	}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		p, ok := readProc(pid)
		if !ok {
			continue
		}
		all = append(all, p)
		if start, ok := root[pid]; ok && start == p.start {
			in[pid] = true
			continue
		}
		if token != "" && p.live() {
			// Unreadable (another user's process) means not ours.
			if env, err := os.ReadFile("/proc/" + name + "/environ"); err == nil && bytes.Contains(append(env, 0), mark) {
				in[pid] = true
			}
		}
	}
	// Add descendants until nothing changes; process trees are shallow.
	for changed := true; changed; {
		changed = false
		for _, p := range all {
			if !in[p.pid] && in[p.ppid] {
				in[p.pid], changed = true, true
			}
		}
	}
	var out []procInfo
	for _, p := range all {
		if in[p.pid] {
			out = append(out, p)
		}
	}
	return out
}

// killProcess sends SIGKILL to p if the pid still names the same process.
// A pidfd pins the process between the check and the signal, so a pid
// reused meanwhile is never hit; kernels without pidfds get kill(2) after
// the check.
func killProcess(p procInfo) {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err != nil {
		if !errors.Is(err, unix.ENOSYS) {
			return // gone already
		}
		if now, ok := readProc(p.pid); ok && now.start == p.start {
			unix.Kill(p.pid, unix.SIGKILL)
		}
		return
	}
	defer unix.Close(fd)
	if now, ok := readProc(p.pid); ok && now.start == p.start {
		unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	}
}

// reapChild reaps pid if it is a zombie child of this process (an orphan
// reparented to ralph as subreaper). Only such pids are waited for: the
// children ralph started itself are os/exec's to wait for.
func reapChild(p procInfo) {
	if p.ppid == os.Getpid() && !p.live() {
		var ws unix.WaitStatus
		unix.Wait4(p.pid, &ws, unix.WNOHANG, nil)
	}
}

// stopEscaped kills every process of the agent marked by token that is
// still running, and the descendants of roots (see agentProcesses), then
// waits, for at most timeout, until each is gone, reaping those that were
// reparented to ralph. Scanning repeats so that a process forked while the
// others were being killed is found too.
func stopEscaped(token string, timeout time.Duration, roots ...procInfo) {
	self := os.Getpid()
	deadline := time.Now().Add(timeout)
	killed := map[int]uint64{} // pid → start time
	for {
		alive := 0
		for _, p := range agentProcesses(token, roots...) {
			if p.live() {
				alive++
				killProcess(p)
				killed[p.pid] = p.start
			}
		}
		// A killed process is done with when it is gone or reaped. A
		// zombie whose parent is also dying will be reparented to ralph
		// and is waited for; one whose parent lives on is that parent's
		// (or init's) to reap, and runs no code.
		pending := 0
		for pid, start := range killed {
			p, ok := readProc(pid)
			switch {
			case !ok || p.start != start:
				delete(killed, pid)
			case p.live():
				pending++
			case p.ppid == self:
				reapChild(p)
				delete(killed, pid)
			case killed[p.ppid] != 0:
				pending++
			default:
				delete(killed, pid)
			}
		}
		if (alive == 0 && pending == 0) || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// reapGroup reaps the zombies of process group pgid that were reparented
// to ralph: background jobs whose parent died before them.
func reapGroup(pgid int) {
	if !subreaper.Load() {
		return
	}
	self := os.Getpid()
	d, err := os.Open("/proc")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == pgid {
			continue // the leader is os/exec's to wait for
		}
		if p, ok := readProc(pid); ok && p.pgrp == pgid && p.ppid == self {
			reapChild(p)
		}
	}
}
