package text

import (
	"math"
	"strconv"
	"strings"
)

// OneLine joins the lines and runs of white space of s into single
// spaces, so a task, a command or an error message reads as one line
// wherever it is shown or recorded.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// FirstLine is the first non-blank line of s, trimmed, with " …" when
// more text follows: a tool's output or an agent's message folded to the
// line a person reads first. It is "" when s is blank.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	first, rest, _ := strings.Cut(s, "\n")
	first = strings.TrimSpace(first)
	if strings.TrimSpace(rest) != "" {
		return first + " " + Ellipsis
	}
	return first
}

// Dollars is the one way ralph writes an amount of money: two decimals
// from a cent up ($2.50), and below a cent two significant digits with
// trailing zeros dropped ($0.0042, $0.00012), so a cost limit of $0.001
// never reads as "$0.00". It lives here rather than with the faces because
// the core words its cost-limit errors and questions with it too.
func Dollars(x float64) string {
	x = RoundUSD(x)
	a := math.Abs(x)
	if a == 0 || a >= 0.01 || math.IsNaN(a) || math.IsInf(a, 0) {
		return "$" + strconv.FormatFloat(x, 'f', 2, 64)
	}
	digits := int(math.Ceil(-math.Log10(a))) + 1
	return "$" + strings.TrimRight(strconv.FormatFloat(x, 'f', digits, 64), "0")
}

// RoundUSD is the one rounding of an amount of money that ralph keeps,
// records or serializes: six significant digits. A price per million
// tokens times a token count, or a sum of such costs, carries binary
// floating-point noise (0.000010199999999999999 for $0.0000102) that a
// JSON result, a stream-json line or a report would otherwise print as
// it is; six digits keep every cent of any real bill and a millionth of
// a cent of the smallest request.
func RoundUSD(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	if err != nil {
		return x
	}
	return r
}

// Lines is how many lines s holds, counted the one way every fold of
// pasted or shown text counts them: a line break ends a line, and one at
// the very end starts none ("a\nb\n" is two lines, as is "a\nb"); "" is
// none. A paste ending in a newline was folded as one line more than the
// same paste without it.
func Lines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1
}
