package gitcreds

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// TestFilesFollowsIncludesInTheProject: a credential in a file the
// repository's configuration includes (include.path, includeIf.*.path,
// relative to the including file, recursively) is listed, masked and
// redacted like .git/config's; an included file outside the project is
// not reached through the project's door.
func TestFilesFollowsIncludesInTheProject(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside.conf")
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n\tbare = false\n[include]\n\tpath = ../ci-creds.conf\n\tpath = creds.inc ; a comment\n"+
		"[includeIf \"gitdir:"+root+"/\"]\n\tpath = \"extra.conf\"\n[include]\n\tpath = "+outside+"\n"), 0o644)
	os.WriteFile(filepath.Join(root, "ci-creds.conf"), []byte("[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: bearer ghs_includedtoken1234567890\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".git", "creds.inc"), []byte("[include]\n\tpath = deeper.inc\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".git", "deeper.inc"), []byte("[remote \"d\"]\n\turl = https://carol:deeppass3@host/x.git\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".git", "extra.conf"), []byte("[remote \"b\"]\n\turl = https://bob:pw2secret@host/x.git\n"), 0o644)
	os.WriteFile(outside, []byte("[remote \"o\"]\n\turl = https://eve:outsidepass@host/x.git\n"), 0o644)
	door, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	files := Files(door, filepath.Join(root, ".git"), filepath.Join(root, ".git"))
	for _, f := range []string{"ci-creds.conf", ".git/creds.inc", ".git/deeper.inc", ".git/extra.conf"} {
		if !slices.Contains(files, filepath.Join(root, f)) {
			t.Errorf("Files misses the included %s: %q", f, files)
		}
	}
	if slices.Contains(files, outside) {
		t.Errorf("Files reached an include outside the project: %q", files)
	}
	got := Secrets(door, root)
	for _, s := range []string{"ghs_includedtoken1234567890", "deeppass3", "pw2secret"} {
		if !slices.Contains(got, s) {
			t.Errorf("Secrets misses the included %q: %q", s, got)
		}
	}
	// An include that includes itself ends.
	os.WriteFile(filepath.Join(root, ".git", "deeper.inc"), []byte("[include]\n\tpath = deeper.inc\n"), 0o644)
	_ = Files(door, filepath.Join(root, ".git"), filepath.Join(root, ".git"))
}
