package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/providers"
)

// codex's tools, as OpenAI's GPT-5 family, o-series and codex models were
// trained on them: the names and input shapes codex-cli 0.77.0 sends each
// model (testdata/codex-tools, recorded against a stand-in), descriptions
// of ralph's own. codex's models read, list and search files with their
// shell, and write them with apply_patch: a freeform grammar tool for
// GPT-5.1 and the codex models, a JSON function for gpt-oss, and for GPT-5,
// the o-series and codex-mini-latest a command they run through their
// shell (apply_patch "*** Begin Patch…"), which ralph recognises as its
// patch tool, so that approvals, hooks and undo see an edit.

// ShellCommandParams is codex's shell_command.
type ShellCommandParams struct {
	Command            string   `json:"command" required:"true" description:"The shell script to execute, with bash"`
	Workdir            string   `json:"workdir" description:"The working directory to execute the command in, inside the project"`
	TimeoutMS          *float64 `json:"timeout_ms" description:"The timeout for the command in milliseconds"`
	SandboxPermissions string   `json:"sandbox_permissions" enum:"use_default,require_escalated" description:"Set to \"require_escalated\" to run the command outside the sandbox; the user is asked every time. Defaults to \"use_default\""`
	Justification      string   `json:"justification" description:"Only with sandbox_permissions \"require_escalated\": one sentence on why the command must run outside the sandbox"`
}

// ShellParams is codex's shell, the command as an argv array.
type ShellParams struct {
	Command            []string `json:"command" required:"true" description:"The command to execute, as its arguments; most commands should be run as [\"bash\", \"-lc\", \"<script>\"]"`
	Workdir            string   `json:"workdir" description:"The working directory to execute the command in, inside the project"`
	TimeoutMS          *float64 `json:"timeout_ms" description:"The timeout for the command in milliseconds"`
	SandboxPermissions string   `json:"sandbox_permissions" enum:"use_default,require_escalated" description:"Set to \"require_escalated\" to run the command outside the sandbox; the user is asked every time. Defaults to \"use_default\""`
	Justification      string   `json:"justification" description:"Only with sandbox_permissions \"require_escalated\": one sentence on why the command must run outside the sandbox"`
}

// ViewImageParams is codex's view_image.
type ViewImageParams struct {
	Path string `json:"path" required:"true" description:"Path of an image file in the project"`
}

// applyPatchGrammar is the patch format's grammar (lark), as codex gives
// it to the models trained on the freeform apply_patch: the model's
// output is held to it, so a patch always parses.
const applyPatchGrammar = `start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF
`

