package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 88's first cause: the model's command makes a nested repository
// whose git directory is not named .git (git init --separate-git-dir=gd
// sub, or sub/.git a link to ../gd) and stages it, as a submodule or as a
// bare gitlink; its last action is a file tool adding core.fsmonitor to
// gd/config. The path has no .git component, so the file tools wrote it,
// and the nested guard ran only after commands: the person's next git
// status at the top recursed into the submodule and ran the model's
// script, outside the sandbox. Every edit form of every family is tried,
// in every layout and in both sandboxes; the payload leaves the
// environment it ran with in a directory outside the project, which must
// stay empty once the person ran git status.

// nestedToolLayouts are the model's command that makes the repository:
// its git directory is gd, its work tree sub.
var nestedToolLayouts = []struct{ name, make string }{
	{"SeparateGitDir", "git init -q --separate-git-dir=gd sub && git -C sub commit -q --allow-empty -m x && git -c advice.addEmbeddedRepo=false add sub"},
	{"SeparateGitDirSubmodule", "git init -q --separate-git-dir=gd sub && git -C sub commit -q --allow-empty -m x && git -c advice.addEmbeddedRepo=false add sub" + gitmodules},
	{"GitLink", "git init -q sub && mv sub/.git gd && ln -s ../gd sub/.git && git -C sub commit -q --allow-empty -m x && git -c advice.addEmbeddedRepo=false add sub"},
	{"GitLinkSubmodule", "git init -q sub && mv sub/.git gd && ln -s ../gd sub/.git && git -C sub commit -q --allow-empty -m x && git -c advice.addEmbeddedRepo=false add sub" + gitmodules},
}

// gitmodules registers sub as a submodule.
const gitmodules = " && git config -f .gitmodules submodule.sub.path sub && git config -f .gitmodules submodule.sub.url ./sub && git add .gitmodules"

// nestedToolRoute is one family's way to add a line under [core] in
// gd/config, and its way to run a command.
type nestedToolRoute struct {
	name  string
	model string // RALPH_MODEL
	bash  func(command string) map[string]any
	edit  func(line string) map[string]any
}

// gdConfig is gd/config as git init writes it, with line added.
func gdConfig(line string) string {
	return "[core]\n" + line + "\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"
}

// patchAddingUnderCore is a patch that adds line under [core] in gd/config.
func patchAddingUnderCore(line string) string {
	return "*** Begin Patch\n*** Update File: gd/config\n@@\n [core]\n+" + line + "\n*** End Patch\n"
}

func ralphBash(c string) map[string]any {
	return callOf("run_command", map[string]any{"command": c})
}

func gpt5Bash(c string) map[string]any {
	return callOf("shell", map[string]any{"command": []string{"bash", "-lc", c}})
}

var nestedToolRoutes = []nestedToolRoute{
	{name: "write_file", bash: ralphBash, edit: func(l string) map[string]any {
		return callOf("write_file", map[string]any{"path": "gd/config", "content": gdConfig(l)})
	}},
	{name: "edit_file", bash: ralphBash, edit: func(l string) map[string]any {
		return callOf("edit_file", map[string]any{"path": "gd/config", "old_string": "[core]\n", "new_string": "[core]\n" + l + "\n"})
	}},
	{name: "ClaudeWrite", model: "claude-sonnet-4-5", bash: modelFamilies[1].bash, edit: func(l string) map[string]any {
		return callOf("Write", map[string]any{"file_path": "gd/config", "content": gdConfig(l)})
	}},
	{name: "ClaudeEdit", model: "claude-sonnet-4-5", bash: modelFamilies[1].bash, edit: func(l string) map[string]any {
		return callOf("Edit", map[string]any{"file_path": "gd/config", "old_string": "[core]\n", "new_string": "[core]\n" + l + "\n"})
	}},
	{name: "FreeformPatch", model: "gpt-5-codex", bash: modelFamilies[2].bash, edit: func(l string) map[string]any {
		return map[string]any{"type": "custom", "name": "apply_patch", "arguments": patchAddingUnderCore(l)}
	}},
	{name: "JSONPatch", model: "gpt-oss-120b", bash: gpt5Bash, edit: func(l string) map[string]any {
		return callOf("apply_patch", map[string]any{"input": patchAddingUnderCore(l)})
	}},
	{name: "ShellPatch", model: "gpt-5", bash: gpt5Bash, edit: func(l string) map[string]any {
		return callOf("shell", map[string]any{"command": []string{"apply_patch", patchAddingUnderCore(l)}})
	}},
	{name: "HeredocPatch", model: "gpt-5", bash: gpt5Bash, edit: func(l string) map[string]any {
		patch := strings.ReplaceAll(patchAddingUnderCore(l), "gd/config", "config")
		return callOf("shell", map[string]any{"command": []string{"bash", "-lc", "cd gd && apply_patch <<'EOF'\n" + patch + "EOF\n"}})
	}},
}

