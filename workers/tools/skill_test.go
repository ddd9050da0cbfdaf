package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/skills"
)

// TestSkillTool: skill is offered only with skills, answers to Claude
// Code's name Skill, loads a body with the skill's directory put for
// ${CLAUDE_SKILL_DIR}, names a project skill's files for read_file, and
// names the skills when the model asks for one that is not there.
func TestSkillTool(t *testing.T) {
	if got := Build(Deps{Skills: skills.Load(nil)}); len(got) != 0 {
		t.Fatalf("skill offered without skills: %d tools", len(got))
	}
	if ByPeerName("Skill") != ToolSkill {
		t.Fatalf("Skill maps to %q", ByPeerName("Skill"))
	}
	root := t.TempDir()
	dir := filepath.Join(root, ".claude", "skills", "fmt")
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: fmt\ndescription: Format: the code\n---\n\nRun ${CLAUDE_SKILL_DIR}/scripts/fmt.sh\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "scripts", "fmt.sh"), []byte("gofmt -w .\n"), 0o644)
	door, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	roots, _ := skills.Roots(door, "", "", []string{".claude/skills"}, nil)
	set := skills.Load(roots)
	built := Build(Deps{Skills: set, Root: root})
	if len(built) != 1 || built[0].Def().Name != ToolSkill {
		t.Fatalf("tools %v", built)
	}
	res := built[0].Run(context.Background(), []byte(`{"skill":"fmt"}`))
	if res.IsError || !strings.Contains(res.Output, "Run .claude/skills/fmt/scripts/fmt.sh") || !strings.Contains(res.Output, "read_file") || !strings.Contains(res.Output, "- .claude/skills/fmt/scripts/fmt.sh") {
		t.Fatalf("result %+v", res)
	}
	res = built[0].Run(context.Background(), []byte(`{"skill":"lint"}`))
	if !res.IsError || !strings.Contains(res.Output, `no skill "lint"; the skills are fmt`) {
		t.Fatalf("unknown skill %+v", res)
	}
}

// TestSkillPersonOnly: a skill marked disable-model-invocation is
// refused to the model, which is told the person runs it as /NAME; with
// only such skills the tool is not offered; SkillMessage, the person's
// /NAME ARGS, puts ARGS for $ARGUMENTS or after the body.
func TestSkillPersonOnly(t *testing.T) {
	root := t.TempDir()
	write := func(name, front, body string) {
		dir := filepath.Join(root, ".claude", "skills", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: d\n"+front+"---\n"+body), 0o644)
	}
	write("board", "disable-model-invocation: true\n", "Show the board for $ARGUMENTS.\n")
	door, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	load := func() *skills.Set {
		roots, _ := skills.Roots(door, "", "", []string{".claude/skills"}, nil)
		return skills.Load(roots)
	}
	if got := Build(Deps{Skills: load(), Root: root}); len(got) != 0 {
		t.Fatalf("skill offered with only person-started skills: %d tools", len(got))
	}
	write("plain", "", "Plain body.\n")
	set := load()
	built := Build(Deps{Skills: set, Root: root})
	if len(built) != 1 {
		t.Fatalf("tools %v", built)
	}
	res := built[0].Run(context.Background(), []byte(`{"skill":"board"}`))
	if !res.IsError || !strings.Contains(res.Output, "they run it as /board") || strings.Contains(res.Output, "Show the board") {
		t.Fatalf("result %+v", res)
	}
	if res := built[0].Run(context.Background(), []byte(`{"skill":"nope"}`)); !strings.Contains(res.Output, "the skills are plain") {
		t.Fatalf("the model was named a person's skill: %+v", res)
	}
	board, _ := set.Lookup("board")
	msg, err := SkillMessage(board, root, "this week")
	if err != nil || msg != "Base directory for this skill: .claude/skills/board\n\nShow the board for this week." {
		t.Fatalf("%v %q", err, msg)
	}
	plain, _ := set.Lookup("plain")
	if msg, _ := SkillMessage(plain, root, "x y"); !strings.HasSuffix(msg, "Plain body.\n\nARGUMENTS: x y") {
		t.Fatalf("%q", msg)
	}
}
