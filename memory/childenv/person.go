package childenv

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// pathLists are the variables that list directories (separated by
// os.PathListSeparator) where a program or a launcher finds code to run:
// the programs a shell runs, node's and Python's modules, the dynamic
// loader's libraries. DYLD_* (macOS's loader) go by prefix.
var pathLists = []string{"PATH", "NODE_PATH", "PYTHONPATH", "LD_LIBRARY_PATH", "LD_AUDIT"}

// PersonEnv is env for a program ralph starts for the person (git, an
// agent's CLI, a hook let out of the sandbox, notify_command, an MCP
// server of their own), made safe to run beside a project the model
// writes: the search paths above lose their entries inside the roots
// (AddRoots, and extra), and relative ones, which resolve against
// whatever directory the program runs in (direnv adds the project's bin/
// and node_modules/.bin, an activated virtualenv its .venv/bin, a build
// its LD_LIBRARY_PATH); LD_PRELOAD loses the libraries it names there;
// NODE_OPTIONS loses the options that name a file there (--require
// ./x.js); and PYTHONSAFEPATH=1 keeps Python 3.11 and later from putting
// the working directory or the script's directory first on sys.path.
func PersonEnv(env []string, extra ...string) []string {
	withShared()
	rootsMu.RLock()
	all, gen := append(slices.Clone(roots), extra...), rootsGen
	rootsMu.RUnlock()
	memo := -1 // the entries taken off for extra roots are not remembered
	if len(extra) == 0 {
		memo = gen
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok:
		case k == "PYTHONSAFEPATH":
			continue
		case slices.Contains(pathLists, k) || strings.HasPrefix(k, "DYLD_"):
			kv = k + "=" + cleanList(k, v, string(os.PathListSeparator), all, memo)
		case k == "LD_PRELOAD":
			// ld.so splits LD_PRELOAD at spaces and colons alike.
			kv = k + "=" + cleanList(k, strings.ReplaceAll(v, ":", " "), " ", all, memo)
		case k == "NODE_OPTIONS":
			kv = k + "=" + nodeOptionsWithout(v, all)
		}
		out = append(out, kv)
	}
	return append(out, "PYTHONSAFEPATH=1")
}

// cleaning lets one caller at a time resolve a search path's entries
// for the cache (cleaned).
var cleaning sync.Mutex

// cleanList is the list v (separated by sep) without its empty, relative
// and in-root entries, remembered for the registered roots of generation
// memo (-1: not remembered): every git ralph starts asks again for the
// same PATH.
func cleanList(k, v, sep string, roots []string, memo int) string {
	key := k + "=" + v
	if memo >= 0 {
		rootsMu.RLock()
		c, ok := cleaned[key]
		rootsMu.RUnlock()
		if ok {
			return c
		}
		// The first gits of a process start side by side (a one-shot's
		// status, log and configuration listing) and all ask for the
		// same PATH: one resolves it, the others wait and take its
		// answer.
		cleaning.Lock()
		defer cleaning.Unlock()
		rootsMu.RLock()
		c, ok = cleaned[key]
		rootsMu.RUnlock()
		if ok {
			return c
		}
	}
	var keep []string
	forms := formsOf(roots)
	for _, e := range strings.Split(v, sep) {
		if e = strings.TrimSpace(e); e != "" && filepath.IsAbs(e) && !forms.hold(e) {
			keep = append(keep, e)
		}
	}
	c := strings.Join(keep, sep)
	if memo >= 0 {
		rootsMu.Lock()
		if len(cleaned) > 256 {
			clear(cleaned)
		}
		if memo == rootsGen {
			cleaned[key] = c
		}
		rootsMu.Unlock()
	}
	return c
}

// nodeOptionsWithout drops the options of NODE_OPTIONS that name a path
// inside roots (or a relative one), with the flag before a separate value.
func nodeOptionsWithout(v string, roots []string) string {
	fields := strings.Fields(v)
	forms := formsOf(roots)
	var keep []string
	for i, f := range fields {
		val := f
		if _, after, ok := strings.Cut(f, "="); ok && strings.HasPrefix(f, "-") {
			val = after
		}
		if strings.HasPrefix(val, "-") || !looksLikePath(val) || (filepath.IsAbs(val) && !forms.hold(val)) {
			keep = append(keep, f)
			continue
		}
		// A separate value: its flag goes with it.
		if val == f && i > 0 && len(keep) > 0 && keep[len(keep)-1] == fields[i-1] && strings.HasPrefix(fields[i-1], "-") && !strings.Contains(fields[i-1], "=") {
			keep = keep[:len(keep)-1]
		}
	}
	return strings.Join(keep, " ")
}

// looksLikePath reports whether an option's value could name a file: a
// module name such as "ts-node/register" is resolved from the working
// directory's node_modules as well, so anything that is not a number
// counts.
func looksLikePath(v string) bool {
	if v == "" {
		return false
	}
	for _, r := range v {
		if (r < '0' || r > '9') && r != '.' {
			return true
		}
	}
	return false
}
