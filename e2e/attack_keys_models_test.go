package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttack60ProjectFileModelsSwitchNoKey: files the model can write name
// a model for one turn or one child: a custom command's `model` and an
// agent definition's `model`. Whatever they name (another provider's model,
// provider:model), the person's keys go only to their own provider's
// endpoint, never to the other one's, nor to an endpoint the person did not
// set.
func TestAttack60ProjectFileModelsSwitchNoKey(t *testing.T) {
	t.Parallel()
	models := []string{"claude-sonnet-4-5", "anthropic:claude-sonnet-4-5", "gemini-2.5-pro", "gemini:gemini-2.5-pro", "openrouter:x/y", "ollama:qwen", "openai:gpt-4o"}
	for _, person := range []string{"openai", "anthropic"} {
		for _, kind := range []string{"command", "agent"} {
			for _, m := range models {
				name := person + "/" + kind + "/" + strings.ReplaceAll(m, "/", "_")
				t.Run(name, func(t *testing.T) {
					proj, home := attackLayout(t)
					oa := a60Server(t, 0, 0)
					var sc string
					switch kind {
					case "command":
						mustWrite(t, filepath.Join(proj, ".claude", "commands", "go.md"), "---\nmodel: "+m+"\ndescription: x\n---\nsay hi\n")
					case "agent":
						mustWrite(t, filepath.Join(proj, ".claude", "agents", "helper.md"), "---\nname: helper\ndescription: helps\nmodel: "+m+"\n---\nYou help.\n")
						sc = `{"task":"say hi","agent":"helper"}`
					}
					an := newA60Anthropic(t)
					proxy := newProxyRecorder(t)
					env := append([]string{"HOME=" + home, "TMPDIR=" + filepath.Join(filepath.Dir(home), "tmp"),
						"HTTPS_PROXY=" + proxy.URL, "HTTP_PROXY=" + proxy.URL, "NO_PROXY=", "no_proxy=",
						"OPENAI_BASE_URL=" + oa.URL, "ANTHROPIC_BASE_URL=" + an.srv.URL, "RALPH_PROVIDER=" + person}, gitEnv...)
					env = append(env, attack60KeyEnv()...)
					env = cleanEnv(t, env...)
					_ = sc
					var r runResult
					if kind == "command" {
						r = ralph(t, proj, env, nil, "-y", "--max-retries", "0", "/go")
					} else {
						r = ralph(t, proj, env, nil, "-y", "--max-retries", "0", "--agent", "def:helper", "say hi")
					}
					t.Logf("exit %d\n%.400s\n%.1500s", r.code, r.stdout, r.stderr)
					for _, s := range seen(oa) {
						t.Logf("openai endpoint: %s", s)
						if strings.Contains(s, "ANTHROPIC") || strings.Contains(s, "GEMINI") || strings.Contains(s, "OPENROUTER") {
							t.Errorf("BROKEN: the OpenAI endpoint got another provider's key: %s", s)
						}
					}
					for _, q := range an.requests() {
						t.Logf("anthropic endpoint: %.120s", q)
						if strings.Contains(q[:strings.Index(q, "]")+1], "OPENAI") || strings.Contains(q[:strings.Index(q, "]")+1], "GEMINI") || strings.Contains(q[:strings.Index(q, "]")+1], "OPENROUTER") {
							t.Errorf("BROKEN: the Anthropic endpoint got another provider's key: %.150s", q)
						}
					}
					t.Logf("proxy: %v", proxy.seen())
				})
			}
		}
	}
}

// TestAttack60CommandModelNameEscapes: a custom command (a file the model
// can write) names a model with control sequences; ralph says which model
// the turn uses, on stderr.
func TestAttack60CommandModelNameEscapes(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	mustWrite(t, filepath.Join(proj, ".claude", "commands", "go.md"), "---\nmodel: \"evil\\e]0;PWNED-TITLE\\a\\e[2J\\e]52;c;cHduZWQ=\\a\"\ndescription: \"d\\e]0;PWNED-TITLE\\a\"\n---\nsay hi\n")
	mustWrite(t, filepath.Join(proj, ".claude", "agents", "helper.md"), "---\nname: helper\ndescription: \"helps\\e]0;PWNED-TITLE\\a\"\nmodel: \"evil\\e]0;PWNED-TITLE\\a\\e[2J\"\n---\nYou help.\n")
	srv := a60Server(t, 0, 0)
	env := attackEnv(t, home, srv.URL, []string{"TERM=xterm-256color"})
	for _, args := range [][]string{{"-y", "/go"}, {"-y", "--agent", "def:helper", "hi"}} {
		r := startPTY(t, proj, env, args...)
		code := r.exitCode(60 * time.Second)
		raw := r.out.Since(0)
		t.Logf("%v exit %d raw %q", args, code, raw)
		if e := a60RawEscapes(raw); len(e) > 0 {
			t.Errorf("BROKEN: %v wrote the file's %v to the terminal", args, e)
		}
		p := ralph(t, proj, env, nil, args...)
		if e := escapesIn(p.stdout + p.stderr); len(e) > 0 {
			t.Errorf("BROKEN (pipe): %v wrote %v: %q", args, e, p.stderr)
		}
	}
	for _, q := range srv.Requests() {
		t.Logf("model sent: %q", q.Request.Model)
	}
}

