// Package filestamp tells whether a file is the one seen before, as no
// command can fake: its identity (device and inode) and its change time
// (ctime), which moves with every write and, unlike the modification
// time, no command can set back.
package filestamp
