package proctree

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrNotStill is returned by Freeze when ralph's processes did not all
// stand still within its bounded rounds (they kept forking, or kept
// continuing each other).
var ErrNotStill = errors.New("ralph could not hold the processes it started still")

// freezeRounds bounds Freeze's walks of /proc, and freezeBudget their
// time: a tree of tens of thousands of processes (a command that forks
// and exits in a loop leaves zombies by the thousand) makes each walk
// slow, and the editor's call is not worth more than this.
const (
	freezeRounds = 50
	freezeBudget = 2 * time.Second
)

// Held is a freeze: the processes Freeze stopped itself, which Thaw
// continues, and nothing else.
type Held struct {
	stopped map[int]uint64 // pid → start time, to tell a reused pid
	done    bool
}

// Freeze stops every descendant of this process with SIGSTOP and returns
// once they all stand still, holding the gate so that ralph starts none
// meanwhile; Thaw undoes both. A process found stopped already (by the
// person, a debugger, itself) is left stopped by Thaw.
//
// A SIGSTOP is delivered asynchronously (a process in a system call
// finishes it first), and a process not yet stopped may fork or continue
// a stopped one; so Freeze walks /proc again and again, stopping what
// runs, until a walk finds every thread of every descendant stopped, with
// the same threads, each with the same count of context switches, as the
// walk before: then between the two walks nothing ran, and nothing can
// run, start or continue another until Thaw. The walks are bounded
// (freezeRounds); past them Freeze thaws and fails with ErrNotStill.
// This process's own threads are never stopped, nor its parent (the
// editor that started ralph) or anything else that is not a descendant.
func Freeze() (*Held, error) {
	gate.Lock()
	// No goroutine of ralph's is between a fork and its exec while the
	// walks stop what they find: a child stopped there held its parent's
	// thread in the fork and, with it, Go's fork lock, so that every
	// later start of a process in ralph waited, the checkpoint's own git
	// among them, and the freeze was never thawed (a pack beside a long
	// run's checkpoints hung it). Go forks holding ForkLock for writing
	// and releases it once the child has exec'd; holding it here waits
	// for a fork under way, and holds the next until the walks are done.
	// The model's processes start inside the gate, ralph's own git
	// outside it.
	syscall.ForkLock.Lock()
	defer syscall.ForkLock.Unlock()
	h := &Held{stopped: map[int]uint64{}}
	self := os.Getpid()
	if noChildren(self) {
		// Nothing below ralph, and the gate starts nothing: the common
		// case of a checkpoint (no command in the background) costs a
		// read of each of ralph's threads' child lists, not a walk of
		// every process on the machine.
		return h, nil
	}
	var prev map[int]thread
	began := time.Now()
	for round := range freezeRounds {
		if time.Since(began) > freezeBudget {
			break
		}
		procs := descendants(self)
		if len(procs) == 0 {
			// None can be started while the gate is held.
			return h, nil
		}
		snap := map[int]thread{}
		busy := false
		for _, p := range procs {
			threads, ok := readThreads(p.pid)
			if !ok {
				continue // gone
			}
			running := false
			for tid, th := range threads {
				snap[tid] = th
				running = running || !th.still()
			}
			if !running {
				continue
			}
			busy = true
			if _, ok := h.stopped[p.pid]; !ok {
				h.stopped[p.pid] = p.start
			}
			signal(p, unix.SIGSTOP)
		}
		if !busy && prev != nil && maps.Equal(prev, snap) {
			return h, nil
		}
		prev = snap
		if busy && round > 2 {
			// Give a process in a system call the time to finish it.
			time.Sleep(time.Duration(round) * 50 * time.Microsecond)
		}
	}
	h.Thaw()
	return nil, ErrNotStill
}

// Thaw continues the processes Freeze stopped and lets ralph start
// processes again. It may be called more than once; only the first does
// anything.
func (h *Held) Thaw() {
	if h == nil || h.done {
		return
	}
	h.done = true
	defer gate.Unlock()
	for pid, start := range h.stopped {
		signal(proc{pid: pid, start: start}, unix.SIGCONT)
	}
}

// Stopped lists the pids Freeze stopped itself, for tests.
func (h *Held) Stopped() []int {
	return slices.Sorted(maps.Keys(h.stopped))
}

// proc is a process as the walk saw it.
type proc struct {
	pid   int
	start uint64
}

// signal sends sig to p if its pid still names the same process: a pidfd
// pins it between the check and the signal; kernels without pidfds get
// kill(2) after the check.
func signal(p proc, sig unix.Signal) {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err != nil {
		if errors.Is(err, unix.ENOSYS) {
			if _, start, ok := readStat(p.pid); ok && start == p.start {
				_ = unix.Kill(p.pid, sig)
			}
		}
		return
	}
	defer unix.Close(fd)
	if _, start, ok := readStat(p.pid); ok && start == p.start {
		_ = unix.PidfdSendSignal(fd, sig, nil, 0)
	}
}

