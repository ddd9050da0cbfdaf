package startup

import (
	"syscall"
	"unsafe"
)

// madvPopulateRead is MADV_POPULATE_READ (Linux 5.14): map the pages of a
// range now, as reading each would, without a fault for each. An older
// kernel answers EINVAL and nothing happens.
const madvPopulateRead = 22

// pageSize is the page the residency vector counts in; a kernel with
// larger pages only makes the runs coarser.
var pageSize = uintptr(syscall.Getpagesize())

// populated is how many bytes of the program prefault asked the kernel
// to map, for the tests.
var populated uintptr

// prefault maps the pages of ralph's own program that the page cache
// already holds: the inits that follow and the command touch hundreds of
// pages of the program's text and read-only data, each first touch a
// page fault.
func prefault() {
	var buf [8 << 10]byte
	maps := readMaps(buf[:])
	self := pathOf(maps, codeAddr())
	if self == "" {
		return
	}
	for rest := maps; len(rest) > 0; {
		var line []byte
		line, rest = cutLine(rest)
		m, ok := parseMapping(line)
		// Writable mappings (the program's data) are left alone: a
		// page mapped for reading is faulted again at its first write.
		if !ok || m.path != self || m.writable {
			continue
		}
		populateResident(m.lo, m.hi)
	}
}

// readMaps is as much of /proc/self/maps as buf holds, whole lines only:
// a process this young has a few kilobytes of it, and the program's own
// mappings, at the lowest addresses, come first.
func readMaps(buf []byte) []byte {
	fd, err := syscall.Open("/proc/self/maps", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || m == 0 {
			break
		}
		n += m
	}
	for n > 0 && buf[n-1] != '\n' {
		n--
	}
	return buf[:n]
}

// marker is a function whose address is in the program's text.
//
//go:noinline
func marker() {}

// codeAddr is the address of marker's code.
func codeAddr() uintptr {
	f := marker
	return **(**uintptr)(unsafe.Pointer(&f))
}

// pathOf is the path of the file mapped at addr ("" when no file is).
func pathOf(maps []byte, addr uintptr) string {
	for rest := maps; len(rest) > 0; {
		var line []byte
		line, rest = cutLine(rest)
		if m, ok := parseMapping(line); ok && m.lo <= addr && addr < m.hi {
			if len(m.path) == 0 || m.path[0] != '/' {
				return ""
			}
			return m.path
		}
	}
	return ""
}

// populateResident maps the pages of [lo, hi) that the page cache holds,
// a run of them at a time. A page it does not hold is left to be read
// when touched: populating it would read the whole program from the disk
// (a cold cache, a program on a network file system) where the command
// needs a part of it.
func populateResident(lo, hi uintptr) {
	var vec [4096]byte
	for start := lo; start < hi; {
		end := min(hi, start+uintptr(len(vec))*pageSize)
		pages := (end - start + pageSize - 1) / pageSize
		if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, start, end-start, uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
			return
		}
		for i := uintptr(0); i < pages; {
			if vec[i]&1 == 0 {
				i++
				continue
			}
			j := i
			for j < pages && vec[j]&1 != 0 {
				j++
			}
			from, to := start+i*pageSize, min(end, start+j*pageSize)
			if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, from, to-from, madvPopulateRead); errno == syscall.EINVAL {
				return // a kernel before 5.14
			}
			populated += to - from
			i = j
		}
		start = end
	}
}

// mapping is a line of /proc/self/maps.
type mapping struct {
	lo, hi   uintptr
	writable bool
	path     string
}

// parseMapping reads "lo-hi perms offset dev inode path".
func parseMapping(line []byte) (mapping, bool) {
	var m mapping
	rest := line
	var ok bool
	if m.lo, rest, ok = hexUntil(rest, '-'); !ok {
		return m, false
	}
	if m.hi, rest, ok = hexUntil(rest, ' '); !ok || m.hi <= m.lo {
		return m, false
	}
	perms, rest := field(rest)
	if len(perms) < 4 {
		return m, false
	}
	m.writable = perms[1] == 'w'
	for range 3 { // offset, device, inode
		_, rest = field(rest)
	}
	for len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	m.path = string(rest)
	return m, true
}

// hexUntil reads a hexadecimal number up to sep, and what follows sep.
func hexUntil(b []byte, sep byte) (uintptr, []byte, bool) {
	var v uintptr
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uintptr(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uintptr(c-'a'+10)
		case c == sep && i > 0:
			return v, b[i+1:], true
		default:
			return 0, nil, false
		}
	}
	return 0, nil, false
}

// field is b's next space-separated field, and what follows it.
func field(b []byte) ([]byte, []byte) {
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	for i, c := range b {
		if c == ' ' {
			return b[:i], b[i:]
		}
	}
	return b, nil
}

// cutLine is b's first line and what follows it.
func cutLine(b []byte) ([]byte, []byte) {
	for i, c := range b {
		if c == '\n' {
			return b[:i], b[i+1:]
		}
	}
	return b, nil
}
