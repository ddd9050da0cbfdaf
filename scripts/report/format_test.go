package report

import (
	"testing"
)

func TestFormatHelpers(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{thousands(0), "0"},
		{thousands(1234567), "1,234,567"},
		{thousands(-1500), "-1,500"},
		{money(nil), "unknown"},
		{money(ptr(0.0)), "$0.00"},
		{money(ptr(0.0042)), "$0.0042"},
		{money(ptr(1.5)), "$1.50"},
		{percent(nil), "-"},
		{percent(ptr(2.0 / 3)), "66.7%"},
		{oneLine("a\n  b\tc", 80), "a b c"},
		{oneLine("abcdefghij", 5), "abcd…"},
		{mdText("# not a heading <b>"), `\# not a heading &lt;b>`},
		{codeSpan("a`b"), "``a`b``"},
		{relPath("/home/u/src/x", "/home/u"), "~/src/x"},
		{relPath("/home/user2/x", "/home/u"), "/home/user2/x"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
