// Package planfile is the plans the task loop works, each format through
// one seam (Tracker, tracker.go): ralph's own task file RALPH_TASKS.md
// (tasks.go parses its checkboxes and marks, tasks_edit.go edits it in
// place, tasks_next.go picks the next task and orders the graph,
// tasks_verify.go its verify commands), ralph-tui's prd.json in place and
// its import (prd.go, prdtracker.go), ralphex plans (ralphex.go), Beads
// through bd (beadstracker.go), where plan files are kept (plans.go), and
// a task's completion, recorded in the progress file before the task is
// marked done, with a crashed run's recovery (complete.go). The files
// themselves are written through memory (atomic writes, the lock).
package planfile
