// Command benchpeers times ralph's one-shot against the other agents'
// one-shots, `codex exec` and `claude -p`, each pointed at the same
// stand-in model on 127.0.0.1 that answers "hi" at once: the wall time of
// the whole process, which is what a script calling an agent waits for,
// and its peak resident memory. The runs are paired (each round runs
// every agent once, in turn), so a busy machine slows them alike; it
// prints medians and ralph's ratios to each peer. A peer that is not
// installed is skipped with a sentence. `make bench-peers` runs it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/workers/proctree"
)

// peer is one agent's one-shot as this program runs it.
type peer struct {
	name string
	// args are the command line after the binary; setup writes what the
	// agent's config needs under home and returns its environment.
	args  []string
	setup func(home, url string) ([]string, error)
	bin   string // the resolved binary
	env   []string
	// wall and rss are each run's wall time and peak resident memory.
	wall []time.Duration
	rss  []int64
}

const prompt = "say hi"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("benchpeers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 20, "paired `rounds`: each agent runs once a round")
	ralph := fs.String("ralph", "bin/ralph", "the ralph `binary` to time")
	inGit := fs.Bool("git", false, "run in a fresh git repository with one commit rather than a plain directory")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *n < 1 {
		fmt.Fprintln(stderr, "benchpeers: -n must be at least 1")
		return 2
	}
	ralphBin, err := filepath.Abs(*ralph)
	if err != nil {
		fmt.Fprintln(stderr, "benchpeers:", err)
		return 2
	}
	scratch, err := os.MkdirTemp("", "benchpeers-")
	if err != nil {
		fmt.Fprintln(stderr, "benchpeers:", err)
		return 1
	}
	defer os.RemoveAll(scratch)
	// Every request gets "hi" at once, whichever API it speaks, side
	// requests (titles, summaries) included.
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response { return llmtest.Response{Text: "hi"} })
	defer srv.Close()

	var peers []*peer
	for _, p := range allPeers(ralphBin) {
		bin, err := exec.LookPath(p.bin)
		if err != nil {
			fmt.Fprintf(stdout, "%s is not installed; skipping it.\n", p.bin)
			continue
		}
		home := filepath.Join(scratch, "home-"+p.name)
		if err := os.MkdirAll(home, 0o700); err != nil {
			fmt.Fprintln(stderr, "benchpeers:", err)
			return 1
		}
		env, err := p.setup(home, srv.URL)
		if err != nil {
			fmt.Fprintf(stderr, "benchpeers: %s: %v\n", p.name, err)
			return 1
		}
		p.bin, p.env = bin, env
		peers = append(peers, p)
	}
	work := filepath.Join(scratch, "work")
	if err := makeWorkDir(work, *inGit); err != nil {
		fmt.Fprintln(stderr, "benchpeers:", err)
		return 1
	}
	// One run each first, untimed: it fills the page cache with every
	// binary, and a peer that cannot answer is dropped with its reason.
	peers = slices.DeleteFunc(peers, func(p *peer) bool {
		if _, _, err := p.once(work); err != nil {
			fmt.Fprintf(stdout, "%s failed against the stand-in, so it is left out: %v\n", p.name, err)
			return true
		}
		return false
	})
	for i := 0; i < *n; i++ {
		for k := range peers {
			// Each round starts with a different agent, so none always
			// runs right after the same other one.
			p := peers[(i+k)%len(peers)]
			wall, rss, err := p.once(work)
			if err != nil {
				fmt.Fprintf(stderr, "benchpeers: %s: %v\n", p.name, err)
				return 1
			}
			p.wall, p.rss = append(p.wall, wall), append(p.rss, rss)
		}
	}
	report(stdout, peers, *n, *inGit)
	return 0
}

