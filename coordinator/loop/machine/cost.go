package machine

import (
	"fmt"

	"github.com/ralph-dev/ralph/memory/text"
)

// costLimitError is how a run that spent its --max-cost ends, in the
// local loop and on Temporal alike (both run this machine); its amounts
// are written by the one money rule, text.Dollars.
func costLimitError(limit, spent float64) error {
	return fmt.Errorf("the cost limit of %s was reached (%s)", text.Dollars(limit), text.Dollars(spent))
}
