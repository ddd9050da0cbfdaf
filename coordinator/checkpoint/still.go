package checkpoint

import (
	"fmt"

	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/workers/proctree"
)

// A checkpoint's git processes (status, update-index, add, hash-object,
// update-ref) look at a path and then open it, in the work tree and in
// .git. A command of the model's left running in the background could
// swap the file, or a directory on its path, for a link between the two:
// git then read a secret the sandbox hides (~/.ssh/id_rsa) into a
// checkpoint the model can read back, or wrote an object or a ref
// outside the project. So a checkpoint is taken while every process ralph
// started stands still (proctree.Freeze, as for an editor's open), and
// ralph starts none until it is taken. With nothing running below ralph
// the freeze costs a look at its threads' child lists.

// stillWhile runs take while every process ralph started is stopped. A
// tree that would not stand still (it kept forking) fails the
// checkpoint, which is then owed and taken again (failed, Retake), never
// taken with the race open.
func stillWhile(take func() (*git.Checkpoint, error)) (*git.Checkpoint, error) {
	h, err := proctree.Freeze()
	if err != nil {
		return nil, fmt.Errorf("%w, so the checkpoint was not taken: a command left running could have swapped a file for a link while git read it", err)
	}
	defer h.Thaw()
	return take()
}
