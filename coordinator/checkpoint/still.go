package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

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
// taken with the race open. Inside a Hold (ctx carries it) the processes
// stand still already, and take runs as it is.
func (c *Checkpoints) stillWhile(ctx context.Context, take func() (*git.Checkpoint, error)) (*git.Checkpoint, error) {
	if c.held(ctx) {
		return take()
	}
	h, err := proctree.Freeze()
	if err != nil {
		return nil, fmt.Errorf("%w, so the checkpoint was not taken: a command left running could have swapped a file for a link while git read it", err)
	}
	defer h.Thaw()
	return take()
}

// An undo looks at the files it will write (Unchanged, or a checkpoint of
// the whole tree) and then writes them. A command of the model's left
// running in the background, in a chat, could exchange two directories
// between the two (renameat2): the undo then wrote, or cut short, a file
// of the person's that a Read rule hides from the model, in the place of
// the model's own. So an undo holds every process ralph started still,
// and the checkpoints' lock, from its look to its own checkpoint (Hold).

// hold is a Hold of c, active until released.
type hold struct {
	c      *Checkpoints
	active atomic.Bool
}

type holdKey struct{}

// ErrNotStill says the processes ralph started would not stand still, so
// nothing was undone.
var ErrNotStill = errors.New("a command left running would not stand still, so nothing was undone: it could have moved a directory while undo wrote in it")

// Hold takes the checkpoints' lock and stops every process ralph started,
// as a checkpoint does, until release, for work that looks at the work
// tree and then writes it: an undo. The checkpoints, proofs and restores
// given the returned context run inside the hold, without taking the lock
// or stopping the processes again (which would wait for the hold's own
// end). Call it after Ready. ErrNotStill when the processes would not
// stand still.
func (c *Checkpoints) Hold(ctx context.Context) (held context.Context, release func(), err error) {
	c.start()
	c.mu.Lock()
	h, err := proctree.Freeze()
	if err != nil {
		c.mu.Unlock()
		return ctx, func() {}, fmt.Errorf("%w (%w)", ErrNotStill, err)
	}
	hd := &hold{c: c}
	hd.active.Store(true)
	release = sync.OnceFunc(func() {
		hd.active.Store(false)
		h.Thaw()
		c.mu.Unlock()
	})
	return context.WithValue(ctx, holdKey{}, hd), release, nil
}

// held reports whether ctx carries a Hold of c that is not yet released.
func (c *Checkpoints) held(ctx context.Context) bool {
	hd, ok := ctx.Value(holdKey{}).(*hold)
	return ok && hd.c == c && hd.active.Load()
}

// lock takes the checkpoints' lock, unless ctx holds it already (Hold),
// and returns what lets it go.
func (c *Checkpoints) lock(ctx context.Context) (unlock func()) {
	if c.held(ctx) {
		return func() {}
	}
	c.mu.Lock()
	return c.mu.Unlock
}
