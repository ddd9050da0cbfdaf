package sandbox

import (
	"maps"
	"slices"
	"sync"
)

// The hidden paths are read from the person's home: every secret path
// and its links resolved, and the links inside each secret directory
// followed (hiddenPaths). A session's bring-up needs them four times
// before the first model request (which directory may be the project,
// found by the command line and checked again when the project opens;
// the paths the model's tools keep away from; the sandbox's policy),
// and each reading cost more than half a millisecond of a one-shot's
// own time. Nothing the model does can come between those readings, so
// the bring-up holds one reading for all of them (HoldHidden) and lets
// it go before the model is asked anything: every reading after that,
// a later workspace's or an added directory's, is made afresh from the
// home as it is then.

// hold is the reading kept while some HoldHidden is not released.
var hold struct {
	sync.Mutex
	n       int // HoldHidden calls not released
	read    bool
	secrets []string
	links   map[string]string
}

// HoldHidden keeps the next reading of the hidden paths for every
// reading after it, until release is called (once per HoldHidden):
// for a bring-up in which nothing can change the person's home.
func HoldHidden() (release func()) {
	hold.Lock()
	hold.n++
	hold.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			hold.Lock()
			defer hold.Unlock()
			if hold.n--; hold.n == 0 {
				hold.read, hold.secrets, hold.links = false, nil, nil
			}
		})
	}
}

// heldHidden is a copy of the held reading, if there is one: callers
// change what they are given (a policy lets some of them be read).
func heldHidden() ([]string, map[string]string, bool) {
	hold.Lock()
	defer hold.Unlock()
	if hold.n == 0 || !hold.read {
		return nil, nil, false
	}
	return slices.Clone(hold.secrets), maps.Clone(hold.links), true
}

// keepHidden holds a reading just made, while a HoldHidden is not
// released.
func keepHidden(secrets []string, links map[string]string) {
	hold.Lock()
	defer hold.Unlock()
	if hold.n > 0 && !hold.read {
		hold.read, hold.secrets, hold.links = true, slices.Clone(secrets), maps.Clone(links)
	}
}
