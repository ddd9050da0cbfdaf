package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// newAddedDirs roots a Toolset in each directory the person added with
// --add-dir: the file tools reach it through that Toolset, confined to it
// exactly as the project's tools are to the project (symlinks, .git,
// .ralph). Only the person names them (the command line): nothing the
// model writes or a cloned repository holds can add one.
func newAddedDirs(o Options) ([]*Toolset, error) {
	var out []*Toolset
	for _, d := range o.AddDirs {
		lex, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("--add-dir %s: %w", d, err)
		}
		fi, err := os.Stat(lex)
		if err != nil {
			return nil, fmt.Errorf("--add-dir %s: %w", d, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("--add-dir %s is not a directory", d)
		}
		sub := o
		sub.Root, sub.AddDirs = lex, nil
		t, err := NewToolset(sub)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// addedFor is the added directory's Toolset a file tool's call belongs
// to: its path is absolute and inside that directory (and not inside the
// project, which its own tools serve). nil: the project's.
func (t *Toolset) addedFor(name string, args json.RawMessage) *Toolset {
	if len(t.added) == 0 || !Info(name).Paths {
		return nil
	}
	var a struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(args, &a) != nil || !filepath.IsAbs(a.Path) {
		return nil
	}
	p := filepath.Clean(a.Path)
	if t.ws.Holds(p) {
		return nil
	}
	for _, d := range t.added {
		if d.ws.Holds(p) {
			return d
		}
	}
	return nil
}

// AddedDirs are the directories added with --add-dir, symlinks resolved.
func (t *Toolset) AddedDirs() []string {
	out := make([]string, len(t.added))
	for i, d := range t.added {
		out[i] = d.Root()
	}
	return out
}
