package memory

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/ralph-dev/ralph/memory/memorytest"
	"github.com/spf13/afero"
)

// dirNames lists dir, to spot temporary files left behind.
func dirNames(t *testing.T, fs afero.Fs, dir string) []string {
	t.Helper()
	infos, err := afero.ReadDir(fs, dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fi := range infos {
		names = append(names, fi.Name())
	}
	return names
}

func readString(t *testing.T, fs afero.Fs, path string) string {
	t.Helper()
	b, err := afero.ReadFile(fs, path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteFileAtomicReplaces(t *testing.T) {
	fs := afero.NewMemMapFs()
	path := "/proj/.ralph/session.json"
	for _, content := range []string{"first version, longer than the next", "second", ""} {
		if err := WriteFileAtomic(fs, path, []byte(content), 0o644); err != nil {
			t.Fatalf("WriteFileAtomic: %v", err)
		}
		if got := readString(t, fs, path); got != content {
			t.Errorf("content = %q, want %q", got, content)
		}
	}
	if names := dirNames(t, fs, "/proj/.ralph"); len(names) != 1 || names[0] != "session.json" {
		t.Errorf("directory holds %q, want only session.json", names)
	}
}

// TestWriteFileAtomicFailureKeepsOldFile: a failed replace leaves the old
// file and no temporary, and says which file could not be saved and why,
// in words: never the temporary file's name nor the system calls under it
// (issue 67: "replace X: open X: renameat …").
func TestWriteFileAtomicFailureKeepsOldFile(t *testing.T) {
	tests := []struct {
		name   string
		inject func(*memorytest.FailFs, error)
		cause  error
		words  string // why, as the message says it
	}{
		{"full disk on write", func(f *memorytest.FailFs, e error) { f.WriteErr = e }, syscall.ENOSPC, "no space left on device"},
		{"quota on write", func(f *memorytest.FailFs, e error) { f.WriteErr = e }, syscall.EDQUOT, "disk quota exceeded"},
		{"I/O error on sync", func(f *memorytest.FailFs, e error) { f.SyncErr = e }, syscall.EIO, "an I/O error"},
		{"full disk on close", func(f *memorytest.FailFs, e error) { f.CloseErr = e }, syscall.ENOSPC, "no space left on device"},
		{"rename refused", func(f *memorytest.FailFs, e error) { f.RenameErr = e }, syscall.EXDEV, "invalid cross-device link"},
		{"I/O error on rename", func(f *memorytest.FailFs, e error) { f.RenameErr = e }, syscall.EIO, "an I/O error"},
		{"cannot create temp", func(f *memorytest.FailFs, e error) { f.OpenErr = e }, syscall.EACCES, "permission denied"},
	}
	const path = "/proj/.ralph/session.json"
	const old = `{"status":"running"}`
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := afero.NewMemMapFs()
			if err := afero.WriteFile(mem, path, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			fs := &memorytest.FailFs{Fs: mem}
			tt.inject(fs, tt.cause)
			err := WriteFileAtomic(fs, path, []byte(`{"status":"completed","much":"longer content"}`), 0o644)
			if !errors.Is(err, tt.cause) {
				t.Fatalf("err = %v, want one wrapping %v", err, tt.cause)
			}
			// The message names the file the user knows, not the temp.
			if want := "could not save " + path + ": " + tt.words; err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
			if got := readString(t, mem, path); got != old {
				t.Errorf("old file changed to %q", got)
			}
			if names := dirNames(t, mem, filepath.Dir(path)); len(names) != 1 {
				t.Errorf("directory holds %q after the failure, want only session.json", names)
			}
		})
	}
}

// umask reads the process umask without changing it (changing it would race
// with anything else creating files); tests needing it skip elsewhere.
func umask(t *testing.T) os.FileMode {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status to read the umask from")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Umask:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			if err != nil {
				t.Fatal(err)
			}
			return os.FileMode(m)
		}
	}
	t.Skip("umask not reported in /proc/self/status")
	return 0
}