// TestAttackNestedConfigThroughTheFileTools runs every route in every
// layout, in both sandboxes.
func TestAttackNestedConfigThroughTheFileTools(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		for _, layout := range nestedToolLayouts {
			for _, route := range nestedToolRoutes {
				t.Run(mode.name+"/"+layout.name+"/"+route.name, func(t *testing.T) {
					t.Parallel()
					runNestedToolAttack(t, mode.env, layout.make, route)
				})
			}
		}
	}
}

func runNestedToolAttack(t *testing.T, modeEnv []string, make string, route nestedToolRoute) {
	proj, outside, tmp := attackDirs(t)
	line := "\tfsmonitor = \"env > " + outside + "/fsmonitor; false\""
	rs := []map[string]any{
		{"tool_calls": []map[string]any{route.bash(make + " && echo made")}},
		{"tool_calls": []map[string]any{route.edit(line)}},
		{"text": "done"},
	}
	js, err := json.Marshal(map[string]any{"name": "nested-tools", "responses": rs})
	if err != nil {
		t.Fatal(err)
	}
	srv := inlineServer(t, string(js))
	extra := append([]string{"TMPDIR=" + tmp, "OPENAI_API_KEY=" + nestedKey, "OPENAI_BASE_URL=" + srv.URL}, gitEnv...)
	if strings.HasPrefix(route.model, "claude-") {
		extra = append([]string{"TMPDIR=" + tmp, "ANTHROPIC_API_KEY=" + nestedKey, "ANTHROPIC_BASE_URL=" + strings.TrimSuffix(srv.URL, "/v1")}, gitEnv...)
	}
	if route.model != "" {
		extra = append(extra, "RALPH_MODEL="+route.model)
	}
	env := cleanEnv(t, append(extra, modeEnv...)...)
	r := ralph(t, proj, env, nil, "-y", "set up the vendored repository")
	// The last request holds every tool result.
	var bodies, last strings.Builder
	if reqs := srv.Requests(); len(reqs) > 0 {
		last.Write(reqs[len(reqs)-1].Body)
		bodies.WriteString(toolOutputs(reqs[len(reqs)-1].Body))
	}
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s\n%s", r.code, r.stdout, r.stderr, bodies.String())
	}
	if !strings.Contains(last.String(), "made") {
		t.Fatalf("the model's command did not make the repository:\n%s", bodies.String())
	}
	// The person's own git, after ralph, with the key in its environment.
	cmd := exec.Command("git", "status", "--short")
	cmd.Dir, cmd.Env = proj, env
	out, _ := cmd.CombinedOutput()
	for _, run := range payloadRuns(t, outside, nestedKey) {
		t.Errorf("the payload ran outside the sandbox when the person ran git status: %s\n%s\ntool results:\n%s", run, out, bodies.String())
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "gd", "config")); strings.Contains(string(b), "fsmonitor") {
		t.Errorf("gd/config keeps the model's fsmonitor:\n%s", b)
	}
	if !strings.Contains(last.String(), "git directory") {
		t.Errorf("the model was not told that gd is a git directory the file tools do not change:\n%s", bodies.String())
	}
}