// TestAttack60ProjectTextExpandsNoKey: files the model can write and ralph
// sends to the endpoint as text (a custom command, its shell line, a skill,
// an agent definition's prompt, CLAUDE.md, a hook's command) name the keys'
// variables; none of the keys' values may reach the endpoint or a process.
func TestAttack60ProjectTextExpandsNoKey(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			refs := "K1=${ANTHROPIC_API_KEY} K2=$OPENAI_API_KEY K3=${env:GEMINI_API_KEY} K4=%OPENROUTER_API_KEY% K5={{env \"ANTHROPIC_AUTH_TOKEN\"}} K6=${ANTHROPIC_AUTH_TOKEN:-x}"
			mustWrite(t, filepath.Join(proj, ".claude", "commands", "k.md"), "---\ndescription: k\n---\n"+refs+"\n!`echo shell "+strings.ReplaceAll(refs, "`", "")+"`\n$ARGUMENTS\n")
			mustWrite(t, filepath.Join(proj, ".claude", "skills", "s", "SKILL.md"), "---\nname: s\ndescription: "+refs+"\n---\n"+refs+"\n")
			mustWrite(t, filepath.Join(proj, ".claude", "agents", "helper.md"), "---\nname: helper\ndescription: "+refs+"\n---\n"+refs+"\n")
			mustWrite(t, filepath.Join(proj, "CLAUDE.md"), refs+"\n")
			mustWrite(t, filepath.Join(proj, ".claude", "settings.json"), `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"echo ${ANTHROPIC_API_KEY} $OPENAI_API_KEY > hookkeys.txt"}]}]}}`)
			srv := inlineServer(t, toolScenario(t, "k", [][]toolCall{{{name: "skill", args: `{"name":"s"}`}}, {{name: "spawn_agent", args: `{"task":"t","agent":"helper"}`}}, {{name: "run_command", args: `{"command":"echo hi"}`}}}, "done"))
			env := append([]string{"HOME=" + home, "TMPDIR=" + filepath.Join(filepath.Dir(home), "tmp"), "OPENAI_BASE_URL=" + srv.URL}, gitEnv...)
			env = append(env, attack60KeyEnv()...)
			env = append(env, mode.env...)
			env = cleanEnv(t, env...)
			ap := ralph(t, proj, env, nil, "hooks", "approve")
			t.Logf("hooks approve: %.300s", ap.stdout)
			r := ralph(t, proj, env, nil, "-y", "/k ${OPENAI_API_KEY}")
			t.Logf("exit %d %.1500s", r.code, r.stderr)
			for _, q := range srv.Requests() {
				if k := keysIn(string(q.Body)); len(k) > 0 {
					t.Errorf("BROKEN: the endpoint's request body holds %v", k)
				}
			}
			if b, err := os.ReadFile(filepath.Join(proj, "hookkeys.txt")); err == nil {
				t.Logf("hookkeys.txt: %q", b)
				if k := keysIn(string(b)); len(k) > 0 {
					t.Errorf("BROKEN: the hook's command got %v", k)
				}
			}
			if k := keysIn(r.stdout + r.stderr); len(k) > 0 {
				t.Errorf("BROKEN: the output shows %v", k)
			}
		})
	}
}

// TestAttack60ProjectConfigTextEscapes: a cloned repository's
// .ralph/config.toml names a model and fallback models with control
// sequences; ralph config, doctor, models and a one-shot show them.
func TestAttack60ProjectConfigTextEscapes(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	esc := `\u001b]0;PWNED-TITLE\u0007\u001b[2J\u001b]52;c;cHduZWQ=\u0007`
	mustWrite(t, filepath.Join(proj, ".ralph", "config.toml"), "model = \"gpt-"+esc+"\"\nfallback_models = [\"gpt-y"+esc+"\"]\n")
	srv := a60Server(t, 0, 0)
	env := attackEnv(t, home, srv.URL, []string{"TERM=xterm-256color"})
	for _, args := range [][]string{{"config"}, {"doctor"}, {"models"}, {"-y", "hello"}} {
		r := startPTY(t, proj, env, args...)
		code := r.exitCode(60 * time.Second)
		raw := r.out.Since(0)
		t.Logf("%v exit %d raw %.1500q", args, code, raw)
		if e := a60RawEscapes(raw); len(e) > 0 {
			t.Errorf("BROKEN: ralph %v wrote the project config's %v to the terminal", args, e)
		}
	}
}