func TestWriteFileAtomicModeOnDisk(t *testing.T) {
	mask := umask(t)
	fs := afero.NewOsFs()
	dir := t.TempDir()
	for _, perm := range []os.FileMode{0o600, 0o640, 0o644, 0o444} {
		t.Run(perm.String(), func(t *testing.T) {
			path := filepath.Join(dir, "f"+strconv.FormatUint(uint64(perm), 8))
			// Replacing an existing file with other permissions: the result
			// must have the mode asked for, not the old file's.
			if err := os.WriteFile(path, []byte("old"), 0o666); err != nil {
				t.Fatal(err)
			}
			if err := WriteFileAtomic(fs, path, []byte("new"), perm); err != nil {
				t.Fatalf("WriteFileAtomic: %v", err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if want := perm &^ mask; fi.Mode().Perm() != want {
				t.Errorf("mode = %v, want %v (%v under umask %03o)", fi.Mode().Perm(), want, perm, mask)
			}
			if got, _ := os.ReadFile(path); string(got) != "new" {
				t.Errorf("content = %q", got)
			}
		})
	}
}

// content is what writer w writes: large enough to span many pages so
// that a torn file (part one writer, part another, or truncated) is
// detectable, and self-identifying so the check is a lookup.
func content(w, size int) []byte {
	head := fmt.Sprintf("writer %d\n", w)
	return append([]byte(head), bytes.Repeat([]byte{byte('a' + w)}, size-len(head))...)
}

func TestWriteFileAtomicConcurrentOnDisk(t *testing.T) {
	const writers, rounds, size = 8, 10, 64 << 10
	fs := afero.NewOsFs()
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	valid := map[string]bool{}
	for w := range writers {
		valid[string(content(w, size))] = true
	}
	if err := WriteFileAtomic(fs, path, content(0, size), 0o644); err != nil {
		t.Fatal(err)
	}

	var done atomic.Bool
	var readers sync.WaitGroup
	var reads, torn atomic.Int64
	for range 2 {
		readers.Go(func() {
			for !done.Load() {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Errorf("read during writes: %v", err)
					return
				}
				reads.Add(1)
				if !valid[string(b)] {
					torn.Add(1)
				}
			}
		})
	}
	var writersWG sync.WaitGroup
	for w := range writers {
		writersWG.Go(func() {
			data := content(w, size)
			for range rounds {
				if err := WriteFileAtomic(fs, path, data, 0o644); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		})
	}
	writersWG.Wait()
	done.Store(true)
	readers.Wait()

	if n := torn.Load(); n > 0 {
		t.Errorf("%d of %d reads saw a torn file", n, reads.Load())
	}
	if b, _ := os.ReadFile(path); !valid[string(b)] {
		t.Errorf("final file is torn (%d bytes)", len(b))
	}
	if names := dirNames(t, fs, dir); len(names) != 1 {
		t.Errorf("directory holds %d entries after the writes, want only state.json: %q", len(names), names)
	}
}

func TestAppendFile(t *testing.T) {
	fs := afero.NewMemMapFs()
	path := "/proj/.ralph/sessions/x/events.jsonl"
	for i, sync := range []bool{false, true, false} {
		if err := AppendFile(fs, path, []byte(fmt.Sprintf("line %d\n", i)), sync); err != nil {
			t.Fatalf("AppendFile: %v", err)
		}
	}
	if got, want := readString(t, fs, path), "line 0\nline 1\nline 2\n"; got != want {
		t.Errorf("content = %q, want %q", got, want)
	}

	ffs := &memorytest.FailFs{Fs: fs, WriteErr: syscall.ENOSPC}
	err := AppendFile(ffs, path, []byte("more\n"), true)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v, want ENOSPC naming %s", err, path)
	}
}

// A full disk in the middle of an append must not leave half a line in the
// log, or the next successful append would bury it mid-file.
func TestAppendFileFailureLeavesNoTornLine(t *testing.T) {
	mem := afero.NewMemMapFs()
	ffs := &memorytest.FailFs{Fs: mem}
	if err := AppendFile(ffs, "/log.jsonl", []byte("{\"a\":1}\n"), false); err != nil {
		t.Fatal(err)
	}
	ffs.WriteErr = syscall.ENOSPC
	err := AppendFile(ffs, "/log.jsonl", []byte("{\"b\":2222222222}\n"), false)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "/log.jsonl") {
		t.Fatalf("err = %v", err)
	}
	ffs.WriteErr = nil
	if err := AppendFile(ffs, "/log.jsonl", []byte("{\"c\":3}\n"), false); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, mem, "/log.jsonl"); got != "{\"a\":1}\n{\"c\":3}\n" {
		t.Fatalf("log = %q", got)
	}
}

// ReplaceByte changes one byte of a file that is still what its caller
// read, however long (the check reads it a piece at a time), and refuses
// one that is shorter, longer or different anywhere, changing nothing.
func TestReplaceByteChecksTheWholeFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fs := afero.NewBasePathFs(afero.NewOsFs(), dir)
	was := bytes.Repeat([]byte("- [ ] task <!-- ralph:id=t1 -->\n"), 3000) // 96 KB, three pieces
	for name, now := range map[string][]byte{
		"shorter":        was[:len(was)-1],
		"longer":         append(bytes.Clone(was), '\n'),
		"changed at end": append(bytes.Clone(was[:len(was)-1]), 'x'),
		"changed inside": func() []byte { b := bytes.Clone(was); b[40000] = 'x'; return b }(),
		"empty":          nil,
	} {
		if err := afero.WriteFile(fs, name, now, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := ReplaceByte(fs, name, 3, 'x', was); !errors.Is(err, ErrChangedUnderfoot) {
			t.Errorf("%s: %v, want ErrChangedUnderfoot", name, err)
		}
		if got, _ := afero.ReadFile(fs, name); !bytes.Equal(got, now) {
			t.Errorf("%s: the file was changed", name)
		}
	}
	for _, size := range []int{1, 32 << 10, 64 << 10, len(was)} {
		name := fmt.Sprintf("same-%d", size)
		if err := afero.WriteFile(fs, name, was[:size], 0o644); err != nil {
			t.Fatal(err)
		}
		if err := ReplaceByte(fs, name, 0, '#', was[:size]); err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		want := append([]byte("#"), was[1:size]...)
		if got, _ := afero.ReadFile(fs, name); !bytes.Equal(got, want) {
			t.Errorf("%d bytes: the byte was not changed", size)
		}
	}
}
