package planfile

import "strings"

// A task may name its own verify command in its notes, on a line of its
// own: "Verify: `go test ./calc` passes", as ralph plan writes it, or
// "verify: go test ./calc", as people write it. A command in backticks is
// taken from the line; otherwise the rest of the line is the command.
// Several such lines must all pass, in order. The task loop runs them for
// that task after the run's own --verify.

// Verify is the verify command task id names in its notes, its lines
// joined with &&; "" when it names none.
func (f *TaskFile) Verify(id string) string {
	return VerifyIn(f.Notes(id))
}

// VerifyIn is the verify command notes name (see TaskFile.Verify).
func VerifyIn(notes string) string {
	var cmds []string
	for _, l := range strings.Split(notes, "\n") {
		l = strings.TrimSpace(l)
		if n := listMarker(l); n > 0 && n < len(l) && l[n] == ' ' {
			l = strings.TrimSpace(l[n+1:])
		}
		const key = "verify:"
		if len(l) <= len(key) || !strings.EqualFold(l[:len(key)], key) {
			continue
		}
		cmd := strings.TrimSpace(l[len(key):])
		if strings.HasPrefix(cmd, "`") {
			if end := strings.Index(cmd[1:], "`"); end > 0 {
				cmd = cmd[1 : end+1]
			}
		}
		if cmd = strings.TrimSpace(cmd); cmd != "" {
			cmds = append(cmds, cmd)
		}
	}
	return strings.Join(cmds, " && ")
}
