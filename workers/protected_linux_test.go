package workers_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/workers"
	"golang.org/x/sys/unix"
)

// TestWriteFileSymlinkSwapRace swaps a symlink between a directory inside
// the root and one outside it while write_file writes through it: with the
// kernel's beneath-resolution not one byte may land outside.
func TestWriteFileSymlinkSwapRace(t *testing.T) {
	if !workers.HasOpenat2() {
		t.Skip("this kernel has no openat2; the fallback's check-then-use window is documented")
	}
	ts := fileTools(t)
	root := ts.Root()
	outside := t.TempDir()
	writeTestFile(t, filepath.Join(root, "in", "keep"), "")
	writeTestFile(t, filepath.Join(root, "in", "f.txt"), "")
	writeTestFile(t, filepath.Join(outside, "f.txt"), "outside\n")
	const n = 1000
	writeTestFile(t, filepath.Join(root, "real", "keep"), "")
	if err := os.Symlink(outside, filepath.Join(root, "real.out")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path, link string
		in, out          string
	}{
		// The swapped symlink is a directory on the way, or the file itself.
		{"dir", "link/f.txt", "link", "in", outside},
		{"file", "flink", "flink", "in/f.txt", filepath.Join(outside, "f.txt")},
		// A real directory and a symlink leading out trade places
		// atomically (RENAME_EXCHANGE), so the path checked is the path
		// used, spelled the same, but not the same directory.
		{"exchange", "real/f.txt", "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			link := filepath.Join(root, c.link)
			swap := func(i int) error {
				if c.link == "" {
					return unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, "real"), unix.AT_FDCWD, filepath.Join(root, "real.out"), unix.RENAME_EXCHANGE)
				}
				dest := c.in
				if i%2 == 0 {
					dest = c.out
				}
				tmp := link + ".swap"
				os.Remove(tmp)
				if err := os.Symlink(dest, tmp); err != nil {
					return err
				}
				return os.Rename(tmp, link)
			}
			if c.link != "" {
				if err := os.Symlink(c.in, link); err != nil {
					t.Fatal(err)
				}
			}
			// The swapper goes on until the writer is done, so every write
			// races with swaps; it swaps at least n times.
			var wg sync.WaitGroup
			stop := make(chan struct{})
			swaps := 0
			wg.Go(func() {
				for i := 0; ; i++ {
					if i >= n {
						select {
						case <-stop:
							swaps = i
							return
						default:
						}
					}
					if err := swap(i); err != nil {
						t.Error(err)
						return
					}
				}
			})
			wrote := 0
			for i := range n {
				res := call(t, ts, "write_file", map[string]any{"path": c.path, "content": fmt.Sprintf("write %d\n", i)})
				if !res.IsError {
					wrote++
				} else if !strings.Contains(res.Output, "outside the project root") {
					t.Errorf("write %d: %s", i, res.Output)
				}
			}
			close(stop)
			wg.Wait()
			got := snapshot(t, outside)
			if len(got) != 2 || got["f.txt"] != fmt.Sprintf("%v %q", os.FileMode(0o644), "outside\n") {
				t.Fatalf("bytes landed outside the root: %v", got)
			}
			if wrote == 0 {
				t.Fatal("no write went through while the link pointed inside")
			}
			if wrote == n {
				t.Fatal("every write saw the link inside: the swaps did not race with the writes")
			}
			t.Logf("%d of %d writes went inside, the rest were refused; %d swaps", wrote, n, swaps)
		})
	}
	assertNoTempFiles(t, root)
}

// TestReadFileSymlinkSwapRace: reads through a swapped symlink never
// return a byte of a file outside the root.
func TestReadFileSymlinkSwapRace(t *testing.T) {
	if !workers.HasOpenat2() {
		t.Skip("this kernel has no openat2")
	}
	ts := fileTools(t)
	root := ts.Root()
	outside := t.TempDir()
	writeTestFile(t, filepath.Join(root, "in", "f.txt"), "inside\n")
	writeTestFile(t, filepath.Join(outside, "f.txt"), "SECRET\n")
	link := filepath.Join(root, "link")
	if err := os.Symlink("in", link); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		tmp := link + ".swap"
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			dest := "in"
			if i%2 == 0 {
				dest = outside
			}
			os.Remove(tmp)
			os.Symlink(dest, tmp)
			os.Rename(tmp, link)
		}
	})
	defer wg.Wait()
	defer close(stop)
	for i := range 1000 {
		for _, c := range []struct{ tool, path string }{{"read_file", "link/f.txt"}, {"search", "link"}, {"list_files", "link"}} {
			res := call(t, ts, c.tool, map[string]any{"path": c.path, "pattern": "."})
			if strings.Contains(res.Output, "SECRET") {
				t.Fatalf("%s %d read outside the root: %q", c.tool, i, res.Output)
			}
		}
	}
}
