//go:build !linux

package git

// groupTemps finds nothing where no /proc tells a process's open files:
// a repack stopped while it wrote leaves its temporary pack for git's
// prune (see the Linux version).
func groupTemps(int, string) []string { return nil }