// noChildren reports whether pid has no child process at all, from each of
// its threads' children lists (/proc/PID/task/TID/children). With none,
// nothing is below it: an orphan of a child is reparented to init or a
// subreaper above ralph, never below it. The lists are not reliable while
// children are forked or exit at that moment, which only ralph's own
// processes can then be (the caller holds the gate); and where the files
// are missing (a kernel without CONFIG_PROC_CHILDREN) it answers false,
// and the caller walks the whole of /proc.
func noChildren(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tids, err := procNames(dir)
	if err != nil || len(tids) == 0 {
		return false
	}
	for _, tid := range tids {
		b, err := os.ReadFile(dir + "/" + strconv.Itoa(tid) + "/children")
		if errors.Is(err, os.ErrNotExist) {
			if _, statErr := os.Stat(dir + "/" + strconv.Itoa(tid)); statErr != nil {
				continue // the thread ended
			}
			return false // no children files on this kernel
		}
		if err != nil || len(bytes.TrimSpace(b)) > 0 {
			return false
		}
	}
	return true
}

// descendants lists every process below pid in /proc's tree of parent
// pids (not pid itself).
func descendants(pid int) []proc {
	names, err := procNames("/proc")
	if err != nil {
		return nil
	}
	parent := map[int]int{}
	start := map[int]uint64{}
	for _, n := range names {
		ppid, st, ok := readStat(n)
		if ok {
			parent[n], start[n] = ppid, st
		}
	}
	in := map[int]bool{pid: true}
	var out []proc
	// Trees are shallow; add children until nothing changes.
	for changed := true; changed; {
		changed = false
		for n, pp := range parent {
			if !in[n] && in[pp] {
				in[n], changed = true, true
				out = append(out, proc{pid: n, start: start[n]})
			}
		}
	}
	return out
}

// Descendants lists the pids of every process below pid.
func Descendants(pid int) []int {
	var out []int
	for _, p := range descendants(pid) {
		out = append(out, p.pid)
	}
	return out
}

// thread is what a walk reads of one thread: its state and how many
// times it was switched out. A thread that ran between two walks was
// switched out at least once more (to stop again), so equal counts mean
// it did not run.
type thread struct {
	state    byte
	switches uint64
	inClone  bool // in clone, clone3 or vfork (read only for a thread in state D)
}

// still: the thread runs no code until someone continues it (stopped,
// stopped by a tracer), ever again (a zombie, dead), or until its child
// execs or exits (a parent in vfork, which waits uninterruptibly for its
// child: once the walk stopped that child, the parent waits too).
func (t thread) still() bool {
	switch t.state {
	case 'T', 't', 'Z', 'X', 'x':
		return true
	}
	return t.state == 'D' && t.inClone
}

// readThreads reads the state and context switches of each thread of pid
// from /proc/PID/task/TID/status.
func readThreads(pid int) (map[int]thread, bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tids, err := procNames(dir)
	if err != nil {
		return nil, false
	}
	out := make(map[int]thread, len(tids))
	for _, tid := range tids {
		b, err := os.ReadFile(dir + "/" + strconv.Itoa(tid) + "/status")
		if err != nil {
			continue // exited meanwhile
		}
		th := parseStatus(b)
		if th.state == 'D' {
			th.inClone = inClone(dir + "/" + strconv.Itoa(tid) + "/syscall")
		}
		out[tid] = th
	}
	return out, true
}

// inClone reads /proc/PID/task/TID/syscall: whether the thread is blocked
// in clone, clone3 or vfork.
func inClone(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return false
	}
	n, err := strconv.Atoi(string(f[0]))
	return err == nil && (n == unix.SYS_CLONE || n == unix.SYS_CLONE3 || n == vforkSyscall)
}

// parseStatus reads "State:", "voluntary_ctxt_switches:" and
// "nonvoluntary_ctxt_switches:" of a /proc status file.
func parseStatus(b []byte) thread {
	var t thread
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		k, v, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		v = bytes.TrimSpace(v)
		switch string(k) {
		case "State":
			if len(v) > 0 {
				t.state = v[0]
			}
		case "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches":
			n, _ := strconv.ParseUint(string(v), 10, 64)
			t.switches += n
		}
	}
	return t
}

// readStat reads the parent pid and start time (fields 4 and 22) of
// /proc/PID/stat, counted from the last ')' since the command name may
// hold spaces and parentheses.
func readStat(pid int) (ppid int, start uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return 0, 0, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	start, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	return ppid, start, err1 == nil && err2 == nil
}

// procNames lists the numeric entries of a /proc directory.
func procNames(dir string) ([]int, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	var out []int
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil {
			out = append(out, pid)
		}
	}
	return out, err
}
