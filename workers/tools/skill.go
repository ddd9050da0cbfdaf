package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/workers"
)

// ToolSkill loads a skill's instructions (skill.md): Claude Code's Skill.
const ToolSkill = "skill"

// SkillParams are skill's arguments: Claude Code's input {skill}, and the
// file of a skill outside the project to read.
type SkillParams struct {
	Skill string `json:"skill" required:"true" description:"the skill's name, as the system prompt lists it"`
	File  string `json:"file,omitempty" description:"a file of the skill's own directory to read, relative to it, as the skill's loaded instructions list them; leave it out to load the instructions"`
}

// newSkillTool is skill{skill, file?}: the instructions of a skill the
// session found (memory/skills), and where its other files are; or one of
// those files, read through a door on the skill's own directory. root is
// the project's, so a project skill's files are named for read_file.
func newSkillTool(set *skills.Set, root string) Tool {
	return NewTool(Def("skill"), func(_ context.Context, args json.RawMessage) workers.Result {
		var a SkillParams
		if err := json.Unmarshal(args, &a); err != nil {
			return workers.Result{IsError: true, Output: "skill needs {\"skill\": \"name\"}: " + err.Error()}
		}
		name := strings.TrimPrefix(strings.TrimSpace(a.Skill), "/")
		sk, ok := set.Lookup(name)
		if !ok {
			return workers.Result{IsError: true, Output: fmt.Sprintf("there is no skill %q; the skills are %s", clipName(name), skillNames(set))}
		}
		if sk.NoModel {
			return workers.Result{IsError: true, Output: fmt.Sprintf("skill %s is started by the person only (disable-model-invocation): they run it as /%s", sk.FullName(), sk.FullName())}
		}
		if a.File != "" {
			return skillFile(sk, a.File)
		}
		body, truncated, err := sk.Body()
		if err != nil {
			return workers.Result{IsError: true, Output: err.Error()}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Skill %s (%s), from %s. Follow its instructions for the task at hand.\n\n", sk.Name, sk.Source, shownDir(sk, root))
		body = expandSkill(strings.TrimSpace(body), sk, root)
		if strings.Contains(body, "!`") {
			// The model loaded it: what the lines would run is the
			// model's to ask for, through run_command.
			body += "\n\n[ralph: ralph did not run the !`command` lines above; run one with run_command when the task needs its output]"
		}
		b.WriteString(body)
		if truncated {
			fmt.Fprintf(&b, "\n\n[ralph: the instructions are cut at %d KiB]", skills.BodyLimit>>10)
		}
		b.WriteString(otherFiles(sk, root))
		return workers.Result{Output: b.String()}
	})
}

// expandSkill puts the skill's directory for ${CLAUDE_SKILL_DIR} (and a
// plugin skill's plugin for ${CLAUDE_PLUGIN_ROOT}), as Claude Code does.
// Its !`command` lines are left: the skill tool says ralph ran none (a
// command runs only as the model's run_command, sandboxed and approved),
// and a skill the person starts as /NAME runs them as a custom command's
// are run (scripts/slash).
func expandSkill(body string, sk skills.Skill, root string) string {
	dir := shownDir(sk, root)
	body = strings.ReplaceAll(body, "${CLAUDE_SKILL_DIR}", dir)
	if sk.Source == skills.Plugin {
		body = strings.ReplaceAll(body, "${CLAUDE_PLUGIN_ROOT}", filepath.Dir(filepath.Dir(sk.Dir)))
	}
	return body
}

// SkillMessage is what the person's /NAME ARGS sends for skill sk, as
// Claude Code sends it: the skill's directory, then its instructions
// (expanded as the skill tool expands them) with args for $ARGUMENTS,
// or after them as an ARGUMENTS: line when the body has no place for
// them.
func SkillMessage(sk skills.Skill, root, args string) (string, error) {
	body, truncated, err := sk.Body()
	if err != nil {
		return "", err
	}
	body = expandSkill(strings.TrimSpace(body), sk, root)
	if strings.Contains(body, "$ARGUMENTS") {
		body = strings.ReplaceAll(body, "$ARGUMENTS", args)
	} else if args != "" {
		body += "\n\nARGUMENTS: " + args
	}
	if truncated {
		body += fmt.Sprintf("\n\n[ralph: the instructions are cut at %d KiB]", skills.BodyLimit>>10)
	}
	return "Base directory for this skill: " + shownDir(sk, root) + "\n\n" + body + otherFiles(sk, root), nil
}

// skillFile is one of sk's own files.
func skillFile(sk skills.Skill, file string) workers.Result {
	data, truncated, err := sk.ReadFile(file)
	if err != nil {
		return workers.Result{IsError: true, Output: err.Error()}
	}
	out := string(data)
	if truncated {
		out += fmt.Sprintf("\n[ralph: the file is cut at %d KiB]", skills.FileLimit>>10)
	}
	return workers.Result{Output: out}
}

// otherFiles says where sk's other files are and how to read them: a
// project skill's with read_file, any other's with this tool's file.
func otherFiles(sk skills.Skill, root string) string {
	files, more, err := sk.Files()
	if err != nil || len(files) == 0 {
		return ""
	}
	var b strings.Builder
	if sk.Source == skills.Project {
		fmt.Fprintf(&b, "\n\nThe skill's other files, to read with read_file when its instructions call for them (paths relative to the project):\n")
		for _, f := range files {
			b.WriteString("- " + filepath.ToSlash(filepath.Join(shownDir(sk, root), f)) + "\n")
		}
	} else {
		fmt.Fprintf(&b, "\n\nThe skill's other files, outside the project: read one with skill {\"skill\": %q, \"file\": \"<path below>\"} when its instructions call for it:\n", sk.Name)
		for _, f := range files {
			b.WriteString("- " + f + "\n")
		}
	}
	if more {
		fmt.Fprintf(&b, "- (more files than the first %d are not listed)\n", skills.MaxFiles)
	}
	return strings.TrimRight(b.String(), "\n")
}

// shownDir is sk's directory as the model should name it: relative to
// the project for a project skill, as it is for any other.
func shownDir(sk skills.Skill, root string) string {
	if sk.Source == skills.Project && root != "" {
		if rel, err := filepath.Rel(root, sk.Dir); err == nil && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
	}
	return sk.Dir
}

// skillNames lists the set's names for a model that named none of them.
func skillNames(set *skills.Set) string {
	var names []string
	for _, s := range set.ForModel() {
		names = append(names, s.FullName())
	}
	return strings.Join(names, ", ")
}

func clipName(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
