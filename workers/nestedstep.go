package workers

import (
	"strings"

	"github.com/ralph-dev/ralph/workers/sandbox"
)

// WriteStep begins one call of a tool that may write files from ralph's
// own process, outside the sandbox's commands (write_file, edit_file,
// apply_patch, an MCP server's tool): the sandbox's nested guard, which
// checks after every command, checks after it too, since a key a file
// tool planted in a nested repository's configuration runs in the
// person's next git status (sandbox.Runner.BeginStep). done is called
// with the call's result once it returned: it adds what the check took
// back, naming the tool and the files it wrote.
func (w *Workspace) WriteStep() (done func(tool string, res Result) Result) {
	if w.runner == nil {
		return func(_ string, res Result) Result { return res }
	}
	check := w.runner.BeginStep()
	return func(tool string, res Result) Result {
		us := check()
		if len(us) == 0 {
			return res
		}
		by := "this call of " + tool
		var paths []string
		if res.Changed != nil {
			paths = append(paths, res.Changed.Path)
		}
		for _, c := range res.Changes {
			paths = append(paths, c.Path)
		}
		if len(paths) > 0 {
			by += " (" + strings.Join(paths, ", ") + ")"
		}
		if !strings.HasSuffix(res.Output, "\n") && res.Output != "" {
			res.Output += "\n"
		}
		res.Output += strings.Join(sandbox.UndoneNotes(us, by), "\n")
		return res
	}
}
