//go:build linux

package sandbox

// A ralph that ends cleanly checks the repositories' configuration once
// more as its session ends (Runner.Close), and what appears after is the
// person's. A ralph killed between two steps leaves its record marked
// clean: checked after its last step, but what a process of its session
// wrote after that check (a background command, a server it started) is
// not known from what the person did since. The next ralph in the
// project never primes such a key as the person's: it compares the
// repositories with that record, the state after the last check, and
// takes back every program key that appeared since, keeping the file it
// replaced beside it. Only the nested repositories' part of the record
// is used: the Landlock-only guard's files and the absent paths were
// put back by that check already, and the person may change them now.

// now is k with the generations its guards are at now.
func (k recordKey) now() recordKey {
	if k.g != nil {
		k.ggen = k.g.generation()
	}
	if k.n != nil {
		k.ngen = k.n.generation()
	}
	return k
}

// recoverNested takes back the program keys that appeared in the
// project's repositories since the record.
func (rec *guardRecord) recoverNested() []Undone {
	if rec.Nested == nil {
		return nil
	}
	return nestedFromRecord(rec.Root, rec.Nested).check()
}
