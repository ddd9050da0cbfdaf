package workers

import (
	"testing"
	"time"
)

func TestFormatSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{
		120 * time.Second:       "120s",
		3600 * time.Second:      "3600s",
		1500 * time.Millisecond: "1.5s",
	} {
		if got := FormatSeconds(d); got != want {
			t.Errorf("FormatSeconds(%v) = %q, want %q", d, got, want)
		}
	}
}
