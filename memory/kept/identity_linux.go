package kept

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// openPath asks the kernel where the open file f is now.
func openPath(f *os.File) (string, bool) {
	var p string
	var err error
	rc, cerr := f.SyscallConn()
	if cerr != nil {
		return "", false
	}
	cerr = rc.Control(func(fd uintptr) {
		p, err = os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10))
	})
	if cerr != nil || err != nil || !filepath.IsAbs(p) || strings.HasSuffix(p, " (deleted)") {
		return "", false
	}
	return p, true
}
