package startup

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mappedKB is the size and the resident part, in kB, of the mapping of
// /proc/self/smaps that holds addr.
func mappedKB(t *testing.T, addr uintptr) (size, rss int) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m, ok := parseMapping([]byte(line)); ok {
			if in {
				break
			}
			in = m.lo <= addr && addr < m.hi
			continue
		}
		if !in {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		n, _ := strconv.Atoi(fields[1])
		switch fields[0] {
		case "Size:":
			size = n
		case "Rss:":
			rss = n
		}
	}
	if size == 0 {
		t.Fatalf("no mapping holds %#x", addr)
	}
	return size, rss
}

// The package's initialisation maps the program's text: the test binary's
// own, which is in the page cache, having just been written.
func TestInitMapsTheText(t *testing.T) {
	size, _ := mappedKB(t, codeAddr())
	t.Logf("text mapping: %d kB; %d kB populated", size, populated>>10)
	if int(populated>>10) < size {
		t.Fatalf("init populated %d kB, less than the text's %d kB", populated>>10, size)
	}
}

// Pages the page cache does not hold are left to be read when touched: a
// file whose first quarter alone is cached keeps its second half uncached
// after populateResident over the whole, and its first quarter is mapped.
func TestOnlyResidentPagesArePopulated(t *testing.T) {
	const size = 8 << 20
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), size), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Fsync(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	fadvise := func(advice int) {
		if err := unix.Fadvise(int(f.Fd()), 0, size, advice); err != nil {
			t.Skip("fadvise:", err)
		}
	}
	fadvise(unix.FADV_DONTNEED)
	fadvise(unix.FADV_RANDOM) // no read-ahead past the quarter read
	if _, err := f.ReadAt(make([]byte, size/4), 0); err != nil {
		t.Fatal(err)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(data)
	lo := uintptr(unsafe.Pointer(&data[0]))
	resident := func(from, to int) int {
		vec := make([]byte, (to-from)/os.Getpagesize())
		if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, lo+uintptr(from), uintptr(to-from), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
			t.Fatal("mincore:", errno)
		}
		n := 0
		for _, v := range vec {
			n += int(v & 1)
		}
		return n
	}
	if n := resident(size/2, size); n > 0 {
		t.Skipf("the page cache kept %d pages of the file's second half", n)
	}
	if _, rss := mappedKB(t, lo); rss != 0 {
		t.Fatalf("%d kB of a mapping nothing touched are resident", rss)
	}
	populateResident(lo, lo+size)
	if n := resident(size/2, size); n != 0 {
		t.Fatalf("%d pages of the uncached half were read in", n)
	}
	if _, rss := mappedKB(t, lo); rss < size/4>>10 {
		t.Fatalf("%d kB of the cached quarter are mapped, want %d", rss, size/4>>10)
	}
}

func TestParseMapping(t *testing.T) {
	for _, c := range []struct {
		line string
		want mapping
		ok   bool
	}{
		{"00400000-01216000 r-xp 00000000 fe:01 1234    /usr/local/bin/ralph", mapping{0x400000, 0x1216000, false, "/usr/local/bin/ralph"}, true},
		{"02227000-0231e000 rw-p 01e27000 fe:01 1234   /home/a b/ralph (deleted)", mapping{0x2227000, 0x231e000, true, "/home/a b/ralph (deleted)"}, true},
		{"7ffd1000-7ffd2000 r-xp 00000000 00:00 0                          [vdso]", mapping{0x7ffd1000, 0x7ffd2000, false, "[vdso]"}, true},
		{"c0000000-c0400000 rw-p 00000000 00:00 0 ", mapping{0xc0000000, 0xc0400000, true, ""}, true},
		{"zz-10 r-xp", mapping{}, false},
		{"20-10 r-xp 0 0 0 /x", mapping{}, false},
		{"", mapping{}, false},
	} {
		got, ok := parseMapping([]byte(c.line))
		if ok != c.ok || ok && got != c.want {
			t.Errorf("parseMapping(%q) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}