// codexFamily is one of codex's variants' faces of ralph's tools.
func codexFamily(f providers.ToolFamily) family {
	fam := family{covered: map[string]string{
		ToolListFiles: ToolRunCommand, ToolSearch: ToolRunCommand,
		ToolCommandOutput: ToolRunCommand, ToolStopCommand: ToolRunCommand,
	}}
	plan := face{tool: ToolUpdatePlan, name: "update_plan", doc: "codex_update_plan", params: UpdatePlanParams{}}
	image := face{tool: ToolReadFile, name: "view_image", doc: "codex_view_image", params: ViewImageParams{}, needs: ToolRunCommand,
		renames: map[string]string{"path": "path"}}
	switch f {
	case providers.FamilyCodex:
		fam.faces = []face{
			{tool: ToolRunCommand, name: "shell_command", doc: "codex_shell_command", params: ShellCommandParams{}, in: shellCommandIn, out: shellCommandOut},
			{tool: ToolApplyPatch, name: "apply_patch", doc: "codex_apply_patch", format: &conversation.ToolFormat{Type: "grammar", Syntax: "lark", Definition: applyPatchGrammar}},
			plan, image,
		}
		fam.covered[ToolWriteFile], fam.covered[ToolEditFile] = ToolApplyPatch, ToolApplyPatch
	case providers.FamilyGPTOSS:
		fam.faces = []face{
			{tool: ToolRunCommand, name: "shell", doc: "codex_shell", params: ShellParams{}, in: shellIn, out: shellOut},
			{tool: ToolApplyPatch, name: "apply_patch", doc: "codex_apply_patch_json", params: ApplyPatchParams{}},
			plan, image,
		}
		fam.covered[ToolWriteFile], fam.covered[ToolEditFile] = ToolApplyPatch, ToolApplyPatch
	case providers.FamilyCodexMini:
		fam.faces = []face{
			{tool: ToolRunCommand, name: "local_shell", doc: "codex_local_shell", builtin: "local_shell", in: localShellIn, out: localShellOut},
			{tool: ToolApplyPatch, name: "local_shell", hiddenFace: true, needs: ToolRunCommand, out: patchLocalShellOut},
			plan, image,
		}
		fam.covered[ToolWriteFile], fam.covered[ToolEditFile], fam.covered[ToolApplyPatch] = ToolRunCommand, ToolRunCommand, ToolRunCommand
	default: // GPT-5 and the o-series
		fam.faces = []face{
			{tool: ToolRunCommand, name: "shell", doc: "codex_shell", params: ShellParams{}, in: shellIn, out: shellOut},
			{tool: ToolApplyPatch, name: "shell", hiddenFace: true, needs: ToolRunCommand, out: patchShellOut},
			plan, image,
		}
		fam.covered[ToolWriteFile], fam.covered[ToolEditFile], fam.covered[ToolApplyPatch] = ToolRunCommand, ToolRunCommand, ToolRunCommand
	}
	return fam
}

// escalated is codex's sandbox_permissions asking to leave the sandbox,
// ralph's unsandboxed (which asks the person every time).
const escalated = "require_escalated"

// commandArgs are run_command's arguments for a codex command: its
// workdir, its timeout in milliseconds, and its request to leave the
// sandbox.
func commandArgs(command string, in map[string]json.RawMessage, workdirKey string) json.RawMessage {
	out := map[string]any{"command": command}
	var s string
	if v, ok := in[workdirKey]; ok && json.Unmarshal(v, &s) == nil && s != "" && s != "." {
		out["workdir"] = s
	}
	if v, ok := in["timeout_ms"]; ok {
		if secs, ok := millisToSeconds(v); ok {
			out["timeout_s"] = secs
		}
	}
	if v, ok := in["sandbox_permissions"]; ok && json.Unmarshal(v, &s) == nil && s == escalated {
		out["unsandboxed"] = true
	}
	b, _ := encode(out)
	return b
}

func shellCommandIn(args json.RawMessage) (string, json.RawMessage, error) {
	in, err := object("shell_command", args)
	if err != nil {
		return "", nil, err
	}
	var command string
	if v, ok := in["command"]; ok {
		if json.Unmarshal(v, &command) != nil {
			// An argv where a string belongs: joined as it will run.
			var argv []string
			if json.Unmarshal(v, &argv) != nil {
				return "", nil, errors.New("shell_command's command must be a string")
			}
			command = joinArgv(argv)
		}
	}
	if patch, dir, ok := patchInScript(command); ok {
		return patchCall(patch, workdirOf(in, "workdir"), dir)
	}
	return ToolRunCommand, commandArgs(command, in, "workdir"), nil
}

func shellIn(args json.RawMessage) (string, json.RawMessage, error) {
	in, err := object("shell", args)
	if err != nil {
		return "", nil, err
	}
	return argvCall("shell", in, "workdir")
}

// localShellIn maps a local_shell_call's action ({"type":"exec",
// "command":[…],"timeout_ms","working_directory","env","user"}).
func localShellIn(args json.RawMessage) (string, json.RawMessage, error) {
	in, err := object("local_shell", args)
	if err != nil {
		return "", nil, err
	}
	return argvCall("local_shell", in, "working_directory")
}

