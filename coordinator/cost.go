package coordinator

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// FormatUSD shows a cost in dollars with enough digits to tell amounts
// below a cent apart: $2.50, $0.0042, $0.00012. A cost limit of $0.001
// must not read as "$0.00".
func FormatUSD(x float64) string {
	a := math.Abs(x)
	if a == 0 || a >= 0.01 || math.IsNaN(a) || math.IsInf(a, 0) {
		return "$" + strconv.FormatFloat(x, 'f', 2, 64)
	}
	// Two significant digits, trailing zeros dropped.
	digits := int(math.Ceil(-math.Log10(a))) + 1
	s := strings.TrimRight(strconv.FormatFloat(x, 'f', digits, 64), "0")
	return "$" + s
}

// CostLimitError is how a run that spent its --max-cost ends, in the
// local loop and on Temporal alike.
func CostLimitError(limit, spent float64) error {
	return fmt.Errorf("the cost limit of %s was reached (%s)", FormatUSD(limit), FormatUSD(spent))
}
