// Package instructions reads what a session's model is told to follow
// besides ralph's own prompt: the instructions files other coding agents
// read (codex's AGENTS.md, Claude Code's CLAUDE.md) from where the person
// started up to the project's root, the person's own ~/.claude/CLAUDE.md,
// both sides' rules (.claude/rules, ~/.claude/rules) and the files they
// import with @path, each through the session's door (memory/kept),
// bounded, and each thing left out said to the person once. It never
// imports the project, which wires a Reader.
package instructions
