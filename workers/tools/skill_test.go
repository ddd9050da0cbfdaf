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
