//go:build race

package live

// raceEnabled: the race detector slows rendering about five times, and
// the random tests cut their cases to keep the suite's time.
const raceEnabled = true
