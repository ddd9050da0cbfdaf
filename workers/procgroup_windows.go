package workers

import (
	"errors"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows a command's process group is a job object. Every process the
// command starts belongs to its job too, so terminating the job ends them
// all, as SIGKILL to the group does on Unix. The job kills its processes
// when its last handle closes, so a ralph that dies leaves nothing running
// (Pdeathsig on Linux). The command is also a console process group of its
// own (CREATE_NEW_PROCESS_GROUP), which is where Ctrl-Break, Windows' only
// gentle stop, can be sent.
//
// The process joins its job just after it started: os/exec cannot start it
// suspended and resume it later. In between, a few microseconds, the
// shell is still loading; a child started within them would escape the
// job.

// jobs maps a group's id (its first process's pid) to its job.
var jobs sync.Map // int → windows.Handle

// procAttr makes the command a console process group of its own.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// groupStarted puts the process pid, just started, into a new job that
// kills its processes when its last handle closes.
func groupStarted(pid int) error {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	_, err = windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	if err == nil {
		var h windows.Handle
		h, err = windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
		if err == nil {
			err = windows.AssignProcessToJobObject(job, h)
			windows.CloseHandle(h)
		}
	}
	if err != nil {
		windows.CloseHandle(job)
		return err
	}
	jobs.Store(pid, job)
	return nil
}

// signalGroup acts on the group pgid as sig would on Unix: 0 checks that
// a member is alive, SIGINT and SIGTERM send Ctrl-Break to the group
// (which reaches it only when it shares ralph's console), and SIGKILL
// terminates the job.
func signalGroup(pgid int, sig syscall.Signal) error {
	v, ok := jobs.Load(pgid)
	if !ok {
		return syscall.ESRCH
	}
	job := v.(windows.Handle)
	switch sig {
	case 0:
		if jobActive(job) == 0 {
			return syscall.ESRCH
		}
		return nil
	case syscall.SIGINT, syscall.SIGTERM:
		return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pgid))
	default:
		return windows.TerminateJobObject(job, 128+uint32(syscall.SIGKILL))
	}
}

// jobActive is the number of live processes in job; one that cannot be
// asked counts as none, since there is nothing more to wait on.
func jobActive(job windows.Handle) uint32 {
	var info jobAccounting
	err := windows.QueryInformationJobObject(job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	if err != nil {
		return 0
	}
	return info.ActiveProcesses
}

// waitExitedNoReap is not needed: the job, not a pid that could be
// reused, names the group, so the caller may reap the leader first.
func waitExitedNoReap(pid int) error { return errors.ErrUnsupported }

// waitGroupGone waits, for at most timeout, until no process of the group
// pgid is alive, terminating the job again meanwhile.
func waitGroupGone(pgid int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for !errors.Is(signalGroup(pgid, 0), syscall.ESRCH) && time.Now().Before(deadline) {
		_ = signalGroup(pgid, syscall.SIGKILL)
		time.Sleep(time.Millisecond)
	}
}

// reapGroup closes the group's job once its processes are dead; closing
// it kills any left.
func reapGroup(pgid int) {
	if v, ok := jobs.LoadAndDelete(pgid); ok {
		windows.CloseHandle(v.(windows.Handle))
	}
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, which package
// windows does not declare.
type jobAccounting struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}