// argvCall is the call an argv command of codex's shell makes: apply_patch
// when it applies a patch (["apply_patch", patch], or a shell script that
// is apply_patch with a here-document), else run_command with the argv as
// the command line it runs.
func argvCall(tool string, in map[string]json.RawMessage, workdirKey string) (string, json.RawMessage, error) {
	var argv []string
	if v, ok := in["command"]; ok {
		if json.Unmarshal(v, &argv) != nil {
			// A string where an argv belongs: run as it is.
			var s string
			if json.Unmarshal(v, &s) != nil {
				return "", nil, fmt.Errorf("%s's command must be an array of strings", tool)
			}
			argv = []string{"bash", "-lc", s}
		}
	}
	if len(argv) == 0 {
		return "", nil, fmt.Errorf("%s's command is empty", tool)
	}
	workdir := workdirOf(in, workdirKey)
	if (argv[0] == "apply_patch" || argv[0] == "applypatch") && len(argv) == 2 {
		return patchCall(argv[1], workdir, "")
	}
	command := joinArgv(argv)
	if script, ok := shellScript(argv); ok {
		if patch, dir, ok := patchInScript(script); ok {
			return patchCall(patch, workdir, dir)
		}
		command = script
	}
	return ToolRunCommand, commandArgs(command, in, workdirKey), nil
}

// workdirOf is a command's working directory field, "" for none.
func workdirOf(in map[string]json.RawMessage, key string) string {
	var s string
	if v, ok := in[key]; ok && json.Unmarshal(v, &s) == nil {
		return s
	}
	return ""
}

// shellScript is the script of an argv that runs one through a shell
// (["bash", "-lc", script]), as codex's models run most commands.
func shellScript(argv []string) (string, bool) {
	if len(argv) != 3 {
		return "", false
	}
	switch path.Base(argv[0]) {
	case "bash", "sh", "zsh":
	default:
		return "", false
	}
	switch argv[1] {
	case "-c", "-lc", "-cl":
		return argv[2], true
	}
	return "", false
}

// joinArgv is an argv as the command line that runs exactly it, each
// word quoted where the shell would split or expand it: the person asked
// to approve it sees what will run.
func joinArgv(argv []string) string {
	words := make([]string, len(argv))
	for i, w := range argv {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			// Quote refuses only a NUL, which no command can hold; the
			// word as it is then fails where it runs.
			q = w
		}
		words[i] = q
	}
	return strings.Join(words, " ")
}

// patchInScript finds apply_patch run with its patch as a here-document,
// as codex's models write it: `apply_patch <<'EOF'` … `EOF`, alone or
// after `cd DIR &&`. dir is DIR, "" for none.
func patchInScript(script string) (patch, dir string, ok bool) {
	if !strings.Contains(script, "apply_patch") && !strings.Contains(script, "applypatch") {
		return "", "", false
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(script), "")
	if err != nil || len(f.Stmts) != 1 {
		return "", "", false
	}
	st := f.Stmts[0]
	if b, isBin := st.Cmd.(*syntax.BinaryCmd); isBin && b.Op == syntax.AndStmt {
		d, isCd := cdTarget(b.X)
		if !isCd {
			return "", "", false
		}
		patch, ok = heredocPatch(b.Y)
		return patch, d, ok
	}
	patch, ok = heredocPatch(st)
	return patch, "", ok
}

// cdTarget is the directory of a `cd DIR` statement.
func cdTarget(st *syntax.Stmt) (string, bool) {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) != 2 || len(st.Redirs) != 0 || call.Args[0].Lit() != "cd" {
		return "", false
	}
	d, ok := literal(call.Args[1])
	return d, ok && d != ""
}

// literal is a word's value when it expands to nothing but itself
// (quoted or not).
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false // $'…' has escapes of its own
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// heredocPatch is the here-document of a statement that is apply_patch
// with one, and nothing else.
func heredocPatch(st *syntax.Stmt) (string, bool) {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) != 1 || len(st.Redirs) != 1 {
		return "", false
	}
	if name := call.Args[0].Lit(); name != "apply_patch" && name != "applypatch" {
		return "", false
	}
	r := st.Redirs[0]
	if (r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc) || r.Hdoc == nil {
		return "", false
	}
	return literal(r.Hdoc)
}

