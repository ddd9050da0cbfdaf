package text

import "testing"

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
