package plugins

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// RecordFile is where the added plugins are recorded, in the person's
// config directory, beside ralph's config.toml.
func RecordFile(userConfigDir string) string {
	return filepath.Join(userConfigDir, "ralph", "plugins.json")
}

// Record is one added plugin as plugins.json keeps it.
type Record struct {
	Name string `json:"name"`
	// Dir is the plugin's directory, absolute, with its links resolved.
	Dir string `json:"dir"`
	// Fingerprint is the manifest's when it was added.
	Fingerprint string `json:"fingerprint"`
	// InProject says the directory lay inside the project it was added
	// from (Project): files the model could write. Only read, from
	// records older ralphs wrote; whose a plugin is is decided afresh
	// each time it is listed (Whose).
	InProject bool      `json:"in_project,omitempty"`
	Project   string    `json:"project,omitempty"`
	Added     time.Time `json:"added"`
	// Marketplace is the name of the marketplace the plugin was added
	// from (ralph plugin add NAME@MARKETPLACE), "" for one added by path.
	Marketplace string `json:"marketplace,omitempty"`
}

type recordFile struct {
	Plugins      []Record       `json:"plugins"`
	Marketplaces []MarketRecord `json:"marketplaces,omitempty"`
}

// More sentinel errors, for `ralph plugin` to answer with exit 2.
var (
	// ErrNotFound says no plugin of that name was added.
	ErrNotFound = errors.New("no plugin of that name")
	// ErrNameTaken says another directory was added under the same name.
	ErrNameTaken = errors.New("a plugin of that name is already added")
	// ErrNoConfigDir says there is no config directory to keep the record in.
	ErrNoConfigDir = errors.New("no user config directory to record plugins in")
	// ErrCorrupt says plugins.json could not be read as ralph writes it.
	ErrCorrupt = errors.New("the plugins record is corrupt")
)

var recordMu sync.Mutex

func readRecord(person afero.Fs, userConfigDir string) ([]Record, error) {
	r, err := readAll(person, userConfigDir)
	return r.Plugins, err
}

// readAll reads the whole record: the plugins and the marketplaces.
func readAll(person afero.Fs, userConfigDir string) (recordFile, error) {
	if userConfigDir == "" {
		return recordFile{}, ErrNoConfigDir
	}
	file := RecordFile(userConfigDir)
	data, err := afero.ReadFile(person, file)
	if errors.Is(err, fs.ErrNotExist) {
		return recordFile{}, nil
	}
	if err != nil {
		return recordFile{}, fmt.Errorf("reading %s: %w", file, err)
	}
	var r recordFile
	if err := json.Unmarshal(data, &r); err != nil {
		return recordFile{}, fmt.Errorf("%w: %s: %w", ErrCorrupt, file, err)
	}
	return r, nil
}

// writeRecord writes the plugins, keeping the marketplaces recorded.
func writeRecord(person afero.Fs, userConfigDir string, recs []Record) error {
	r, err := readAll(person, userConfigDir)
	if err != nil {
		return err
	}
	r.Plugins = recs
	return writeAll(person, userConfigDir, r)
}

// writeAll writes the whole record, atomically.
func writeAll(person afero.Fs, userConfigDir string, r recordFile) error {
	slices.SortFunc(r.Plugins, func(a, b Record) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(r.Marketplaces, func(a, b MarketRecord) int { return strings.Compare(a.Name, b.Name) })
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the plugins record: %w", err)
	}
	file := RecordFile(userConfigDir)
	if err := person.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(file), err)
	}
	return memory.WriteFileAtomic(person, file, append(data, '\n'), 0o600)
}

// Resolve turns the PATH a person gave into the plugin's directory:
// absolute (relative to cwd), with its links resolved. A missing path is
// an error wrapping fs.ErrNotExist.
func Resolve(path, cwd string) (string, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	dir, err := filepath.EvalSymlinks(filepath.Clean(path))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return dir, nil
}

