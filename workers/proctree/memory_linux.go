package proctree

import (
	"bytes"
	"os"
	"strconv"
)

// Memory is the resident memory of process pid, in bytes, as the kernel
// counts it in /proc/<pid>/status: now (VmRSS) and at its highest since
// the process last started a program (VmHWM). Zeros when the file cannot
// be read (the process is gone, or a zombie).
//
// It is the one reading of a process's memory the benchmarks take: a
// running ralph's from outside, and ralph's own peak by itself as it
// ends (RALPH_MEMSTATS, main.go). The rusage wait4 returns (MaxRSS) is
// no substitute for a child of a large process: for a program the Go
// runtime started with vfork it counts the memory of the process that
// started it (Linux keeps the larger of the old and new address spaces'
// marks at exec), and it counts the children the process waited for
// (git), so it says the largest of them all, not ralph's own.
func Memory(pid int) (rss, peak int64) {
	b := status(pid)
	return statusKB(b, "VmRSS:"), statusKB(b, "VmHWM:")
}

// status is /proc/<pid>/status, nil when it cannot be read.
func status(pid int) []byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil
	}
	return b
}

// Private is the private resident memory of process pid now, in bytes:
// its anonymous pages (RssAnon) and shared memory (RssShmem), without the
// pages of files it maps (RssFile). A Go program's own binary is most of
// its peak resident memory on a kernel that maps a whole large folio of
// the page cache around each fault: `ralph --version` peaks at 21 MB, of
// which 19 MB are the binary's pages, shared with every other process
// that runs it. Zero when the file cannot be read.
func Private(pid int) int64 {
	b := status(pid)
	return statusKB(b, "RssAnon:") + statusKB(b, "RssShmem:")
}

// statusKB is the figure of the line of a /proc status file that starts
// with key, which the kernel gives in kB, in bytes; 0 without it.
func statusKB(b []byte, key string) int64 {
	_, rest, ok := bytes.Cut(b, []byte("\n"+key))
	if !ok {
		return 0
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(line), []byte("kB")))), 10, 64)
	if err != nil {
		return 0
	}
	return kb << 10
}
