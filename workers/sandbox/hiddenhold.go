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
// the bring-up holds one reading for all of them (HoldHidden), started
// at once, beside the walk that finds the project, and lets it go
// before the model is asked anything: every reading after that, a later
// workspace's or an added directory's, is made afresh from the home as
// it is then.

// hold is the reading kept while some HoldHidden is not released.
var hold struct {
	sync.Mutex
	n       int           // HoldHidden calls not released
	read    chan struct{} // closes once secrets and links are read
	secrets []string
	links   map[string]string
}

// HoldHidden reads the hidden paths now, on a goroutine of its own, and
// has every reading until release is called (once per HoldHidden) take
// that one: for a bring-up in which nothing can change the person's home.
func HoldHidden() (release func()) {
	hold.Lock()
	if hold.n++; hold.n == 1 {
		read := make(chan struct{})
		hold.read = read
		go func() {
			defer close(read)
			s, l := readHidden()
			hold.Lock()
			defer hold.Unlock()
			if hold.read == read {
				hold.secrets, hold.links = s, l
			}
		}()
	}
	hold.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			hold.Lock()
			defer hold.Unlock()
			if hold.n--; hold.n == 0 {
				hold.read, hold.secrets, hold.links = nil, nil, nil
			}
		})
	}
}

// heldHidden is a copy of the held reading, once it is read, if one is
// held: callers change what they are given (a policy lets some of them
// be read).
func heldHidden() ([]string, map[string]string, bool) {
	hold.Lock()
	read := hold.read
	hold.Unlock()
	if read == nil {
		return nil, nil, false
	}
	<-read
	hold.Lock()
	defer hold.Unlock()
	if hold.read != read {
		return nil, nil, false // released meanwhile
	}
	return slices.Clone(hold.secrets), maps.Clone(hold.links), true
}
