// Package takeover takes a project over from the ralph before this one:
// the project's lock (Acquire), with --force stopping a live holder the
// lock itself shows, and, under the lock, recovery from a ralph that is
// gone (Recover): its session marked interrupted, its tasks in progress
// settled, a corrupt session.json set aside and rebuilt. It never imports
// the project, which calls both as it opens.
package takeover
