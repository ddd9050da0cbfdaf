package git

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// groupTemps are the temporary files that the processes of the group
// pgid hold open for writing in packDir, by their names there.
// pack-objects writes its pack to tmp_pack_… and its index to tmp_idx_…
// without removing them when it is killed (git's prune takes them two
// weeks later), so a repack stopped in the middle of writing would leave
// a file as large as the pack behind. They are looked up before the stop,
// in the files the group has open, so that no one else's file is taken
// for one.
func groupTemps(pgid int, packDir string) []string {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var names []string
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || !inGroup(pid, pgid) {
			continue
		}
		fdDir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err != nil || filepath.Dir(target) != packDir {
				continue
			}
			if name := filepath.Base(target); strings.HasPrefix(name, "tmp_") && writable(p.Name(), fd.Name()) {
				names = append(names, name)
			}
		}
	}
	return names
}

// writable reports whether process pid holds its descriptor fd open for
// writing, from /proc/<pid>/fdinfo/<fd>: pack-objects writes its
// temporary files, and only reads the packs it takes objects from, which
// git finds under any name in the pack directory. A pack a command named
// tmp_… was taken for a temporary file of a stopped pack, and removed.
func writable(pid, fd string) bool {
	info, err := os.ReadFile(filepath.Join("/proc", pid, "fdinfo", fd))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(info)) {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			return err == nil && flags&3 != 0 // O_WRONLY or O_RDWR
		}
	}
	return false
}

// inGroup reports whether process pid is in the process group pgid, from
// its stat line: the group is the fifth field, the second (the command's
// name, in parentheses) may hold anything.
func inGroup(pid, pgid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(stat[i+1:]))
	return len(f) > 2 && f[2] == strconv.Itoa(pgid)
}
