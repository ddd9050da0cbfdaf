package text

import (
	"strconv"
	"testing"
)

func TestOneLineFirstLine(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{OneLine(" a\n  b\tc "), "a b c"},
		{OneLine(""), ""},
		{FirstLine("  first  \nsecond"), "first …"},
		{FirstLine("only\n\n  "), "only"},
		{FirstLine(" \n "), ""},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestDollars(t *testing.T) {
	for x, want := range map[float64]string{0: "$0.00", 2.5: "$2.50", 0.01: "$0.01", 0.0042: "$0.0042", 0.000123: "$0.00012",
		0.0001: "$0.0001", 0.0099: "$0.0099", 12.345: "$12.35", 0.004: "$0.004", -0.0005: "$-0.0005"} {
		if got := Dollars(x); got != want {
			t.Errorf("Dollars(%v) = %s, want %s", x, got, want)
		}
	}
}

// RoundUSD keeps six significant digits: a sum's binary noise goes,
// every real digit of a bill stays.
func TestRoundUSD(t *testing.T) {
	for x, want := range map[float64]string{
		(12*0.15 + 14*0.60) / 1e6: "0.0000102",
		0.1 + 0.2:                 "0.3",
		1234.5678:                 "1234.57",
		0:                         "0",
	} {
		if got := strconv.FormatFloat(RoundUSD(x), 'f', -1, 64); got != want {
			t.Errorf("RoundUSD(%v) = %s, want %s", x, got, want)
		}
	}
	if got := Dollars((12*0.15 + 14*0.60) / 1e6); got != "$0.00001" {
		t.Errorf("Dollars = %s", got)
	}
}
