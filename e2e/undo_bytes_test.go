package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUndoKeepsBytesGitWouldConvert: in a repository whose attributes
// convert line endings, undo puts back the bytes that were on disk, not
// what git would write from its normalised copy. Each case is a file git
// stores otherwise than it lies on disk:
//   - a CRLF file committed under `* text=auto` (git stores LF; the work
//     tree is clean, so the session takes HEAD for its baseline),
//   - an untracked CRLF file (the baseline is recorded, not HEAD),
//   - a file with mixed line endings under `eol=crlf` (git's checkout
//     would turn every lone LF into CRLF),
//   - a CRLF file the model wrote in one request and changed in the next.
func TestUndoKeepsBytesGitWouldConvert(t *testing.T) {
	t.Parallel()
	const crlf = "one\r\ntwo\r\nthree\r\n"
	const mixed = "unix\nwindows\r\nunix again\n"
	project := func(t *testing.T, setup string) (string, []string) {
		dir, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		shIn(t, dir, `git init -q -b main && printf '* text=auto\n*.crlf eol=crlf\n' > .gitattributes && printf 'x\n' > keep.txt &&
			git add . && git commit -qm base && `+setup)
		return dir, cleanEnv(t)
	}
	change := func(t *testing.T, dir string, env []string, path, content string) {
		t.Helper()
		srv := inlineServer(t, toolScenario(t, "change "+path, [][]toolCall{
			{{"write_file", `{"path":"` + path + `","content":` + jsonString(content) + `}`}},
		}, "done"))
		if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "change "+path); r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
	}
	undo := func(t *testing.T, dir string, env []string, path, want string) {
		t.Helper()
		if r := ralph(t, dir, env, nil, "undo"); r.code != 0 {
			t.Fatalf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if got := readFileT(t, filepath.Join(dir, path)); got != want {
			t.Fatalf("undo put back %q, want %q", got, want)
		}
	}
	t.Run("committed CRLF on a clean tree", func(t *testing.T) {
		dir, env := project(t, `printf 'one\r\ntwo\r\nthree\r\n' > win.txt && git add win.txt 2>/dev/null && git commit -qm win`)
		if out := shIn(t, dir, "git status --porcelain"); out != "" {
			t.Fatalf("the tree should be clean: %s", out)
		}
		change(t, dir, env, "win.txt", "replaced\n")
		undo(t, dir, env, "win.txt", crlf)
	})
	t.Run("untracked CRLF", func(t *testing.T) {
		dir, env := project(t, `printf 'one\r\ntwo\r\nthree\r\n' > new.txt`)
		change(t, dir, env, "new.txt", "replaced\n")
		undo(t, dir, env, "new.txt", crlf)
	})
	t.Run("mixed endings under eol=crlf", func(t *testing.T) {
		dir, env := project(t, `printf 'unix\nwindows\r\nunix again\n' > m.crlf`)
		change(t, dir, env, "m.crlf", "replaced\r\n")
		undo(t, dir, env, "m.crlf", mixed)
	})
	t.Run("written by the model, changed by the next request", func(t *testing.T) {
		dir, env := project(t, `true`)
		change(t, dir, env, "made.txt", crlf)
		change(t, dir, env, "made.txt", "second\n")
		undo(t, dir, env, "made.txt", crlf)
		// The raw copy is kept from git's garbage collection by a ref
		// beside the checkpoint's, and ralph's own refs alone hold it.
		refs := shIn(t, dir, "git for-each-ref --format='%(refname) %(objecttype)' refs/ralph/")
		if !strings.Contains(refs, ".raw tree") {
			t.Fatalf("no ref keeps the raw tree:\n%s", refs)
		}
	})
	t.Run("core.autocrlf without attributes", func(t *testing.T) {
		dir := gitProjectDir(t)
		env := cleanEnv(t)
		shIn(t, dir, `git config core.autocrlf input && printf 'one\r\ntwo\r\nthree\r\n' > new.txt`)
		change(t, dir, env, "new.txt", "replaced\n")
		undo(t, dir, env, "new.txt", crlf)
	})
	t.Run("nothing to keep without attributes", func(t *testing.T) {
		dir := gitProjectDir(t)
		env := cleanEnv(t)
		if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b1\r\nb2\r\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		change(t, dir, env, "b.txt", "replaced\n")
		undo(t, dir, env, "b.txt", "b1\r\nb2\r\n")
		if refs := shIn(t, dir, "git for-each-ref refs/ralph/"); strings.Contains(refs, ".raw") {
			t.Fatalf("a raw tree was kept where git converts nothing:\n%s", refs)
		}
	})
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestUndoPutsBackFilesGitsFiltersConvert: undo of files under a filter
// driver, with the real git-lfs and git-crypt: git-lfs puts a file in
// place of the pointer git stores, git-crypt decrypts what git stores,
// so neither file has the size git's batch of objects announces for it.
// undo once cut the LFS file to its pointer's size and failed after ten
// seconds, and refused the git-crypt file; both are put back whole, by
// git restore, beside a plain file put back the usual way.
func TestUndoPutsBackFilesGitsFiltersConvert(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, setup string }{
		{"git-lfs", `git lfs install --local >/dev/null && git lfs track '*.bin' >/dev/null`},
		{"git-lfs with its own storage", `git lfs install --local >/dev/null && git config lfs.storage lfs-elsewhere && git lfs track '*.bin' >/dev/null`},
		{"git-crypt", `git-crypt init >/dev/null 2>&1 && printf '*.bin filter=git-crypt diff=git-crypt\n' > .gitattributes`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tool, _, _ := strings.Cut(c.name, " ")
			needTool(t, tool, tool)
			dir, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			env := cleanEnv(t)
			shIn(t, dir, `git init -q -b main && `+c.setup+` && head -c 300000 /dev/urandom > big.bin && printf 'a\n' > a.txt &&
				git add . && git commit -qm filtered`)
			want := readFileT(t, filepath.Join(dir, "big.bin"))
			if stored := shIn(t, dir, "git cat-file -s HEAD:big.bin"); strings.TrimSpace(stored) == "300000" {
				t.Fatalf("git stores big.bin as it is: the filter did not run")
			}
			srv := inlineServer(t, commandScenario(t, [][]string{{"printf 'model\\n' > big.bin && printf 'changed\\n' > a.txt"}}, "done"))
			if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "change them"); r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			u := ralph(t, dir, env, nil, "undo")
			if u.code != 0 || !strings.Contains(u.stdout, "put back a.txt, big.bin") {
				t.Fatalf("undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
			}
			if got := readFileT(t, filepath.Join(dir, "big.bin")); got != want {
				t.Fatalf("big.bin put back as %d bytes, want the %d it had", len(got), len(want))
			}
			if got := readFileT(t, filepath.Join(dir, "a.txt")); got != "a\n" {
				t.Fatalf("a.txt: %q", got)
			}
			if st := shIn(t, dir, "git status --porcelain"); st != "" {
				t.Fatalf("after the undo git sees changes:\n%s", st)
			}
		})
	}
}

