package memory

import (
	"os"
	"path/filepath"
	"strings"
)

// mountOf finds where the file system that holds dir is mounted, and its
// type, from /proc/self/mountinfo: the longest mount point dir lies under.
func mountOf(dir string) (mount, fstype string) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		// id parent major:minor root mount-point options [optional…] - type source super-options
		f := strings.Fields(line)
		sep := -1
		for i, w := range f {
			if w == "-" {
				sep = i
				break
			}
		}
		if len(f) < 5 || sep < 0 || sep+1 >= len(f) {
			continue
		}
		mp := unescapeMount(f[4])
		if within := mp == "/" || dir == mp || strings.HasPrefix(dir, mp+"/"); within && len(mp) >= len(mount) {
			mount, fstype = mp, f[sep+1]
		}
	}
	return mount, fstype
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
