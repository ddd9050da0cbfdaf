package planfile

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// graphTasks is a task list of n tasks, every third waiting for the one
// before it, with the last sharing the first one's id: the shape that
// made ralph status --graph quadratic, and endless with the shared id.
func graphTasks(n int) []byte {
	var b strings.Builder
	b.WriteString("# Tasks\n\n")
	for i := 0; i < n; i++ {
		id, dep := "t"+strconv.Itoa(i), ""
		if i == n-1 {
			id = "t0"
		}
		if i > 0 && i%3 == 0 {
			dep = " depends=t" + strconv.Itoa(i-1)
		}
		fmt.Fprintf(&b, "- [ ] task number %d <!-- ralph:id=%s%s -->\n", i, id, dep)
	}
	return []byte(b.String())
}

// BenchmarkTaskOrder10k: the order ralph status --graph prints for 10,000
// tasks, parsing included (was 165 s; linear now).
func BenchmarkTaskOrder10k(b *testing.B) {
	data := graphTasks(10_000)
	b.ResetTimer()
	for b.Loop() {
		f := ParseTasks(data)
		if got := len(f.Order()); got != 10_000 {
			b.Fatalf("Order has %d tasks, want 10000", got)
		}
		_ = f.GraphProblems()
	}
}