// patchCall is apply_patch's call for a patch run in workdir, then dir:
// its relative paths are the project's, as apply_patch takes them.
func patchCall(patch, workdir, dir string) (string, json.RawMessage, error) {
	for _, d := range []string{dir, workdir} {
		if d != "" && d != "." {
			patch = rebasePatch(patch, d)
		}
	}
	b, _ := encode(map[string]any{"input": patch})
	return ToolApplyPatch, b, nil
}

// patchHeaders are the patch lines that name a path.
var patchHeaders = []string{"*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** Move to: "}

// rebasePatch is patch with each relative path it names joined to dir, so
// that a patch applied in a subdirectory names the files it means. An
// absolute path is left as it is; whatever the paths come to, the tool
// takes only those inside the project, through the door every write
// goes through.
func rebasePatch(patch, dir string) string {
	lines := strings.SplitAfter(patch, "\n")
	for i, l := range lines {
		for _, h := range patchHeaders {
			p, ok := strings.CutPrefix(l, h)
			if !ok {
				continue
			}
			name := strings.TrimRight(p, "\r\n")
			if name == "" || path.IsAbs(name) {
				break
			}
			lines[i] = h + path.Join(dir, name) + p[len(name):]
			break
		}
	}
	return strings.Join(lines, "")
}

func shellCommandOut(args json.RawMessage) (json.RawMessage, bool) {
	var a RunCommandParams
	if json.Unmarshal(args, &a) != nil {
		return nil, false
	}
	return encode(codexCommand(a, a.Command))
}

func shellOut(args json.RawMessage) (json.RawMessage, bool) {
	var a RunCommandParams
	if json.Unmarshal(args, &a) != nil {
		return nil, false
	}
	return encode(codexCommand(a, []string{"bash", "-lc", a.Command}))
}

// codexCommand is a run_command call as codex's shell tools take it.
func codexCommand(a RunCommandParams, command any) map[string]any {
	out := map[string]any{"command": command}
	if a.Workdir != "" {
		out["workdir"] = a.Workdir
	}
	if a.TimeoutS != nil {
		out["timeout_ms"] = math.Round(*a.TimeoutS * 1000)
	}
	if a.Unsandboxed {
		out["sandbox_permissions"] = escalated
	}
	return out
}

func localShellOut(args json.RawMessage) (json.RawMessage, bool) {
	var a RunCommandParams
	if json.Unmarshal(args, &a) != nil {
		return nil, false
	}
	return localShellAction([]string{"bash", "-lc", a.Command}, a.Workdir, a.TimeoutS)
}

// localShellAction is a local_shell_call's action for argv.
func localShellAction(argv []string, workdir string, timeoutS *float64) (json.RawMessage, bool) {
	out := map[string]any{"type": "exec", "command": argv, "env": map[string]string{}, "user": nil, "working_directory": nil, "timeout_ms": nil}
	if workdir != "" {
		out["working_directory"] = workdir
	}
	if timeoutS != nil {
		out["timeout_ms"] = math.Round(*timeoutS * 1000)
	}
	return encode(out)
}

func patchShellOut(args json.RawMessage) (json.RawMessage, bool) {
	var a ApplyPatchParams
	if json.Unmarshal(args, &a) != nil {
		return nil, false
	}
	return encode(map[string]any{"command": []string{"apply_patch", a.Input}})
}

func patchLocalShellOut(args json.RawMessage) (json.RawMessage, bool) {
	var a ApplyPatchParams
	if json.Unmarshal(args, &a) != nil {
		return nil, false
	}
	return localShellAction([]string{"apply_patch", a.Input}, "", nil)
}