// allPeers are the agents compared, ralph first.
func allPeers(ralphBin string) []*peer {
	return []*peer{
		{name: "ralph", bin: ralphBin, args: []string{"--json", prompt},
			setup: func(home, url string) ([]string, error) {
				return cleanEnv(home, providers.OpenAIBaseURLEnv+"="+url), nil
			}},
		// codex speaks OpenAI's Responses API to a model provider of its
		// config (as the end-to-end harness's realCLIs sets it up).
		{name: "codex exec", bin: "codex", args: []string{"exec", "--skip-git-repo-check", prompt},
			setup: func(home, url string) ([]string, error) {
				cfg := fmt.Sprintf(`model = "fake-model"
model_provider = "stand-in"

[model_providers.stand-in]
name = "stand-in"
base_url = %q
env_key = "STAND_IN_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, url)
				codexHome := filepath.Join(home, "codex")
				if err := os.MkdirAll(codexHome, 0o700); err != nil {
					return nil, err
				}
				if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o600); err != nil {
					return nil, err
				}
				return cleanEnv(home, "CODEX_HOME="+codexHome, "STAND_IN_API_KEY=fake-codex-key"), nil
			}},
		// claude speaks Anthropic's Messages API at ANTHROPIC_BASE_URL.
		{name: "claude -p", bin: "claude", args: []string{"-p", prompt},
			setup: func(home, url string) ([]string, error) {
				anthropic, _ := providers.Named("anthropic")
				return cleanEnv(home, anthropic.BaseURLEnv+"="+strings.TrimSuffix(url, "/v1"), anthropic.KeyEnv+"=fake-anthropic-key",
					"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"), nil
			}},
	}
}

// modelVariables are the variables that point an agent at a model: every
// provider's key, token, endpoint and model variable (the provider table).
func modelVariables() []string {
	out := append(providers.KeyVariables(), providers.OpenAIBaseURLEnv)
	for _, p := range providers.All() {
		if p.BaseURLEnv != "" {
			out = append(out, p.BaseURLEnv)
		}
		if p.ModelEnv != "" {
			out = append(out, p.ModelEnv)
		}
	}
	return out
}

// cleanEnv is this process's environment with a home of the agent's own
// and nothing that would point an agent at a real model or at the
// person's own config, then extra.
func cleanEnv(home string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case slices.Contains(modelVariables(), name):
			continue
		case name == "HOME", name == "XDG_CONFIG_HOME", name == "XDG_STATE_HOME", name == "XDG_CACHE_HOME", name == "XDG_DATA_HOME",
			name == "RALPH_MODEL", name == "CODEX_HOME", name == "CI":
			continue
		}
		env = append(env, kv)
	}
	return append(env, append([]string{"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + filepath.Join(home, ".state"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share")}, extra...)...)
}

// makeWorkDir makes the directory every agent runs in.
func makeWorkDir(dir string, inGit bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if !inGit {
		return nil
	}
	cmd := exec.Command("sh", "-c", "git init -q && echo hi > README.md && git add -A && "+
		"git -c user.name=bench -c user.email=bench@localhost commit -qm first")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git repository for the runs: %w: %s", err, out)
	}
	return nil
}

// once runs the agent's one-shot and returns its wall time and peak
// resident memory; an agent that fails or does not answer "hi" is an
// error, with the end of what it said.
func (p *peer) once(dir string) (time.Duration, int64, error) {
	cmd := exec.Command(p.bin, p.args...)
	cmd.Dir, cmd.Env = dir, p.env
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err == nil && !strings.Contains(out.String(), "hi") {
		err = errors.New("it did not print the stand-in's answer")
	}
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %s", err, lastLine(errOut.String()+out.String()))
	}
	return wall, proctree.MaxRSS(cmd.ProcessState), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// report prints each agent's medians and ralph's ratios to it.
func report(w io.Writer, peers []*peer, n int, inGit bool) {
	where := "a plain directory"
	if inGit {
		where = "a fresh git repository"
	}
	fmt.Fprintf(w, "%d paired runs of %q in %s against a stand-in model on 127.0.0.1 (medians)\n\n", n, prompt, where)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "agent\twall ms\tp90 ms\tpeak RSS MB\ttime / ralph's\tmemory / ralph's\t")
	var base *peer
	if len(peers) > 0 && peers[0].name == "ralph" {
		base = peers[0]
	}
	for _, p := range peers {
		wall, p90, rss := median(p.wall, 0.5), median(p.wall, 0.9), median(p.rss, 0.5)
		vsTime, vsMem := "", ""
		if base != nil && p != base {
			vsTime = fmt.Sprintf("%.1fx", float64(wall)/float64(median(base.wall, 0.5)))
			if b := median(base.rss, 0.5); b > 0 {
				vsMem = fmt.Sprintf("%.1fx", float64(rss)/float64(b))
			}
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%s\t%s\t\n", p.name, ms(wall), ms(p90), float64(rss)/(1<<20), vsTime, vsMem)
	}
	tw.Flush()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// median is the p-th quantile of vs (0.5 the median).
func median[T time.Duration | int64](vs []T, p float64) T {
	s := slices.Clone(vs)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p+0.5)]
}
