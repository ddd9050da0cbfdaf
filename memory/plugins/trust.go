package plugins

import (
	"os"
	"path/filepath"

	"github.com/ralph-dev/ralph/memory"
)

// Whose is the one decision of whether a plugin's files are the
// person's or the model's: hooks' approval (coordinator/project),
// allowed-tools' pre-approval (scripts/slash), `ralph plugin list` and
// `ralph doctor`, and whether a marketplace may make ralph clone all ask
// it, through Plugin.Trust and MarketTrust.
//
// A plugin is the person's only when both hold:
//
//   - its directory lies where the model cannot write: outside every
//     project (the nearest directory at or above it holding .git or
//     .ralph/, whatever the working directory was when it was added) and
//     outside the directories every sandboxed command may write ($TMPDIR,
//     /dev/shm, /var/tmp: ModelMayWrite, the sandbox's own check);
//   - its source was chosen by the person: added by its path, or from a
//     marketplace that is itself the person's (a directory the person
//     named that passes the first rule, or a repository the person had
//     ralph clone into its store).
//
// It is judged again each time plugins are listed, as a project can
// appear around a directory after it was added.

// Trust is whose a plugin's or a marketplace's files are.
type Trust struct {
	// Persons says the person chose them and the model cannot change
	// them: a plugin's hooks run without approval and its commands'
	// allowed-tools pre-approve.
	Persons bool
	// Where, when they are the model's, says where they lie ("inside the
	// project /p", "in a temporary directory"), for sentences.
	Where string
	// Why, when they are the model's, is the reason as a clause: "it
	// lies inside the project /p, where the model can change its files".
	Why string
}

// Persons' is the person's Trust.
var persons = Trust{Persons: true}

// ModelMayWrite reports whether a path lies where the model's commands
// may write in any project. workers/agents sets it to the sandbox's own
// check (sandbox.ModelMayWrite, which the hooks use); memory stands below
// the sandbox and cannot ask it. Until it is set every usual temporary
// directory counts.
var ModelMayWrite func(path string) bool

func modelMayWrite(dir string) bool {
	if ModelMayWrite != nil {
		return ModelMayWrite(dir)
	}
	for _, t := range []string{os.TempDir(), "/tmp", "/var/tmp", "/dev/shm"} {
		if Within(dir, t) {
			return true
		}
	}
	return false
}

// EnclosingProject is the project dir lies in: the nearest directory at
// or above dir holding .git or .ralph/, short of the home directory and
// the file system's root (which ralph never takes for a project without
// being told); "" when there is none. The walk is the plugin's own, not
// the working directory's: a plugin inside project A is A's wherever it
// was added from.
func EnclosingProject(dir, home string) string {
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	for d := filepath.Clean(dir); ; {
		if home != "" && d == filepath.Clean(home) {
			return ""
		}
		if fi, err := os.Stat(filepath.Join(d, memory.StateDir)); err == nil && fi.IsDir() {
			return d
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// Place is whose a directory is by where it lies alone (the first rule
// of Whose): the model's in a directory every command may write, or in a
// project.
func Place(dir string) Trust {
	// The project first: ModelMayWrite also holds the current project,
	// which is better named as such.
	home, _ := os.UserHomeDir()
	if root := EnclosingProject(dir, home); root != "" {
		where := "inside the project " + root
		return Trust{Where: where, Why: "it lies " + where + ", where the model can change its files"}
	}
	if modelMayWrite(dir) {
		return Trust{Where: "in a temporary directory", Why: "it lies in a temporary directory, where the model's commands can change its files"}
	}
	return persons
}

// MarketTrust is whose a marketplace is: the person's when ralph cloned
// it into its store (store, StoreDir) from the URL or owner/repo the
// person gave, or when its directory is the person's by Place. Only a
// marketplace of the person's may make ralph clone a plugin.
func MarketTrust(m MarketRecord, store string) Trust {
	if m.URL != "" && store != "" && Within(m.Dir, store) {
		if modelMayWrite(m.Dir) {
			return Place(m.Dir)
		}
		return persons
	}
	return Place(m.Dir)
}

// Whose decides whether the plugin in dir is the person's (see above).
// market is the record of the marketplace it was added from, nil for a
// plugin added by its path; store is ralph's plugin store (StoreDir).
func Whose(dir string, market *MarketRecord, store string) Trust {
	if market == nil {
		return Place(dir)
	}
	if mt := MarketTrust(*market, store); !mt.Persons {
		return Trust{Where: mt.Where, Why: "it comes from the marketplace " + market.Name + ", which lies " + mt.Where + ", where the model can change what it lists"}
	}
	// What ralph cloned for the person's marketplace (the marketplace
	// itself, or a plugin it names) lies in the store as a git work tree
	// of its own: not a project.
	if store != "" && Within(dir, store) && !modelMayWrite(dir) {
		return persons
	}
	return Place(dir)
}
