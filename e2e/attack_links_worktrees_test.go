package e2e

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// treeOf lists every path under dir (relative, with a link's target),
// leaving out the directories skip names: what a run may not add to or
// take from the person's home.
func treeOf(t *testing.T, dir string, skip ...string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && slices.Contains(skip, rel) {
			return filepath.SkipDir
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			rel += " -> " + target
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAttack66WorktreesThroughALink: cause 7 of issue 66. In the
// Landlock-only fallback a command may write .ralph/, and the model's
// replaces .ralph/worktrees with a link: to the person's home, or inside
// the project (../src, which a bare os.Root would follow). The next
// `ralph run --worktrees` once took ~/src for a half-made worktree of
// the task "src", removed it (the person's source tree was gone), made
// the task's worktree there and rooted the task's sandbox in $HOME. Now
// the person's tree is untouched, nothing is made under $HOME, and ralph
// refuses the run's worktree with one sentence naming the link. In the
// default sandbox .ralph/ is read-only to commands and the link is never
// made; the run is then tried with the link planted by hand.
func TestAttack66WorktreesThroughALink(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		for _, where := range []string{"home", "inside"} {
			t.Run(mode.name+"/"+where, func(t *testing.T) {
				proj, home := attackLayout(t)
				victim := filepath.Join(home, "src")
				target := home
				if where == "inside" {
					victim = filepath.Join(proj, "src", "src")
					target = "../src"
				}
				mustWrite(t, filepath.Join(victim, "marker.txt"), "the person's source\n")
				mustWrite(t, filepath.Join(proj, "RALPH_TASKS.md"), "# Tasks\n\n- [ ] write w.txt done <!-- ralph:id=src -->\n")
				shIn(t, proj, "git add -A && git commit -qm 'the tasks and the source'")

				plant := "mkdir -p .ralph && rm -rf .ralph/worktrees && ln -s " + target + " .ralph/worktrees"
				srv := inlineServer(t, toolScenario(t, "plant", [][]toolCall{{{name: "run_command", args: mustJSON(t, map[string]string{"command": plant})}}}, "planted"))
				env := attackEnv(t, home, srv.URL, append([]string{"GIT_AUTHOR_NAME=p", "GIT_AUTHOR_EMAIL=p@example.com", "GIT_COMMITTER_NAME=p", "GIT_COMMITTER_EMAIL=p@example.com"}, mode.env...))
				r := ralph(t, proj, env, nil, "-y", "tidy up")
				t.Logf("plant: exit %d\n%.1500s", r.code, r.stderr)
				link := filepath.Join(proj, ".ralph", "worktrees")
				fi, err := os.Lstat(link)
				planted := err == nil && fi.Mode()&fs.ModeSymlink != 0
				t.Logf("the model's command made the link: %v", planted)
				if mode.env == nil && planted {
					t.Errorf("BROKEN: in the default sandbox a command wrote .ralph/worktrees")
				}
				if !planted {
					_ = os.RemoveAll(link)
					if err := os.Symlink(target, link); err != nil {
						t.Fatal(err)
					}
				}

				before := treeOf(t, home, ".cache")
				run := fileTaskModel(t, nil)
				env = attackEnv(t, home, run.URL, append([]string{"GIT_AUTHOR_NAME=p", "GIT_AUTHOR_EMAIL=p@example.com", "GIT_COMMITTER_NAME=p", "GIT_COMMITTER_EMAIL=p@example.com"}, mode.env...))
				r = ralph(t, proj, env, nil, "-y", "run", "--worktrees", "--max-retries", "0")
				t.Logf("run: exit %d\n%.400s\n%.2500s", r.code, r.stdout, r.stderr)

				if got, err := os.ReadFile(filepath.Join(victim, "marker.txt")); err != nil || string(got) != "the person's source\n" {
					t.Errorf("BROKEN: the person's tree %s lost its file: %q, %v", victim, got, err)
				}
				if entries, _ := os.ReadDir(victim); len(entries) != 1 {
					var names []string
					for _, e := range entries {
						names = append(names, e.Name())
					}
					t.Errorf("BROKEN: ralph made a worktree in the person's tree %s: %v", victim, names)
				}
				if after := treeOf(t, home, ".cache"); !slices.Equal(before, after) {
					t.Errorf("BROKEN: the run changed the person's home:\nbefore %v\nafter  %v", before, after)
				}
				if got := shIn(t, proj, "git worktree list --porcelain"); strings.Contains(got, home) || strings.Contains(got, filepath.Join(proj, "src")) {
					t.Errorf("BROKEN: git lists a worktree through the link:\n%s", got)
				}
				if !strings.Contains(r.stdout+r.stderr, "symbolic link") || !strings.Contains(r.stdout+r.stderr, ".ralph/worktrees") {
					t.Errorf("ralph did not say why it made no worktree:\n%s", r.stderr)
				}
				if _, err := os.Stat(filepath.Join(proj, "w.txt")); err == nil {
					t.Errorf("the task ran somewhere although its worktree was refused")
				}
				wantBashrc(t, home)
			})
		}
	}
}

// TestAttack66ModelsCacheThroughALink: cause 8 of issue 66. The person
// lets commands write their cache directory (sandbox_writable =
// ["~/.cache"], as for a build cache). The model's command plants links at
// the model-list cache's names, the final one and the temporary one ralph
// used to write first, both to ~/.bashrc. The next fetch of the list
// (/model, Tab after --model) then overwrote ~/.bashrc with the
// endpoint's list; now it replaces the links with its own file and
// ~/.bashrc stays the person's. On CI XDG_CACHE_HOME often lies in
// $TMPDIR, where commands write in any case: a link there at ralph/
// itself chose the directory ralph wrote in (~/.config/ralph, the round
// after); there ralph now keeps no cache at all.
func TestAttack66ModelsCacheThroughALink(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			cfgHome := filepath.Join(filepath.Dir(home), "config")
			// The cache home outside the temporary directory, granted.
			cacheHome, err := os.MkdirTemp("/var/tmp", "ralph-cache-")
			if err != nil {
				t.Skipf("no directory outside the temporary directory: %v", err)
			}
			t.Cleanup(func() { os.RemoveAll(cacheHome) })
			mustWrite(t, filepath.Join(cfgHome, "ralph", "config.toml"), "sandbox_writable = [\""+cacheHome+"\"]\n")
			cache := filepath.Join(cacheHome, "ralph")
			if err := os.MkdirAll(cache, 0o755); err != nil {
				t.Fatal(err)
			}

			// The cache file's name, as the first fetch of the list makes
			// it (Tab after --model, through the resolver /model uses).
			srv := inlineServer(t, `{"name":"models","responses":[{"text":"ok"}]}`)
			env := attackEnv(t, home, srv.URL, append([]string{"XDG_CONFIG_HOME=" + cfgHome, "XDG_CACHE_HOME=" + cacheHome}, mode.env...))
			r := ralph(t, proj, env, nil, "__complete", "--model", "")
			t.Logf("models: exit %d\n%.300s\n%.600s", r.code, r.stdout, r.stderr)
			made, _ := filepath.Glob(filepath.Join(cache, "models-*.json"))
			if len(made) != 1 {
				t.Fatalf("ralph models made %v in the cache directory", made)
			}
			name := made[0]

			plant := "rm -f " + name + " && ln -s " + filepath.Join(home, ".bashrc") + " " + name + " && ln -sf " + filepath.Join(home, ".bashrc") + " " + name + ".tmp && echo planted > " + filepath.Join(cache, "ran")
			plantSrv := inlineServer(t, toolScenario(t, "plant", [][]toolCall{{{name: "run_command", args: mustJSON(t, map[string]string{"command": plant})}}}, "planted"))
			penv := attackEnv(t, home, plantSrv.URL, append([]string{"XDG_CONFIG_HOME=" + cfgHome, "XDG_CACHE_HOME=" + cacheHome}, mode.env...))
			r = ralph(t, proj, penv, nil, "-y", "tidy up")
			t.Logf("plant: exit %d\n%.1500s", r.code, r.stderr)
			if _, err := os.Stat(filepath.Join(cache, "ran")); err != nil {
				t.Logf("the sandbox held the cache directory (%v): the links are planted by hand", err)
				_ = os.Remove(name)
				for _, n := range []string{name, name + ".tmp"} {
					_ = os.Remove(n)
					if err := os.Symlink(filepath.Join(home, ".bashrc"), n); err != nil {
						t.Fatal(err)
					}
				}
			}

			r = ralph(t, proj, env, nil, "__complete", "--model", "")
			t.Logf("models: exit %d\n%.300s\n%.600s", r.code, r.stdout, r.stderr)
			wantBashrc(t, home)
			fi, err := os.Lstat(name)
			if err != nil || !fi.Mode().IsRegular() {
				t.Errorf("the cache file is %v, %v: want ralph's own file in place of the link", fi, err)
			}
			var rec struct {
				Models []string `json:"models"`
			}
			if b, err := os.ReadFile(name); err != nil || json.Unmarshal(b, &rec) != nil || len(rec.Models) == 0 {
				t.Errorf("the cache file holds %q, %v", b, err)
			}

			// In the temporary directory: ralph/ a link to the person's
			// config directory, which commands may not write.
			tmpCache := filepath.Join(filepath.Dir(home), "tmp", "cache")
			if err := os.MkdirAll(tmpCache, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(cfgHome, "ralph"), filepath.Join(tmpCache, "ralph")); err != nil {
				t.Fatal(err)
			}
			tenv := attackEnv(t, home, srv.URL, append([]string{"XDG_CONFIG_HOME=" + cfgHome, "XDG_CACHE_HOME=" + tmpCache}, mode.env...))
			r = ralph(t, proj, tenv, nil, "__complete", "--model", "")
			if wrote, _ := filepath.Glob(filepath.Join(cfgHome, "ralph", "models-*.json")); len(wrote) != 0 || r.code != 0 {
				t.Fatalf("ralph wrote %v through a link in a cache directory in $TMPDIR (exit %d)\n%s", wrote, r.code, r.stderr)
			}
		})
	}
}

// mustJSON is v as JSON, for a tool call's arguments.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
