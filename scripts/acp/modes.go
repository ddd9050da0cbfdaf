package acp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ralph-dev/ralph/coordinator/models"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/scripts/slash"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// modeWords describe ralph's sandbox modes to the editor.
var modeWords = map[sandbox.Mode]string{
	sandbox.ReadOnly:       "commands change nothing; file edits are asked about",
	sandbox.WorkspaceWrite: "commands write in the project only (the default)",
	sandbox.FullAccess:     "commands run without a sandbox",
}

// modes are the session's sandbox modes, the current one its own.
func (ss *session) modes() *sdk.SessionModeState {
	var all []sdk.SessionMode
	for _, m := range sandbox.Modes {
		d := modeWords[m]
		all = append(all, sdk.SessionMode{Id: sdk.SessionModeId(m), Name: string(m), Description: &d})
	}
	return &sdk.SessionModeState{AvailableModes: all, CurrentModeId: sdk.SessionModeId(ss.mode())}
}

// mode is the session's sandbox mode.
func (ss *session) mode() sandbox.Mode {
	m, err := sandbox.ParseMode(ss.p.Config.Sandbox)
	if err != nil {
		return sandbox.WorkspaceWrite
	}
	return m
}

// ErrModeFixed refuses a change of a running session's sandbox.
var ErrModeFixed = errors.New("the sandbox of a running session is fixed when its tools are made")

// SetSessionMode refuses every change: ralph's sandbox policy is fixed
// when the session's toolset is made and its helper confines itself
// once, so neither loosening nor tightening can take effect for the
// commands to come. Start ralph acp with --sandbox MODE instead.
func (s *Server) SetSessionMode(_ context.Context, r sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	ss, err := s.session(r.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	want, err := sandbox.ParseMode(string(r.ModeId))
	if err != nil {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	cur := ss.mode()
	if want == cur {
		return sdk.SetSessionModeResponse{}, nil
	}
	verb := "loosened"
	if slices.Index(sandbox.Modes, want) < slices.Index(sandbox.Modes, cur) {
		verb = "tightened"
	}
	return sdk.SetSessionModeResponse{}, fmt.Errorf("%w: it cannot be %s from %s to %s; start ralph acp with --sandbox %s (or set sandbox in the config) and open a new session",
		ErrModeFixed, verb, cur, want, want)
}

// modelsWait bounds asking the endpoint for its models.
const modelsWait = 3 * time.Second

// models are the models the provider serves (ralph's model table, as
// `ralph models` lists them), the session's current.
func (ss *session) models(ctx context.Context) *sdk.SessionModelState {
	cur := ss.at.Coord.ModelName()
	ctx, cancel := context.WithTimeout(ctx, modelsWait)
	defer cancel()
	ids, _ := models.ForConfig(ss.p.Config).List(ctx)
	if !slices.Contains(ids, cur) {
		ids = append([]string{cur}, ids...)
	}
	all := make([]sdk.ModelInfo, 0, len(ids))
	for _, id := range ids {
		all = append(all, sdk.ModelInfo{ModelId: sdk.ModelId(id), Name: id})
	}
	return &sdk.SessionModelState{AvailableModels: all, CurrentModelId: sdk.ModelId(cur)}
}

// UnstableSetSessionModel switches the session's model from the next
// step, as /model does.
func (s *Server) UnstableSetSessionModel(ctx context.Context, r sdk.UnstableSetSessionModelRequest) (sdk.UnstableSetSessionModelResponse, error) {
	ss, err := s.session(r.SessionId)
	if err != nil {
		return sdk.UnstableSetSessionModelResponse{}, err
	}
	name := string(r.ModelId)
	res := models.ForConfig(ss.p.Config)
	if alias, ok := res.Alias(name); ok {
		name = alias
	}
	ctx, cancel := context.WithTimeout(ctx, modelsWait)
	defer cancel()
	warning, err := res.Check(ctx, name)
	if err != nil {
		return sdk.UnstableSetSessionModelResponse{}, err
	}
	if warning != "" {
		s.say(warning)
	}
	ss.at.Coord.SetModel(name)
	return sdk.UnstableSetSessionModelResponse{}, nil
}

// builtins are the slash commands that make sense without a terminal:
// they read or tell, or send the model a message.
var builtins = []string{"init", "status", "tasks", "goals", "todo", "progress", "model", "mcp", "skills", "compact", "cost", "diff", "undo"}

// commands are the built-ins above and the person's custom commands.
func (ss *session) commands() []sdk.AvailableCommand {
	var out []sdk.AvailableCommand
	input := func(hint string) *sdk.AvailableCommandInput {
		if hint == "" {
			return nil
		}
		return &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: hint}}
	}
	for _, spec := range slash.All() {
		if slices.Contains(builtins, spec.Name) {
			out = append(out, sdk.AvailableCommand{Name: spec.Name, Description: spec.Summary, Input: input(spec.Args)})
		}
	}
	for _, c := range slash.Customs(ss.p.Fs, ss.p.Root, slash.PluginCommandDirs(ss.p.Plugins)...) {
		out = append(out, sdk.AvailableCommand{Name: c.Name, Description: c.Description, Input: input(c.Hint)})
	}
	return out
}

// sendCommands tells the client the session's commands.
func (ss *session) sendCommands() {
	ss.out.send(sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: ss.commands()}})
}

// replay sends a loaded session's conversation as it went: the person's
// messages, the answers, and each tool call with its result.
func (ss *session) replay(ctx context.Context) {
	results := map[string]conversation.Message{}
	for _, m := range ss.p.History {
		if m.Role == conversation.RoleTool {
			results[m.ToolCallID] = m
		}
	}
	tr := newTranslator(ss)
	for _, m := range ss.p.History {
		if ctx.Err() != nil {
			return
		}
		switch m.Role {
		case conversation.RoleUser:
			if strings.TrimSpace(m.Content) != "" {
				ss.out.send(sdk.UpdateUserMessageText(m.Content))
			}
		case conversation.RoleAssistant:
			if m.Content != "" {
				ss.out.send(sdk.UpdateAgentMessageText(m.Content))
			}
			for _, c := range m.ToolCalls {
				ev := toolEvent(c)
				ss.out.send(tr.toolCall(ev))
				r := results[c.ID]
				ss.out.send(tr.toolResult(resultEvent(c, r)))
			}
		}
	}
}
