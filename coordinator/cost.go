package coordinator

import (
	"fmt"

	"github.com/ralph-dev/ralph/memory/text"
)

// CostLimitError is how a run that spent its --max-cost ends, in the
// local loop and on Temporal alike; its amounts are written by the one
// money rule, text.Dollars.
func CostLimitError(limit, spent float64) error {
	return fmt.Errorf("the cost limit of %s was reached (%s)", text.Dollars(limit), text.Dollars(spent))
}
