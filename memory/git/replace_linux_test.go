package git

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkReplace10k: what writing 10,000 small files over themselves in
// one directory costs undo's way (writeData on the writer pool: each a
// temporary file written whole, exchanged with the file and the old one
// unlinked, so the file is whole at every moment a kill may come) against
// git checkout's (the file unlinked, then created and written: missing or
// short for that moment), on as many writers, each pair timed back to
// back. exchange/unlink-create is the floor of writing a file anew in
// BenchmarkUndo10k's undo/git, the part of it no work around the writes
// can take away: 1.8 to 2.0 on the unjournaled ext4 of these 2-core
// machines, 1.8 on a journaled one, where undo/git's target is 1.5 (issue
// 94). An undo of appended files is under it: they are cut back in place
// (shrink_linux.go), which needs no new file.
func BenchmarkReplace10k(b *testing.B) {
	const n = 10000
	dir := b.TempDir()
	names := make([]string, n)
	data := make([][]byte, n)
	for i := range names {
		names[i] = fmt.Sprintf("%05d.txt", i)
		data[i] = fmt.Appendf(nil, "original %d\n", i)
		if err := os.WriteFile(filepath.Join(dir, names[i]), data[i], 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var exchange, unlinkCreate time.Duration
	for b.Loop() {
		start := time.Now()
		bn, err := openBeneath(dir)
		if err != nil {
			b.Fatal(err)
		}
		w := newWriterPool(bn)
		for i, name := range names {
			if err := w.write(name, "100644", data[i], false); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.wait(); err != nil {
			b.Fatal(err)
		}
		bn.Close()
		exchange += time.Since(start)
		start = time.Now()
		if err := unlinkAndCreate(dir, names, data, poolWriters); err != nil {
			b.Fatal(err)
		}
		unlinkCreate += time.Since(start)
	}
	b.ReportMetric(float64(exchange)/float64(unlinkCreate), "exchange/unlink-create")
	b.ReportMetric(float64(exchange.Milliseconds())/float64(b.N), "exchange-ms")
	b.ReportMetric(float64(unlinkCreate.Milliseconds())/float64(b.N), "unlink-create-ms")
}

// unlinkAndCreate writes each file as git checkout does, on workers
// goroutines: unlinked, created anew (O_EXCL) and written.
func unlinkAndCreate(dir string, names []string, data [][]byte, workers int) error {
	d, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(d)
	jobs := make(chan int, 64)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				_ = unix.Unlinkat(d, names[i], 0)
				fd, err := unix.Openat(d, names[i], unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o666)
				if err == nil {
					_, err = unix.Write(fd, data[i])
					_ = unix.Close(fd)
				}
				if err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range names {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return first
}
