package git

import "os"

// terminate ends a git: Windows has no SIGTERM to send.
func terminate(p *os.Process) error { return p.Kill() }
