package childenv

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tool writes an executable script name in dir.
func tool(t *testing.T, dir, name string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProgramSkipsTheProjectAndRelativeEntries: with an activated
// virtualenv's .venv/bin first on PATH, and a relative entry before it,
// the program found is the person's, outside the project; it is found
// once, so one planted later earlier on PATH is not taken.
func TestProgramSkipsTheProjectAndRelativeEntries(t *testing.T) {
	proj, person, later := t.TempDir(), t.TempDir(), t.TempDir()
	tool(t, filepath.Join(proj, ".venv", "bin"), "t4tool")
	want := tool(t, person, "t4tool")
	AddRoots(proj)
	// A relative entry, resolved against the working directory.
	t.Chdir(proj)
	tool(t, filepath.Join(proj, "rel"), "t4tool")
	t.Setenv("PATH", strings.Join([]string{"rel", filepath.Join(proj, ".venv", "bin"), later, person}, string(os.PathListSeparator)))
	got, err := Program("t4tool")
	if err != nil || got != want {
		t.Fatalf("Program = %q, %v; want %q", got, err, want)
	}
	tool(t, later, "t4tool")
	if again, _ := Program("t4tool"); again != want {
		t.Errorf("a program planted on PATH after the first look was taken: %q", again)
	}
	if got, _ := LookPathIn("t4tool", os.Getenv("PATH")); got != filepath.Join(later, "t4tool") {
		t.Errorf("LookPathIn = %q, want the first outside the project, %q", got, filepath.Join(later, "t4tool"))
	}
}

// TestProgramOnlyInTheProject: a name found on PATH only inside a root,
// as written or through a link, is ErrInProject, naming where; one found
// nowhere is exec.ErrNotFound.
func TestProgramOnlyInTheProject(t *testing.T) {
	proj, link := t.TempDir(), filepath.Join(t.TempDir(), "bin")
	planted := tool(t, filepath.Join(proj, "node_modules", ".bin"), "t4only")
	if err := os.Symlink(filepath.Join(proj, "node_modules", ".bin"), link); err != nil {
		t.Fatal(err)
	}
	AddRoots(proj)
	t.Setenv("PATH", link+string(os.PathListSeparator)+filepath.Join(proj, "node_modules", ".bin"))
	_, err := Program("t4only")
	var ip *InProjectError
	if !errors.Is(err, ErrInProject) || !errors.As(err, &ip) || ip.Path != filepath.Join(link, "t4only") && ip.Path != planted {
		t.Fatalf("Program = %v, want ErrInProject naming the planted file", err)
	}
	if _, err := Program("t4-no-such-program"); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("a missing program: %v, want exec.ErrNotFound", err)
	}
	if got, err := Program("/bin/sh"); got != "/bin/sh" || err != nil {
		t.Errorf("a path is the person's choice and stays: %q, %v", got, err)
	}
}

// TestAddRootsResolvesAgain: a program resolved before its directory was
// known to be the project's (ralph asks for git while it finds the
// project) is resolved again once it is.
func TestAddRootsResolvesAgain(t *testing.T) {
	proj, person := t.TempDir(), t.TempDir()
	tool(t, filepath.Join(proj, "bin"), "t4again")
	want := tool(t, person, "t4again")
	t.Setenv("PATH", filepath.Join(proj, "bin")+string(os.PathListSeparator)+person)
	if got, _ := Program("t4again"); got != filepath.Join(proj, "bin", "t4again") {
		t.Fatalf("before the project is known: %q", got)
	}
	AddRoots(proj)
	if got, _ := Program("t4again"); got != want {
		t.Errorf("after AddRoots: %q, want %q", got, want)
	}
	if !slices.Contains(Roots(), proj) {
		t.Errorf("Roots %q lacks %s", Roots(), proj)
	}
}

// TestPersonEnvDropsTheProjectsLibraries: the dynamic loader's search
// paths and preloads lose their entries inside the project, relative
// ones too, for every root AddRoots recorded and the one given.
func TestPersonEnvDropsTheProjectsLibraries(t *testing.T) {
	proj, given := t.TempDir(), t.TempDir()
	AddRoots(proj)
	sep := string(os.PathListSeparator)
	env := []string{
		"LD_LIBRARY_PATH=" + filepath.Join(proj, "lib") + sep + "/usr/lib" + sep + "lib",
		"LD_PRELOAD=" + filepath.Join(proj, "evil.so") + " /usr/lib/libok.so:" + filepath.Join(given, "x.so"),
		"DYLD_INSERT_LIBRARIES=" + filepath.Join(proj, "evil.dylib"),
		"DYLD_LIBRARY_PATH=/opt/lib" + sep + filepath.Join(proj, "lib"),
		"PATH=" + filepath.Join(given, "bin") + sep + filepath.Join(proj, ".venv", "bin") + sep + "/usr/bin",
	}
	got := PersonEnv(env, given)
	want := []string{
		"LD_LIBRARY_PATH=/usr/lib",
		"LD_PRELOAD=/usr/lib/libok.so",
		"DYLD_INSERT_LIBRARIES=",
		"DYLD_LIBRARY_PATH=/opt/lib",
		"PATH=/usr/bin",
		"PYTHONSAFEPATH=1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("PersonEnv:\n got %q\nwant %q", got, want)
	}
}

// TestWritableDirsAreRoots: a sandbox_writable entry (~/.cargo, whose
// bin/ is first on PATH) is a root like the project, so the git the model
// wrote there is not the one ralph runs; and the shared temporary
// directories /dev/shm and /var/tmp are roots from the start, so a
// PYTHONPATH or PATH entry there leaves the person's environment.
func TestWritableDirsAreRoots(t *testing.T) {
	cargo, person := filepath.Join(t.TempDir(), ".cargo"), t.TempDir()
	tool(t, filepath.Join(cargo, "bin"), "t4cargo")
	want := tool(t, person, "t4cargo")
	AddRoots(cargo) // what NewWorkspace does with Options.Writable
	sep := string(os.PathListSeparator)
	t.Setenv("PATH", filepath.Join(cargo, "bin")+sep+person)
	if got, err := Program("t4cargo"); got != want || err != nil {
		t.Fatalf("Program = %q, %v; want the person's %q", got, err, want)
	}
	for _, shared := range []string{"/dev/shm", "/var/tmp"} {
		if _, err := os.Stat(shared); err != nil {
			continue
		}
		env := PersonEnv([]string{"PYTHONPATH=" + filepath.Join(shared, "py") + sep + "/usr/lib/py", "PATH=" + filepath.Join(shared, "bin") + sep + "/usr/bin"})
		if !slices.Contains(env, "PYTHONPATH=/usr/lib/py") || !slices.Contains(env, "PATH=/usr/bin") {
			t.Errorf("an entry under %s stayed: %q", shared, env)
		}
	}
}
