// Command ralph is an AI coding agent you can talk to and leave working.
// This file only wires: the sandbox helper, the command line (package
// scripts) and the chat shell it is handed (package repl), which this is
// the only importer of.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/repl"
	"github.com/ralph-dev/ralph/scripts/cli"
	"github.com/ralph-dev/ralph/scripts/startup"
	"github.com/ralph-dev/ralph/workers/proctree"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

func main() {
	// The sandbox helper must act before anything else: it confines itself
	// and execs the model's command (see workers/sandbox).
	if sandbox.IsHelper(os.Args) {
		os.Exit(sandbox.HelperMain(os.Args))
	}
	// Before anything starts: a descriptor the caller left open must not
	// reach the programs ralph starts (see workers/sandbox/inherited.go).
	if err := sandbox.SealInherited(); err != nil {
		fmt.Fprintln(os.Stderr, "ralph:", err)
	}
	shell := cli.ChatShell{Help: repl.Help, Main: chat}
	code := profiled(func() int { return cli.Main(os.Args[1:], startup.Version, shell) })
	memstats()
	os.Exit(code)
}

// chat runs the interactive shell with what the command line tells it.
func chat(ctx context.Context, p *project.Project, o cli.ChatOptions) int {
	mo := repl.MainOptions{Term: o.Term, Version: o.Version, Notices: o.Notices, Reopen: o.Reopen, RunArgs: o.RunArgs, Plugin: o.Plugin}
	if o.Handoff != nil {
		mo.Queue, mo.Coord = o.Handoff.Queue, o.Handoff.Coord
	}
	return repl.Main(ctx, p, mo)
}

// memstats writes ralph's own peak resident memory to $RALPH_MEMSTATS
// when set, as a JSON object ({"peak_rss_bytes":N,"private_rss_bytes":M}),
// as the process ends: the benchmarks' one measure of ralph's memory, and
// beside it the part that is ralph's alone at the end (proctree.Private). Only the process
// knows its peak up to its last instruction; followed from outside it
// could be missed between two looks, and wait4's figure is another
// process's (see proctree.Memory). A process ended by a second signal
// writes nothing.
func memstats() {
	path := os.Getenv("RALPH_MEMSTATS")
	if path == "" {
		return
	}
	_, peak := proctree.Memory(os.Getpid())
	private := proctree.Private(os.Getpid())
	if err := os.WriteFile(path, fmt.Appendf(nil, "{\"peak_rss_bytes\":%d,\"private_rss_bytes\":%d}\n", peak, private), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "ralph: cannot write the memory figures:", err)
	}
}