// Within reports whether dir lies inside root (both absolute).
func Within(dir, root string) bool {
	if root == "" {
		return false
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	rel, err := filepath.Rel(root, dir)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// Add records the plugin in dir (absolute and resolved, as Resolve gives
// it). project is the root of the project ralph runs in ("" outside one).
// Whose the plugin is comes back in its Trust. Adding a directory again
// refreshes its record (a new manifest's fingerprint); a second directory
// under a name already added is ErrNameTaken.
func Add(person afero.Fs, userConfigDir, dir, project string, now time.Time) (Plugin, error) {
	return add(person, userConfigDir, dir, project, now, "", nil, "")
}

// add is Add for a plugin named name by a marketplace's entry (used when
// it has no manifest), recorded as coming from the marketplace mrec
// (nil: added by path); store is StoreDir.
func add(person afero.Fs, userConfigDir, dir, project string, now time.Time, name string, mrec *MarketRecord, store string) (Plugin, error) {
	market := ""
	if mrec != nil {
		market = mrec.Name
	}
	p, data, err := open(dir, name)
	if err != nil {
		return Plugin{}, err
	}
	recordMu.Lock()
	defer recordMu.Unlock()
	recs, err := readRecord(person, userConfigDir)
	if err != nil {
		return Plugin{}, err
	}
	rec := Record{Name: p.Name, Dir: dir, Fingerprint: Fingerprint(data), Added: now.UTC(), Marketplace: market}
	// The same directory, or the same plugin of the same marketplace
	// (whose entry may now name another directory), is recorded anew.
	recs = slices.DeleteFunc(recs, func(r Record) bool {
		return r.Dir == dir || market != "" && r.Marketplace == market && r.Name == p.Name
	})
	if i := slices.IndexFunc(recs, func(r Record) bool { return r.Name == p.Name }); i >= 0 {
		return Plugin{}, fmt.Errorf("%w: %s comes from %s; remove it first with ralph plugin remove %s", ErrNameTaken, p.Name, recs[i].Dir, p.Name)
	}
	if err := writeRecord(person, userConfigDir, append(recs, rec)); err != nil {
		return Plugin{}, err
	}
	p.Fingerprint = rec.Fingerprint
	var markets []MarketRecord
	if mrec != nil {
		markets = []MarketRecord{*mrec}
	}
	p.Trust = trustOf(rec, markets, project, store)
	return p, nil
}

// trustOf is whose the recorded plugin r is now (Whose), with markets
// the marketplaces recorded and project the current project's root.
func trustOf(r Record, markets []MarketRecord, project, store string) Trust {
	switch {
	case r.InProject:
		where := "inside the project " + r.Project
		return Trust{Where: where, Why: "it lies " + where + ", where the model can change its files"}
	case Within(r.Dir, project):
		return Trust{Where: "inside this project", Why: "it lies inside this project, where the model can change its files"}
	}
	if r.Marketplace != "" {
		if i := slices.IndexFunc(markets, func(m MarketRecord) bool { return m.Name == r.Marketplace }); i >= 0 {
			return Whose(r.Dir, &markets[i], store)
		}
	}
	return Whose(r.Dir, nil, store)
}

// Remove forgets the plugin named name and gives back its record; the
// directory itself is left as it is.
func Remove(person afero.Fs, userConfigDir, name string) (Record, error) {
	recordMu.Lock()
	defer recordMu.Unlock()
	recs, err := readRecord(person, userConfigDir)
	if err != nil {
		return Record{}, err
	}
	i := slices.IndexFunc(recs, func(r Record) bool { return r.Name == name })
	if i < 0 {
		return Record{}, fmt.Errorf("%w: %s (ralph plugin list shows the plugins added)", ErrNotFound, name)
	}
	rec := recs[i]
	if err := writeRecord(person, userConfigDir, slices.Delete(recs, i, i+1)); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// Records are the plugins recorded, by name, without reading them.
func Records(person afero.Fs, userConfigDir string) ([]Record, error) {
	recs, err := readRecord(person, userConfigDir)
	if errors.Is(err, ErrNoConfigDir) {
		return nil, nil
	}
	return recs, err
}

// List reads every recorded plugin as it lies on disk now, by name. A
// plugin that cannot be read is still listed, with the reason in its
// Problems and nothing it would bring; project is the current project's
// root. Whose each plugin is is decided now (trustOf), where it lies
// today. The error is for a record that cannot be read at all.
func List(person afero.Fs, userConfigDir, project string) ([]Plugin, error) {
	all, err := readAll(person, userConfigDir)
	if errors.Is(err, ErrNoConfigDir) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	recs, store := all.Plugins, StoreDir(os.Getenv)
	out := make([]Plugin, 0, len(recs))
	for _, r := range recs {
		p, data, err := open(r.Dir, r.Name)
		p.Fingerprint = r.Fingerprint
		p.Trust = trustOf(r, all.Marketplaces, project, store)
		switch {
		case err != nil:
			p.Name, p.fsys = r.Name, nil
			p.Problems = append(p.Problems, "it is left out: "+problem(err))
		case p.Name != r.Name:
			p.Problems = append(p.Problems, fmt.Sprintf("it is left out: its manifest now names it %q; add it again with ralph plugin add %s", p.Name, r.Dir))
			p.Name, p.fsys = r.Name, nil
		case Fingerprint(data) != r.Fingerprint:
			p.Changed = true
		}
		out = append(out, p)
	}
	return out, nil
}

// problem is err as the end of a sentence.
func problem(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrNotPlugin):
		return "its directory is gone"
	case errors.Is(err, ErrLinkOut):
		return err.Error() + ", which ralph does not follow"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	return err.Error()
}

// Sentence says err (from Resolve or Add) in one sentence for the person,
// without Go's wrapping: what is wrong with the path and what to do.
func Sentence(path string, err error) string {
	switch {
	case errors.Is(err, ErrLinkOut):
		return fmt.Sprintf("%s is refused: %v, which ralph does not follow", path, err)
	case errors.Is(err, ErrNotPlugin):
		return fmt.Sprintf("%s is no Claude Code plugin: it holds no %s and none of commands/, agents/, skills/, hooks/hooks.json", path, ManifestPath)
	case errors.Is(err, fs.ErrNotExist) && LooksLikeName(path):
		return fmt.Sprintf("%s is not a directory here; add a plugin by its directory, or as NAME@MARKETPLACE from a marketplace added with ralph plugin marketplace add", path)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%s does not exist; ralph plugin add takes the path of a plugin's directory", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("%s cannot be read: permission denied", path)
	}
	return err.Error()
}

// LooksLikeName reports whether what the person gave looks like a plugin's
// name (or NAME@MARKETPLACE) rather than a path.
func LooksLikeName(s string) bool {
	return !strings.ContainsAny(s, `/\`) && !strings.HasPrefix(s, ".") && !strings.HasPrefix(s, "~")
}
