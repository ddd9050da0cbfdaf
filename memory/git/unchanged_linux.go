package git

import (
	"io/fs"
	"syscall"
)

// statMatches reports whether a file's lstat is the index entry's stat
// data: its times, inode, owner, size and kind and executable bit, each
// as git keeps it (the low 32 bits).
func statMatches(e indexEntry, fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	now := [10]uint32{
		uint32(st.Ctim.Sec), uint32(st.Ctim.Nsec), uint32(st.Mtim.Sec), uint32(st.Mtim.Nsec),
		e.stat[4], uint32(st.Ino), e.stat[6], st.Uid, st.Gid, uint32(st.Size),
	}
	if now != e.stat {
		return false
	}
	switch e.stat[6] {
	case 0o120000:
		return fi.Mode()&fs.ModeSymlink != 0
	case 0o100755:
		return fi.Mode().IsRegular() && fi.Mode()&0o100 != 0
	default:
		return fi.Mode().IsRegular() && fi.Mode()&0o100 == 0
	}
}
