package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/spf13/afero"
)

// LockInfo describes a lock's holder. StartTime (clock ticks since boot,
// from /proc/<pid>/stat) and BootID pin the holder down beyond its pid, so a
// pid reused by an unrelated process, or by a process after a reboot, is
// never mistaken for the owner.
type LockInfo struct {
	PID        int       `json:"pid"`
	Hostname   string    `json:"hostname"`
	SessionID  string    `json:"session_id,omitempty"`
	StartTime  uint64    `json:"start_time"`
	BootID     string    `json:"boot_id,omitempty"`
	AcquiredAt time.Time `json:"acquired_at"`
	Command    string    `json:"command,omitempty"`
}

// Staleness is what ReadLock concludes about a lock file.
type Staleness string

// The states of a project lock.
const (
	LockFree    Staleness = "free"    // no lock file, or an empty one nobody holds
	LockHeld    Staleness = "held"    // a live ralph on this host owns the project
	LockStale   Staleness = "stale"   // the holder provably died; the next ralph takes over
	LockForeign Staleness = "foreign" // written from another host; its holder cannot be checked
)

// selfStartTime is this process's start time, read from /proc once.
var selfStartTime = sync.OnceValue(func() uint64 {
	st, _ := ProcessStartTime(os.Getpid())
	return st
})

// selfInfo describes this process as a lock holder.
func selfInfo(sessionID string) LockInfo {
	host, _ := os.Hostname()
	return LockInfo{PID: os.Getpid(), Hostname: host, SessionID: sessionID, StartTime: selfStartTime(),
		BootID: bootID(), AcquiredAt: time.Now().UTC(), Command: commandText(nil)}
}

// commandText is this process's command line for the lock file: secret
// flags' values and the redactor's secrets replaced before it is clipped,
// so no part of a key survives at the cut.
func commandText(r *Redactor) string {
	return text.ClipRunes(r.Redact(strings.Join(commandLine(os.Args), " ")), 200, "")
}

// commandLine is args with the values of secret-looking flags (--api-key,
// --token, ...) replaced, because the lock file is plain text in the
// project and someone may pass a key on the command line.
func commandLine(args []string) []string {
	out := slices.Clone(args)
	secret := func(flag string) bool {
		flag = strings.ToLower(strings.TrimLeft(flag, "-"))
		return strings.Contains(flag, "key") || strings.Contains(flag, "token") ||
			strings.Contains(flag, "secret") || strings.Contains(flag, "password")
	}
	for i := 1; i < len(out); i++ {
		if !strings.HasPrefix(out[i], "-") {
			continue
		}
		if name, _, ok := strings.Cut(out[i], "="); ok {
			if secret(name) {
				out[i] = name + "=[REDACTED]"
			}
		} else if secret(out[i]) && i+1 < len(out) {
			i++
			out[i] = "[REDACTED]"
		}
	}
	return out
}

func marshalInfo(info LockInfo) []byte {
	b, _ := json.MarshalIndent(info, "", "  ")
	return append(b, '\n')
}

// writeInfo overwrites f with info in place. It writes before truncating,
// so a concurrent reader sees the new JSON value first (possibly followed
// by a moment of stale tail, which parseInfo ignores), never an empty file.
// It does not fsync: the content only describes a live owner, and after a
// crash of the machine there is none, whatever the file says (a file that
// says nothing readable is stale). An fsync here cost a millisecond or more
// on the way to every first request.
func writeInfo(f afero.File, info LockInfo) error {
	b := marshalInfo(info)
	if _, err := f.WriteAt(b, 0); err != nil {
		return err
	}
	return f.Truncate(int64(len(b)))
}

// parseInfo decodes the first JSON value of a lock file; ok is false for
// an empty or torn file.
func parseInfo(b []byte) (info LockInfo, ok bool) {
	err := json.NewDecoder(bytes.NewReader(b)).Decode(&info)
	return info, err == nil && info.PID > 0
}

func readInfo(f afero.File) (LockInfo, bool) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return LockInfo{}, false
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return LockInfo{}, false
	}
	return parseInfo(b)
}

