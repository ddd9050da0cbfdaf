package git

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNativeSubjectsAreGitLogs: the first look's subjects read from the
// repository's files are byte for byte what `git log -n --format=%s`
// prints, on a history with what changes git's order and its subjects:
// merges whose parents' dates are out of order, commits of the same
// second, messages with leading blank lines, a subject over two lines
// with trailing white space, an empty message, a gpgsig-like header over
// several lines; at HEAD, detached and for every n up to past the root.
// Where git's walk or its store is not the plain one (packed objects, a
// replace ref, a shallow file, a commit in another encoding) git must
// tell, and a branch without commits has no subjects.
func TestNativeSubjectsAreGitLogs(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	gitDir := filepath.Join(dir, ".git")
	// commit MSGFILE DATE PARENT...: a commit of HEAD's tree with that raw
	// message and committer date, HEAD moved to it.
	sh(t, dir, `cat > /tmp/commit-$$.sh <<'EOF'
msg=$1; date=$2; shift 2
args=(); for p in "$@"; do args+=(-p "$p"); done
c=$(GIT_COMMITTER_DATE="$date +0000" GIT_AUTHOR_DATE="$date +0000" git commit-tree HEAD^{tree} "${args[@]}" < "$msg")
git update-ref HEAD "$c"
echo "$c"
EOF
mv /tmp/commit-$$.sh .git/commit.sh`)
	commit := func(msg, date string, parents ...string) string {
		t.Helper()
		write(t, filepath.Join(dir, ".git", "msg"), msg)
		args := ""
		for _, p := range parents {
			args += " " + p
		}
		out := sh(t, dir, "bash .git/commit.sh .git/msg "+date+args)
		return out[:40]
	}
	root := sh(t, dir, "git rev-parse HEAD")[:40]
	a := commit("\n\n  a subject  \nits second line\t \n\nthe body\n", "1700000100", root)
	b := commit("", "1700000300", root)                       // an empty message, a later date
	c := commit("same second one\n", "1700000200", a)         // older than b
	d := commit("same second two\n", "1700000200", a)         // a tie with c
	m := commit("merge\r\n\r\nbody\n", "1700000400", c, b, d) // parents out of date order
	_ = commit("tip\n\nbody\n", "1700000500", m)
	// A header over several lines, as a signed commit has.
	tree := sh(t, dir, "git rev-parse HEAD^{tree}")[:40]
	head := sh(t, dir, "git rev-parse HEAD")[:40]
	signed := sh(t, dir, "printf 'tree "+tree+"\\nparent "+head+"\\nauthor p <p@e> 1700000600 +0000\\ncommitter p <p@e> 1700000600 +0000\\ngpgsig -----BEGIN-----\\n parent 0000000000000000000000000000000000000000\\n -----END-----\\n\\nsigned\\n' | git hash-object -t commit -w --stdin")[:40]
	sh(t, dir, "git update-ref HEAD "+signed)

	check := func(where string) {
		t.Helper()
		for n := 1; n <= 12; n++ {
			got, ok := nativeSubjects(gitDir, gitDir, n)
			if !ok {
				t.Fatalf("%s: -%d: read by git, want read here", where, n)
			}
			want := sh(t, dir, "git log --no-show-signature --format=%s -"+itoa(n))
			if string(got) != want {
				t.Fatalf("%s: -%d:\n got %q\nwant %q", where, n, got, want)
			}
		}
	}
	check("on main")
	sh(t, dir, "git checkout -q --detach HEAD~2")
	check("detached")
	sh(t, dir, "git checkout -q main")

	mustTell := func(why string) {
		t.Helper()
		if _, ok := nativeSubjects(gitDir, gitDir, 10); ok {
			t.Fatalf("with %s, the subjects were read here, want git to tell", why)
		}
	}
	write(t, filepath.Join(gitDir, "shallow"), root+"\n")
	mustTell("a shallow file")
	os.Remove(filepath.Join(gitDir, "shallow"))
	sh(t, dir, "git replace "+b+" "+a)
	mustTell("a replace ref")
	sh(t, dir, "git pack-refs --all")
	mustTell("a replace ref in packed-refs")
	sh(t, dir, "git replace -d "+b)
	check("the replace ref gone")
	latin := sh(t, dir, "printf 'tree "+tree+"\\nparent "+signed+"\\nauthor p <p@e> 1700000700 +0000\\ncommitter p <p@e> 1700000700 +0000\\nencoding ISO-8859-1\\n\\ncaf\\351\\n' | git hash-object -t commit -w --stdin")[:40]
	sh(t, dir, "git update-ref HEAD "+latin)
	mustTell("a commit in ISO-8859-1")
	sh(t, dir, "git update-ref HEAD "+signed+" && git repack -q -a -d && git prune-packed")
	mustTell("packed objects")

	unborn := repo(t)
	sh(t, unborn, "git checkout -q --orphan fresh")
	if got, ok := nativeSubjects(filepath.Join(unborn, ".git"), filepath.Join(unborn, ".git"), 10); !ok || len(got) != 0 {
		t.Fatalf("a branch without commits: %q %v, want no subjects, read here", got, ok)
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return string(rune('0'+n/10)) + string(rune('0'+n%10))
}
