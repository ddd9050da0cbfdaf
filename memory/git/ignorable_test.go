package git

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestMayIgnoreSeesEverySource: with no source of ignore patterns ralph
// starts no git check-ignore, and each source git reads makes it ask git,
// which then finds the file ignored.
func TestMayIgnoreSeesEverySource(t *testing.T) {
	for _, c := range []struct {
		name, setup string
	}{
		{"none", ""},
		{"top .gitignore", "echo '*.log' > .gitignore"},
		{"a directory's .gitignore", "echo '*.log' > d/.gitignore"},
		{"info/exclude", "echo '*.log' >> .git/info/exclude"},
		{"core.excludesFile", "echo '*.log' > ../ex && git config core.excludesFile \"$PWD/../ex\""},
		{"the global ignore file", "mkdir -p \"$XDG_CONFIG_HOME/git\" && echo '*.log' > \"$XDG_CONFIG_HOME/git/ignore\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			trustEnv(t)
			dir := filepath.Join(t.TempDir(), "r")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			sh(t, dir, "git init -q && mkdir d && printf '# comments only\\n\\n' > .git/info/exclude")
			if c.setup != "" {
				sh(t, dir, c.setup)
			}
			write(t, filepath.Join(dir, "d", "x.log"), "x\n")
			cps := NewCheckpoints(open(t, dir), "s1", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
			ctx := context.Background()
			may := cps.mayIgnore(ctx, []string{"d/x.log"})
			ignored, err := cps.ignoredOf(ctx, nil, []string{"d/x.log"})
			if err != nil {
				t.Fatal(err)
			}
			if want := c.setup != ""; may != want || ignored["d/x.log"] != want {
				t.Fatalf("mayIgnore %v, ignored %v; want both %v", may, ignored["d/x.log"], want)
			}
		})
	}
}
