// Package sessionhooks holds a session's hooks and what the agent
// settings files written for Claude Code say besides them: which hooks
// the person's, the project's and the plugins' files define and which of
// them wait for the person's approval (Load), the settings files'
// permission rules and env, the hooks of agent definitions' front matter
// (AgentSets), and the hooks.Set a session runs (Builder). It runs no
// hook itself (workers/hooks does) and never imports the project, which
// only wires it.
package sessionhooks