// readInfoSettled reads the lock file, giving a holder that has just
// created it a moment to write its info.
func readInfoSettled(fs afero.Fs, path string) (LockInfo, bool) {
	for i := 0; ; i++ {
		b, err := afero.ReadFile(fs, path)
		info, ok := parseInfo(b)
		if ok || err != nil || len(bytes.TrimSpace(b)) > 0 || i == 5 {
			return info, ok
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ReadLock reports on the project lock without taking it, for `ralph
// status`. It agrees with AcquireLock: where flock works, a lock nobody
// holds on this host is stale whatever its pid, because the kernel holds
// a live owner's flock for it; elsewhere the holder's pid, start time and
// boot id decide.
func ReadLock(fs afero.Fs, root string) (LockInfo, Staleness, error) {
	path := filepath.Join(root, LockFile)
	b, err := afero.ReadFile(fs, path)
	if errors.Is(err, os.ErrNotExist) {
		return LockInfo{}, LockFree, nil
	}
	if errors.Is(err, rootfs.ErrNotRegular) {
		// A FIFO (say) a command put there: no ralph holds a lock
		// through it, the next one makes the file anew
		// (acquirer.recreate), and the error is the sentence naming it.
		return LockInfo{}, LockFree, err
	}
	if err != nil {
		return LockInfo{}, "", fmt.Errorf("read lock %s: %w", path, err)
	}
	info, ok := parseInfo(b)
	held, probed := probeHeld(fs, path)
	switch {
	case held:
		return info, LockHeld, nil
	case len(bytes.TrimSpace(b)) == 0:
		return info, LockFree, nil
	case !ok:
		// Torn by a crash in the middle of writing it.
		return info, LockStale, nil
	}
	return info, classify(info, selfInfo(""), probed), nil
}

// probeHeld tries a shared flock on a separate open file description and
// drops it at once. probed is false where flock cannot be used.
func probeHeld(fs afero.Fs, path string) (held, probed bool) {
	f, err := fs.Open(path)
	if err != nil {
		return false, false
	}
	defer f.Close()
	d, ok := f.(fder)
	if !ok {
		return false, false
	}
	switch err := tryFlock(d.Fd(), false); {
	case errors.Is(err, errWouldBlock):
		return true, true
	case err != nil:
		return false, false
	}
	unflock(d.Fd())
	return false, true
}

// classify judges a holder that holds no flock we could see. flockFree
// says flock works here and nobody holds it, which proves a local holder
// gone.
func classify(holder, me LockInfo, flockFree bool) Staleness {
	switch {
	case isForeign(holder, me):
		return LockForeign
	case flockFree:
		return LockStale
	case holder.BootID != "" && me.BootID != "" && holder.BootID != me.BootID:
		return LockStale
	case ProcessAlive(holder.PID, holder.StartTime):
		return LockHeld
	}
	return LockStale
}

func isForeign(holder, me LockInfo) bool {
	return holder.Hostname != "" && holder.Hostname != me.Hostname
}

// ProcessAlive reports whether pid names a running process started at
// startTime (clock ticks since boot; 0 matches any start time). Zombies
// count as dead. Where /proc is missing it cannot prove death and says yes.
func ProcessAlive(pid int, startTime uint64) bool {
	if pid <= 0 {
		return false
	}
	st, state, err := procStat(pid)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false
	case err != nil:
		return pidExists(pid)
	case state == 'Z' || state == 'X':
		return false
	}
	return startTime == 0 || st == startTime
}

// SelfStartTime is this process's start time, as ProcessStartTime says
// it (0 where it cannot be read).
func SelfStartTime() uint64 { return selfStartTime() }

// BootID names the machine's current boot ("" where it cannot be read):
// a pid and start time recorded under another boot name no process of
// this one.
func BootID() string { return bootID() }

// ProcessStartTime returns when pid started, in clock ticks since boot
// (field 22 of /proc/<pid>/stat). The error wraps os.ErrNotExist if there
// is no such process.
func ProcessStartTime(pid int) (uint64, error) {
	st, _, err := procStat(pid)
	return st, err
}

// openLockFile opens the lock file for reading and writing, creating it;
// created says this call made it, so it cannot hold a previous holder.
func openLockFile(fs afero.Fs, path string) (f afero.File, created bool, err error) {
	f, err = fs.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		return f, true, nil
	}
	f, err = fs.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, false, nil
}

// flockPatiently takes the exclusive flock, retrying for a moment: a
// `ralph status` probe holds a shared flock for microseconds, and a new
// owner needs a moment to write the info our error will report.
func flockPatiently(fd uintptr) error {
	var err error
	for i := 0; i < 5; i++ {
		if err = tryFlock(fd, true); !errors.Is(err, errWouldBlock) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

func closeLocked(f afero.File, fd uintptr) {
	unflock(fd)
	_ = f.Close()
}

// sameFile reports whether path still names the open file f.
func sameFile(fs afero.Fs, path string, f afero.File) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := fs.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// hasDescriptors reports whether files on fs are kernel files that flock
// can work on, judged by the directory so that nothing is created first.
func hasDescriptors(fs afero.Fs, dir string) bool {
	d, err := fs.Open(dir)
	if err != nil {
		return false
	}
	defer d.Close()
	_, ok := d.(fder)
	return ok
}
