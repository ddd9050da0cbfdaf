package text

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "abc", 0}, {"verison", "version", 1}, {"sesions", "sessions", 1},
		{"loop", "logs", 2}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"naïve", "naive", 1},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
