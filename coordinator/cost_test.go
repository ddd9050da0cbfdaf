package coordinator

import "testing"

func TestFormatUSD(t *testing.T) {
	for x, want := range map[float64]string{0: "$0.00", 2.5: "$2.50", 0.01: "$0.01", 0.0042: "$0.0042", 0.000123: "$0.00012",
		0.0001: "$0.0001", 0.0099: "$0.0099", 12.345: "$12.35"} {
		if got := FormatUSD(x); got != want {
			t.Errorf("FormatUSD(%v) = %s, want %s", x, got, want)
		}
	}
}
