package loop

import "github.com/ralph-dev/ralph/coordinator/loop/decide"

// The circuit breaker (--breaker, default DefaultBreaker) trips when its
// condition holds after a failed attempt. With a person at the terminal
// (Options.Ask) it asks whether to go on, as it always did. Without
// one it has three states, as breakers in services do:
//
//   - closed: tasks run;
//   - open: it tripped; no task starts for the cooldown
//     (--breaker-cooldown, default 5 min), tasks already running finish;
//   - half-open: the cooldown passed; one task runs alone. Its success
//     closes the breaker (and the cooldown is back to its first length),
//     its failure opens it again for twice as long.
//
// Every change is a decision in decisions.jsonl (breaker_open,
// breaker_half_open, breaker_closed), a breaker event and the session's
// breaker field, which ralph status shows. The loop still ends at
// --max-iterations, so a task that never succeeds cannot keep it alive
// forever. The machine (coordinator/loop/machine) makes all of it; the
// loop carries out its effects.

// DefaultBreakerCooldown is how long a tripped breaker stays open the
// first time when nobody can be asked.
const DefaultBreakerCooldown = decide.DefaultBreakerCooldown
