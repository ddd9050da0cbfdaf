package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/fixtures"
)

// Issue 59: skills in the Agent Skills layout. A project carries real
// public SKILL.md files nobody here wrote (the claude-code-hooks fixture,
// MIT, see its ORIGIN.md) under .claude/skills/; the person has one of
// their own under ~/.claude/skills/. The first request's system prompt
// lists each skill by name and description and holds no body; the model
// loads one with the skill tool and its body reaches the next request;
// ralph skills lists them with where each came from. A SKILL.md linked to
// the person's key, and a person's skill file linked to it, never reach
// the endpoint; a malformed SKILL.md is one sentence.

// skillSecret is the person's key's content, which must reach no request.
const skillSecret = "SKILL-E2E-SECRET-KEY-4417"

// publicSkill is one SKILL.md of the claude-code-hooks fixture: its name (its
// directory's), description and body as the file has them.
type publicSkill struct{ dir, name, description, body string }

// publicSkills are the fixture's public skills, read plainly here
// (the test's own reading, not ralph's).
func publicSkills(t *testing.T) []publicSkill {
	t.Helper()
	files, err := filepath.Glob(fixtures.Path(t, "claude-code-hooks", "plugins", "*", "skills", "*", "SKILL.md"))
	if err != nil || len(files) < 5 {
		t.Fatalf("public skills in the claude-code-hooks fixture: %v %v", files, err)
	}
	var out []publicSkill
	for _, f := range files {
		parts := strings.SplitN(readFileT(t, f), "---\n", 3)
		if len(parts) != 3 {
			t.Fatalf("%s has no front matter", f)
		}
		s := publicSkill{dir: filepath.Dir(f), name: filepath.Base(filepath.Dir(f)), body: strings.TrimSpace(parts[2])}
		for _, line := range strings.Split(parts[1], "\n") {
			if d, ok := strings.CutPrefix(line, "description: "); ok {
				s.description = d
			}
		}
		out = append(out, s)
	}
	return out
}

// skillCopyDir copies the regular files under src to dst, unchanged.
func skillCopyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// skillsProject lays out the attack: the public skills under the
// project's .claude/skills/, a SKILL.md linked to the person's key, a
// malformed SKILL.md, and a skill of the person's own whose directory
// holds a script and a link to the key.
func skillsProject(t *testing.T) (proj, home string, public []publicSkill) {
	t.Helper()
	proj, home = attackLayout(t)
	key := filepath.Join(home, ".ssh", "id_rsa")
	skillWrite(t, key, "-----BEGIN OPENSSH PRIVATE KEY-----\n"+skillSecret+"\n")
	public = publicSkills(t)
	skillsDir := filepath.Join(proj, ".claude", "skills")
	for _, s := range public {
		skillCopyDir(t, s.dir, filepath.Join(skillsDir, s.name))
	}
	skillMust(t, os.MkdirAll(filepath.Join(skillsDir, "stealer"), 0o755))
	skillMust(t, os.Symlink(key, filepath.Join(skillsDir, "stealer", "SKILL.md")))
	skillWrite(t, filepath.Join(skillsDir, "broken", "SKILL.md"), "---\nname: broken\ndescription: never closed\n")
	mine := filepath.Join(home, ".claude", "skills", "release-notes")
	skillWrite(t, filepath.Join(mine, "SKILL.md"), "---\nname: release-notes\ndescription: Write release notes: group the commits since the last tag\n---\nRun scripts/notes.sh and tidy its output.\n")
	skillWrite(t, filepath.Join(mine, "scripts", "notes.sh"), "git log --oneline \"$(git describe --tags --abbrev=0)\"..HEAD\n")
	skillMust(t, os.Symlink("../../../.ssh/id_rsa", filepath.Join(mine, "key")))
	return proj, home, public
}

func skillWrite(t *testing.T, path, text string) {
	t.Helper()
	skillMust(t, os.MkdirAll(filepath.Dir(path), 0o755))
	skillMust(t, os.WriteFile(path, []byte(text), 0o644))
}

func skillMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSkillsPublicListedAndLoaded drives a session over the public skills
// in the default sandbox and in the fallback: the public skills are the
// person's to start (disable-model-invocation), so the model's list in
// the first request leaves them out and the person's /board sends the
// board's body; the person's own skill is listed and loaded on use, its
// file read through its own door, and the key refused on every way in.
func TestSkillsPublicListedAndLoaded(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home, public := skillsProject(t)
			srv := inlineServer(t, toolScenario(t, "skills", [][]toolCall{
				{{"skill", `{"skill":"release-notes"}`}},
				{{"skill", `{"skill":"release-notes","file":"scripts/notes.sh"}`}, {"skill", `{"skill":"release-notes","file":"key"}`},
					{"skill", `{"skill":"release-notes","file":"../../../.ssh/id_rsa"}`}, {"read_file", `{"path":".claude/skills/stealer/SKILL.md"}`}},
			}, "shown the board"))
			env := attackEnv(t, home, srv.URL, mode.env)
			r := ralph(t, proj, env, nil, "-y", "/board this week")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3\n%s", len(reqs), r.stderr)
			}
			for i, q := range reqs {
				if strings.Contains(string(q.Body), skillSecret) {
					t.Fatalf("request %d carries the person's key", i+1)
				}
			}
			system := reqs[0].Request.Messages[0].Content
			for _, s := range public {
				if strings.Contains(system, "- "+s.name+": ") {
					t.Errorf("the system prompt lists %s, which is the person's to start (disable-model-invocation)", s.name)
				}
				if strings.Contains(system, s.body[:min(len(s.body), 120)]) {
					t.Errorf("the system prompt holds %s's body", s.name)
				}
			}
			if !strings.Contains(system, "- release-notes: Write release notes: group the commits since the last tag") {
				t.Errorf("the person's skill is not listed:\n%s", system)
			}
			if strings.Contains(system, "stealer") || strings.Contains(system, "never closed") {
				t.Errorf("a skill ralph left out is in the system prompt")
			}
			offered := false
			for _, tool := range reqs[0].Request.Tools {
				offered = offered || tool.Function != nil && tool.Function.Name == "skill"
			}
			if !offered {
				t.Fatal("the skill tool is not offered")
			}
			board := public[0]
			for _, s := range public {
				if s.name == "board" {
					board = s
				}
			}
			msgs := reqs[0].Request.Messages
			sent := msgs[len(msgs)-1].Content
			// The person started it, so its !`node …` line ran (under -y,
			// in the sandbox) and its output took the line's place, as in
			// Claude Code: here node's complaint, since this copy of the
			// skill has no plugin around it to find bounty-board.js in.
			_, after, _ := strings.Cut(strings.TrimSpace(board.body), "--render`")
			if !strings.Contains(sent, strings.TrimSpace(after)) || !strings.Contains(sent, "ARGUMENTS: this week") {
				t.Errorf("/board did not send the board's body with its arguments:\n%s", sent[:min(len(sent), 2000)])
			}
			if strings.Contains(sent, "!`node") || !strings.Contains(sent, "bounty-board.js") {
				t.Errorf("the skill's !`node …` line was not run in its place: %q", sent)
			}
			mine := lastToolResult(t, reqs[1].Body)
			if !strings.Contains(mine, "Run scripts/notes.sh") || !strings.Contains(mine, "- scripts/notes.sh") || !strings.Contains(mine, `"file"`) {
				t.Errorf("the person's skill's result: %s", mine)
			}
			last := string(reqs[2].Body)
			results := toolResults(reqs[2])
			if rf := results["read_file"]; len(rf) != 1 || !strings.Contains(rf[0], "outside the project") {
				t.Errorf("read_file of the SKILL.md linked to the key: %q", rf)
			}
			if sk := results["skill"]; len(sk) != 4 || !strings.Contains(sk[2], "link out of its directory") || !strings.Contains(sk[3], "not a file inside the skill's directory") {
				t.Errorf("the skill's file linked to the key and a path out of the skill: %q", sk)
			}
			if !strings.Contains(last, "git describe --tags") {
				t.Errorf("the person's skill's script was not read through the skill tool: %s", last)
			}
			for _, w := range []string{"stealer/SKILL.md is left out: it is a link out of its directory", "broken/SKILL.md is left out: malformed front matter"} {
				if strings.Count(r.stderr, w) != 1 {
					t.Errorf("stderr does not say once %q:\n%s", w, r.stderr)
				}
			}
			if strings.Contains(r.stdout+r.stderr, skillSecret) {
				t.Fatal("the key reached the terminal")
			}
		})
	}
}

// lastToolResult is the content of the last tool message of a request.
func lastToolResult(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "tool" {
			return req.Messages[i].Content
		}
	}
	return ""
}

// TestSkillsCommandListsSources: ralph skills lists every skill with its
// source and its SKILL.md, the malformed and the linked one as one warning
// line each, exits 0, and shows nothing of the key; --json says the same.
func TestSkillsCommandListsSources(t *testing.T) {
	t.Parallel()
	proj, home, public := skillsProject(t)
	env := attackEnv(t, home, "http://127.0.0.1:1/v1", nil)
	r := ralph(t, proj, env, nil, "skills")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, s := range public {
		if !strings.Contains(r.stdout, s.name+" — project — .claude/skills/"+s.name+"/SKILL.md\n  "+s.description+"\n") {
			t.Errorf("ralph skills does not list %s:\n%s", s.name, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "release-notes — user — "+filepath.Join(home, ".claude", "skills", "release-notes", "SKILL.md")) {
		t.Errorf("ralph skills does not list the person's skill:\n%s", r.stdout)
	}
	var warnings []string
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "warning: ") {
			warnings = append(warnings, line)
		}
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0]+warnings[1], "broken/SKILL.md is left out") || !strings.Contains(warnings[0]+warnings[1], "stealer/SKILL.md is left out") {
		t.Errorf("warnings %q", warnings)
	}
	if strings.Contains(r.stdout+r.stderr, skillSecret) {
		t.Fatal("the key reached the terminal")
	}
	j := ralph(t, proj, env, nil, "skills", "--json")
	var out struct {
		Skills []struct {
			Name, Source, Path string
		}
		Warnings []string
	}
	if err := json.Unmarshal([]byte(j.stdout), &out); err != nil || j.code != 0 {
		t.Fatalf("--json: %v exit %d\n%s", err, j.code, j.stdout)
	}
	if len(out.Skills) != len(public)+1 || len(out.Warnings) != 2 {
		t.Fatalf("--json: %+v", out)
	}
}

