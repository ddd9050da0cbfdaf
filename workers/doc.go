// Package workers is what the model's tools (workers/tools) and the task
// loop's agents stand on. Nothing here knows which tools there are: the
// tools import workers, never the other way round. Its root holds three
// things, all of them files and processes under a project:
//
//   - the Workspace: a project root whose files are opened beneath it
//     (workspace.go, paths.go, beneath*.go, filesize.go, tempdir.go);
//   - the model's commands: run in the sandbox (command.go, sandboxed.go,
//     maskconfig_unix.go) in a process group of their own (procgroup_*.go,
//     leader.go, process.go), in the foreground or beside the turns
//     (background.go), with their output's head and tail kept (output.go);
//   - every other program ralph starts, decided in one place (programs.go:
//     MCP servers, verify commands, notifications, hooks, external agents;
//     TestProgramsStartInOnePlace), with an external agent's process and
//     what it leaves behind (agentproc.go, escaped_*.go, procalive_*.go).
//
// The sandbox's policy is workers/sandbox, the tools workers/tools, the
// agent CLIs workers/agents.
package workers