// TestUndoRefusesAChangedLFSObject: git-lfs copies a file's content from
// .git/lfs/objects into the work tree without checking it against the
// pointer git stores, and a model's command may write there. An object
// swapped for the model's bytes of the same size, or deleted (the only
// copy of your uncommitted change to the file), fails the undo before
// it writes anything: the file keeps what the undo found, and is
// neither the model's bytes nor gone.
func TestUndoRefusesAChangedLFSObject(t *testing.T) {
	t.Parallel()
	needTool(t, "git-lfs", "git-lfs")
	for _, c := range []struct{ name, attack string }{
		{"swapped", `rm -f "$O" && printf 'EVIL-CONTENT-AAAAAAAAAAAAAA\n' > "$O"`},
		{"deleted", `rm -rf .git/lfs/objects`},
		{"linked", `mv .git/lfs "$OUT/lfs" && ln -s "$OUT/lfs" .git/lfs`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			env := cleanEnv(t)
			shIn(t, dir, `git init -q -b main && git lfs install --local >/dev/null && git lfs track '*.bin' >/dev/null &&
				printf 'ORIGINAL-CONTENT-1234567890\n' > big.bin && git add . && git commit -qm lfs`)
			oid := strings.TrimSpace(shIn(t, dir, `git cat-file -p HEAD:big.bin | sed -n 's/^oid sha256://p'`))
			object := ".git/lfs/objects/" + oid[:2] + "/" + oid[2:4] + "/" + oid
			command := `printf 'MODEL-CHANGE\n' > big.bin && O=` + object + ` OUT=` + out + ` && ` + c.attack
			srv := inlineServer(t, commandScenario(t, [][]string{{command}}, "done"))
			if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "change it"); r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			u := ralph(t, dir, env, nil, "undo")
			if u.code == 0 || !strings.Contains(u.stderr, "big.bin (Git LFS object "+oid+")") {
				t.Fatalf("undo: exit %d, want a refusal naming big.bin's LFS object\n%s\n%s", u.code, u.stdout, u.stderr)
			}
			if got := readFileT(t, filepath.Join(dir, "big.bin")); got != "MODEL-CHANGE\n" {
				t.Fatalf("the refused undo wrote big.bin: %q", got)
			}
			if c.name == "linked" {
				// The checkpoint's git-lfs wrote the model's file into
				// the linked directory outside; the link is set aside
				// before it runs, and only the person's object is there.
				if got := shIn(t, out, "find lfs -type f"); got != "lfs/"+object[len(".git/lfs/"):]+"\n" {
					t.Fatalf("ralph's git wrote through the link:\n%s", got)
				}
				if _, err := os.Lstat(filepath.Join(dir, ".git", "lfs.ralph-untrusted")); err != nil {
					t.Fatalf("the link was not set aside: %v", err)
				}
			}
		})
	}
}