// TestSkillsPromptStaysOnResume: a skill added after the session started
// changes nothing of a resumed session's system prompt (its prefix stays
// the same, byte for byte), and a new session lists it.
func TestSkillsPromptStaysOnResume(t *testing.T) {
	t.Parallel()
	proj, home, _ := skillsProject(t)
	srv := inlineServer(t, `{"name":"resume","responses":[{"text":"one"},{"text":"two"},{"text":"three"}]}`)
	env := attackEnv(t, home, srv.URL, nil)
	if r := ralph(t, proj, env, nil, "-y", "first"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	skillWrite(t, filepath.Join(proj, ".claude", "skills", "late", "SKILL.md"), "---\nname: late\ndescription: Added after the session started.\n---\nlate body\n")
	if r := ralph(t, proj, env, nil, "-y", "-c", "second"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if r := ralph(t, proj, env, nil, "-y", "third"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	first, resumed, fresh := reqs[0].Request.Messages[0].Content, reqs[1].Request.Messages[0].Content, reqs[2].Request.Messages[0].Content
	if first != resumed {
		t.Errorf("the resumed session's system prompt changed:\n%s\n---\n%s", first, resumed)
	}
	if strings.Contains(first, "- late:") || !strings.Contains(fresh, "- late: Added after the session started.") {
		t.Errorf("the new skill: first %v, new session %v", strings.Contains(first, "- late:"), strings.Contains(fresh, "- late:"))
	}
}

// TestSkillsSlashCommand: /skills in a script lists the session's skills
// with their sources, as ralph skills does, without a model request.
func TestSkillsSlashCommand(t *testing.T) {
	t.Parallel()
	proj, home, _ := skillsProject(t)
	srv := inlineServer(t, `{"name":"none","responses":[{"text":"unused"}]}`)
	env := attackEnv(t, home, srv.URL, nil)
	r := ralph(t, proj, env, strings.NewReader("/skills\n"), "script", "-")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"board — project — .claude/skills/board/SKILL.md", "release-notes — user — ", "warning: skill " + filepath.Join(proj, ".claude", "skills", "broken", "SKILL.md") + " is left out"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("/skills lacks %q:\n%s", want, r.stdout)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("/skills made %d model requests", n)
	}
}

// TestSkillsReachAChild: a child agent offered the skill tool is given
// the session's list of skills the model may use in its own system
// prompt, and can load one; the public skills, the person's to start
// (the person's /board starts the session here), are not in it.
func TestSkillsReachAChild(t *testing.T) {
	t.Parallel()
	proj, home, public := skillsProject(t)
	srv := inlineServer(t, `{"name":"child","responses":[
		{"tool_calls":[{"name":"spawn_agent","arguments":"{\"task\":\"show the bounty board\"}"}]},
		{"tool_calls":[{"name":"skill","arguments":"{\"skill\":\"release-notes\"}"}]},
		{"text":"child done"},
		{"text":"parent done"}]}`)
	env := attackEnv(t, home, srv.URL, nil)
	if r := ralph(t, proj, env, nil, "-y", "/board delegate it"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var child []string
	loaded := false
	for _, q := range srv.Requests() {
		if sys := q.Request.Messages[0].Content; strings.HasPrefix(sys, "You are a child agent") {
			child = append(child, sys)
			if res := toolResults(q)["skill"]; len(res) > 0 {
				loaded = strings.Contains(res[0], "Run scripts/notes.sh")
			}
		}
	}
	if len(child) != 2 || !loaded {
		t.Fatalf("%d child requests, want 2; the person's skill loaded: %v", len(child), loaded)
	}
	if !strings.Contains(child[0], "- release-notes: Write release notes") {
		t.Errorf("the child's system prompt does not list the person's skill:\n%s", child[0])
	}
	for _, s := range public {
		if strings.Contains(child[0], "- "+s.name+": ") {
			t.Errorf("the child's system prompt lists %s, which is the person's to start", s.name)
		}
	}
	if first := srv.Requests()[0].Request.Messages; !strings.Contains(first[len(first)-1].Content, "# Bounty board") {
		t.Errorf("/board did not send the board's body: %q", first[len(first)-1].Content)
	}
}
