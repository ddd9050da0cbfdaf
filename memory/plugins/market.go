package plugins

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// A Claude Code marketplace is a directory (usually a git repository)
// holding .claude-plugin/marketplace.json: its name, and the plugins it
// lists, each with a source that says where the plugin's directory lies.
// `ralph plugin marketplace add` records one: a directory the person has
// is read where it lies; a git URL or a GitHub owner/repo is cloned with
// the person's git (memory/git.Clone: no hook, no submodule) into ralph's
// plugin store, outside every project. `ralph plugin add NAME@MARKETPLACE`
// then adds the listed plugin's directory as `ralph plugin add PATH` adds
// one, read through its own door.

// Sentinel errors of the marketplaces, for the CLI's exit 2.
var (
	// ErrNoMarket says no marketplace of that name was added.
	ErrNoMarket = errors.New("no marketplace of that name")
	// ErrNotMarket says a directory holds no marketplace.json.
	ErrNotMarket = errors.New("no Claude Code marketplace")
	// ErrUnsupported says a source form ralph does not read.
	ErrUnsupported = errors.New("not supported")
	// ErrNoEntry says the marketplace lists no plugin of that name.
	ErrNoEntry = errors.New("no such plugin in the marketplace")
	// ErrClone says git could not clone a marketplace or a plugin.
	ErrClone = errors.New("git clone failed")
)

// MarketRecord is one added marketplace as plugins.json keeps it.
type MarketRecord struct {
	Name string `json:"name"`
	// Source is what the person gave (a path, owner/repo, a git URL).
	Source string `json:"source"`
	// URL is the git URL cloned; "" for a directory read in place.
	URL string `json:"url,omitempty"`
	// Dir is the marketplace's root: the directory holding
	// .claude-plugin/marketplace.json.
	Dir   string    `json:"dir"`
	Added time.Time `json:"added"`
}

// Market is a marketplace.json, as far as ralph reads it.
type Market struct {
	Name     string `json:"name"`
	Metadata struct {
		Description string `json:"description,omitempty"`
		Version     string `json:"version,omitempty"`
		// PluginRoot is prepended to relative plugin sources.
		PluginRoot string `json:"pluginRoot,omitempty"`
	} `json:"metadata"`
	Plugins []Entry `json:"plugins"`
}

// Entry is one plugin a marketplace lists.
type Entry struct {
	Name        string          `json:"name"`
	Source      json.RawMessage `json:"source"`
	Description string          `json:"description,omitempty"`
	Version     string          `json:"version,omitempty"`
}

// MarketFile is where a marketplace's file lies, relative to its root:
// beside the plugin manifest, as Claude Code keeps them.
func MarketFile() string {
	return filepath.Join(filepath.Dir(ManifestPath), "marketplace.json")
}

// StoreDir is ralph's plugin store, where cloned marketplaces and plugins
// lie: $XDG_DATA_HOME/ralph/plugins, else ~/.local/share/ralph/plugins.
// Not the config or state directory: the sandbox hides those from
// commands, and a plugin's hooks and skills run scripts of its own
// directory in the sandbox. Commands cannot write here (the home is
// read-only to them), so a cloned plugin stays the person's.
func StoreDir(getenv func(string) string) string {
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "ralph", "plugins")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "share", "ralph", "plugins")
}

var (
	ownerRepo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$`) })
	scpLike   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+:`) })
)

// gitURL reports whether s is a URL git clones (a scheme it knows, or
// the scp-like user@host:path).
func gitURL(s string) bool {
	for _, scheme := range []string{"https://", "http://", "ssh://", "git://", "file://"} {
		if strings.HasPrefix(s, scheme) {
			return true
		}
	}
	return scpLike().MatchString(s)
}

// githubURL is the clone URL of a GitHub owner/repo.
func githubURL(repo string) string {
	return "https://github.com/" + strings.TrimSuffix(repo, ".git") + ".git"
}

// readMarket reads root's marketplace.json through a door on root.
func readMarket(root string) (Market, error) {
	d, err := rootfs.New(root)
	if err != nil {
		return Market{}, fmt.Errorf("%s: %w", root, err)
	}
	defer d.Close()
	file := filepath.Join(root, MarketFile())
	data, err := rootfs.ReadSmall(d, file, ManifestLimit)
	switch {
	case errors.Is(err, rootfs.ErrLinkOut), errors.Is(err, rootfs.ErrOutsideRoot):
		return Market{}, fmt.Errorf("%w: %s", ErrLinkOut, file)
	case errors.Is(err, fs.ErrNotExist):
		return Market{}, fmt.Errorf("%w: %s holds no %s", ErrNotMarket, root, MarketFile())
	case err != nil:
		return Market{}, fmt.Errorf("%s: %w", file, err)
	}
	var m Market
	if err := json.Unmarshal(data, &m); err != nil {
		return Market{}, fmt.Errorf("%w: %s is not a marketplace.json: %w", ErrNotMarket, file, err)
	}
	if !validName().MatchString(m.Name) {
		return Market{}, fmt.Errorf("%w: %s: the name %q is not one ralph takes (letters, digits, '.', '-', '_', at most 64)", ErrNotMarket, file, m.Name)
	}
	return m, nil
}

// Markets are the marketplaces added.
func Markets(person afero.Fs, userConfigDir string) ([]MarketRecord, error) {
	r, err := readAll(person, userConfigDir)
	if errors.Is(err, ErrNoConfigDir) {
		return nil, nil
	}
	return r.Marketplaces, err
}

// MarketAdder adds and updates marketplaces and the plugins they list.
type MarketAdder struct {
	Person        afero.Fs
	UserConfigDir string
	// Store is StoreDir: where clones go.
	Store string
	// Project is the current project's root ("" outside one).
	Project string
	Now     func() time.Time
}

// AddMarket records the marketplace that arg names (resolved against cwd
// when it is a path): a directory, or a marketplace.json in one, read in
// place; a git URL or GitHub owner/repo, cloned into the store. Adding
// the same source again refreshes it.
func (a MarketAdder) AddMarket(ctx context.Context, arg, cwd string) (MarketRecord, Market, error) {
	if (strings.HasPrefix(arg, "https://") || strings.HasPrefix(arg, "http://")) && strings.HasSuffix(strings.ToLower(arg), ".json") {
		return MarketRecord{}, Market{}, fmt.Errorf("%w: a URL to a marketplace.json is not supported; add the git repository it lies in by its git URL or owner/repo", ErrUnsupported)
	}
	path := arg
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	if fi, err := os.Stat(path); err == nil {
		dir, err := filepath.EvalSymlinks(path)
		if err != nil {
			return MarketRecord{}, Market{}, err
		}
		if !fi.IsDir() {
			// A marketplace.json itself: its root is above .claude-plugin.
			dir = filepath.Dir(dir)
			if filepath.Base(dir) == filepath.Dir(ManifestPath) {
				dir = filepath.Dir(dir)
			}
		}
		m, err := readMarket(dir)
		if err != nil {
			return MarketRecord{}, Market{}, err
		}
		rec := MarketRecord{Name: m.Name, Source: arg, Dir: dir, Added: a.Now().UTC()}
		return rec, m, a.record(rec)
	}
	url := arg
	switch {
	case gitURL(arg):
	case ownerRepo().MatchString(arg) && !strings.HasPrefix(arg, "."):
		url = githubURL(arg)
	default:
		return MarketRecord{}, Market{}, fmt.Errorf("%s: %w", arg, fs.ErrNotExist)
	}
	dir, m, err := a.cloneMarket(ctx, url, "")
	if err != nil {
		return MarketRecord{}, Market{}, err
	}
	rec := MarketRecord{Name: m.Name, Source: arg, URL: url, Dir: dir, Added: a.Now().UTC()}
	return rec, m, a.record(rec)
}

// cloneMarket clones url and puts it at the store's place for its name,
// replacing the clone there (an update); want, when set, is the name the
// marketplace must keep.
func (a MarketAdder) cloneMarket(ctx context.Context, url, want string) (string, Market, error) {
	if a.Store == "" {
		return "", Market{}, fmt.Errorf("%w: no home directory for ralph's plugin store", ErrNoConfigDir)
	}
	tmp, err := a.clone(ctx, url, filepath.Join(a.Store, "marketplaces"))
	if err != nil {
		return "", Market{}, err
	}
	m, err := readMarket(tmp)
	if err == nil && want != "" && m.Name != want {
		err = fmt.Errorf("%w: %s now names its marketplace %q, not %q; remove it and add it again", ErrNotMarket, url, m.Name, want)
	}
	if err == nil {
		if recs, _ := Markets(a.Person, a.UserConfigDir); want == "" {
			if i := slices.IndexFunc(recs, func(r MarketRecord) bool { return r.Name == m.Name }); i >= 0 && recs[i].URL != url {
				err = fmt.Errorf("%w: a marketplace named %s is already added from %s; remove it first with ralph plugin marketplace remove %s", ErrNameTaken, m.Name, recs[i].Source, m.Name)
			}
		}
	}
	if err != nil {
		_ = a.Person.RemoveAll(tmp)
		return "", Market{}, err
	}
	dest := filepath.Join(a.Store, "marketplaces", m.Name)
	return dest, m, replaceDir(a.Person, tmp, dest)
}

// clone clones url into a new directory under parent and names it.
func (a MarketAdder) clone(ctx context.Context, url, parent string) (string, error) {
	if err := a.Person.MkdirAll(parent, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", parent, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	tmp := filepath.Join(parent, ".new-"+hex.EncodeToString(b[:]))
	if err := git.Clone(ctx, url, tmp); err != nil {
		// A clone that failed half way leaves nothing behind.
		_ = a.Person.RemoveAll(tmp)
		return "", fmt.Errorf("%w: %s: %w", ErrClone, url, err)
	}
	return tmp, nil
}

// replaceDir puts the directory tmp at dest, removing what was there:
// the old clone is moved aside first, so dest is at every moment either
// the old clone or the new one.
func replaceDir(person afero.Fs, tmp, dest string) error {
	forgetDoors(dest)
	old := tmp + ".old"
	if _, err := person.Stat(dest); err == nil {
		if err := person.Rename(dest, old); err != nil {
			_ = person.RemoveAll(tmp)
			return fmt.Errorf("replacing %s: %w", dest, err)
		}
	}
	if err := person.Rename(tmp, dest); err != nil {
		_ = person.RemoveAll(tmp)
		return fmt.Errorf("replacing %s: %w", dest, err)
	}
	_ = person.RemoveAll(old)
	return nil
}

// forgetDoors closes the doors held on dir and beneath it: a clone put
// in its place is a new directory, which a door on the old one would not
// see.
func forgetDoors(dir string) {
	doors.Range(func(k, v any) bool {
		if Within(k.(string), dir) {
			doors.Delete(k)
			_ = v.(*rootfs.Fs).Close()
		}
		return true
	})
}

// record keeps rec in plugins.json, replacing a marketplace of its name
// from the same place; another place under that name is ErrNameTaken.
func (a MarketAdder) record(rec MarketRecord) error {
	recordMu.Lock()
	defer recordMu.Unlock()
	r, err := readAll(a.Person, a.UserConfigDir)
	if err != nil {
		return err
	}
	if i := slices.IndexFunc(r.Marketplaces, func(m MarketRecord) bool { return m.Name == rec.Name }); i >= 0 {
		if r.Marketplaces[i].Dir != rec.Dir {
			return fmt.Errorf("%w: a marketplace named %s is already added from %s; remove it first with ralph plugin marketplace remove %s", ErrNameTaken, rec.Name, r.Marketplaces[i].Source, rec.Name)
		}
		r.Marketplaces = slices.Delete(r.Marketplaces, i, i+1)
	}
	r.Marketplaces = append(r.Marketplaces, rec)
	return writeAll(a.Person, a.UserConfigDir, r)
}

// RemoveMarket forgets the marketplace name and the plugins added from
// it, and deletes what ralph cloned for them; a directory read in place
// is left as it is. The plugins forgotten come back by name.
func (a MarketAdder) RemoveMarket(name string) (MarketRecord, []string, error) {
	recordMu.Lock()
	defer recordMu.Unlock()
	r, err := readAll(a.Person, a.UserConfigDir)
	if err != nil {
		return MarketRecord{}, nil, err
	}
	i := slices.IndexFunc(r.Marketplaces, func(m MarketRecord) bool { return m.Name == name })
	if i < 0 {
		return MarketRecord{}, nil, fmt.Errorf("%w: %s (ralph plugin marketplace list shows them)", ErrNoMarket, name)
	}
	rec := r.Marketplaces[i]
	r.Marketplaces = slices.Delete(r.Marketplaces, i, i+1)
	var gone []string
	r.Plugins = slices.DeleteFunc(r.Plugins, func(p Record) bool {
		if p.Marketplace == name {
			gone = append(gone, p.Name)
			return true
		}
		return false
	})
	if err := writeAll(a.Person, a.UserConfigDir, r); err != nil {
		return MarketRecord{}, nil, err
	}
	if a.Store != "" {
		// What ralph cloned is ralph's to delete; a directory the person
		// gave is theirs.
		dirs := []string{filepath.Join(a.Store, "sources", name)}
		if rec.URL != "" {
			dirs = append(dirs, filepath.Join(a.Store, "marketplaces", name))
		}
		for _, d := range dirs {
			forgetDoors(d)
			_ = a.Person.RemoveAll(d)
		}
	}
	return rec, gone, nil
}

// SplitRef splits NAME@MARKETPLACE; ok is false for anything else.
func SplitRef(s string) (name, market string, ok bool) {
	name, market, ok = strings.Cut(s, "@")
	return name, market, ok && validName().MatchString(name) && validName().MatchString(market)
}

// market finds the marketplace recorded as name.
func (a MarketAdder) market(name string) (MarketRecord, error) {
	recs, err := Markets(a.Person, a.UserConfigDir)
	if err != nil {
		return MarketRecord{}, err
	}
	i := slices.IndexFunc(recs, func(m MarketRecord) bool { return m.Name == name })
	if i < 0 {
		return MarketRecord{}, fmt.Errorf("%w: no marketplace named %s is added (ralph plugin marketplace list shows them; add one with ralph plugin marketplace add PATH|GIT-URL|OWNER/REPO)", ErrNoMarket, name)
	}
	return recs[i], nil
}

// ErrModelMarket says a marketplace that is not the person's (Whose)
// names a source ralph would have to clone: whoever wrote its file chose
// that URL, and ralph clones with the person's git and credentials.
var ErrModelMarket = errors.New("a marketplace the model can write may not make ralph clone")

// AddFromMarket adds the plugin name that the marketplace market lists.
// Only a marketplace of the person's (MarketTrust) may name a repository
// to clone; a plugin that git cannot clone, or that is no plugin, leaves
// nothing behind in the store.
func (a MarketAdder) AddFromMarket(ctx context.Context, name, market string) (Plugin, error) {
	mrec, err := a.market(market)
	if err != nil {
		return Plugin{}, err
	}
	m, err := readMarket(mrec.Dir)
	if err != nil {
		return Plugin{}, err
	}
	i := slices.IndexFunc(m.Plugins, func(e Entry) bool { return e.Name == name })
	if i < 0 {
		return Plugin{}, fmt.Errorf("%w: %s lists no plugin named %s", ErrNoEntry, market, name)
	}
	e := m.Plugins[i]
	rel, url, err := entrySource(e)
	if err != nil {
		return Plugin{}, err
	}
	if url == "" {
		dir, err := relativeDir(mrec, m, e, rel)
		if err != nil {
			return Plugin{}, err
		}
		return add(a.Person, a.UserConfigDir, dir, a.Project, a.Now(), name, &mrec, a.Store)
	}
	if t := MarketTrust(mrec, a.Store); !t.Persons {
		return Plugin{}, fmt.Errorf("%w: a marketplace %s may not make ralph clone: %s's source %s was chosen by whoever wrote %s; clone the plugin yourself if you want it and add its directory with ralph plugin add PATH",
			ErrModelMarket, t.Where, e.Name, url, filepath.Join(mrec.Dir, MarketFile()))
	}
	if a.Store == "" {
		return Plugin{}, fmt.Errorf("%w: no home directory for ralph's plugin store", ErrNoConfigDir)
	}
	parent := filepath.Join(a.Store, "sources", mrec.Name)
	tmp, err := a.clone(ctx, url, parent)
	if err != nil {
		return Plugin{}, err
	}
	// The clone is read before it takes the plugin's place: what is no
	// plugin is removed, and the plugin added before stays as it was.
	if _, _, err := open(tmp, name); err != nil {
		forgetDoors(tmp)
		_ = a.Person.RemoveAll(tmp)
		return Plugin{}, fmt.Errorf("%s: %w", url, err)
	}
	forgetDoors(tmp)
	dest := filepath.Join(parent, e.Name)
	if err := replaceDir(a.Person, tmp, dest); err != nil {
		return Plugin{}, err
	}
	return add(a.Person, a.UserConfigDir, dest, a.Project, a.Now(), name, &mrec, a.Store)
}

// relativeDir is the directory of a marketplace's plugin given by a
// relative path: against metadata.pluginRoot when it is set, and never
// out of the marketplace.
func relativeDir(mrec MarketRecord, m Market, e Entry, rel string) (string, error) {
	clean := filepath.Clean(filepath.Join(filepath.FromSlash(m.Metadata.PluginRoot), filepath.FromSlash(rel)))
	if filepath.IsAbs(rel) || !filepath.IsLocal(clean) && clean != "." {
		return "", fmt.Errorf("%w: %s's source %q leads out of the marketplace's directory, which ralph does not follow", ErrUnsupported, e.Name, rel)
	}
	dir := filepath.Join(mrec.Dir, clean)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	if !Within(real, mrec.Dir) {
		return "", fmt.Errorf("%w: %s", ErrLinkOut, dir)
	}
	return real, nil
}

// entrySource reads an entry's source: a relative path (rel), or the git
// URL of a github or url source (url).
func entrySource(e Entry) (rel, url string, err error) {
	if err := json.Unmarshal(e.Source, &rel); err == nil {
		return rel, "", nil
	}
	var src struct {
		Source string `json:"source"`
		Repo   string `json:"repo"`
		URL    string `json:"url"`
	}
	if err := json.Unmarshal(e.Source, &src); err != nil {
		return "", "", fmt.Errorf("%w: %s's source is neither a path nor an object: %w", ErrUnsupported, e.Name, err)
	}
	switch {
	case src.Source == "github" && ownerRepo().MatchString(src.Repo):
		return "", githubURL(src.Repo), nil
	case src.Source == "url" && gitURL(src.URL):
		return "", src.URL, nil
	case src.Source == "github" || src.Source == "url":
		return "", "", fmt.Errorf("%w: %s's %s source names no repository ralph can clone", ErrUnsupported, e.Name, src.Source)
	}
	return "", "", fmt.Errorf("%w: %s's source is of the %q form, which ralph does not install (it takes a relative path, github and url); clone the plugin yourself and add its directory with ralph plugin add PATH", ErrUnsupported, e.Name, src.Source)
}

// Remote are the plugins m lists whose sources are not relative paths
// (ralph would clone them, or cannot install them): a marketplace that is
// not the person's may not install these.
func (m Market) Remote() []string {
	var out []string
	for _, e := range m.Plugins {
		var rel string
		if json.Unmarshal(e.Source, &rel) != nil {
			out = append(out, e.Name)
		}
	}
	return out
}

// Updated is one plugin `ralph plugin update` read again.
type Updated struct {
	Name, Marketplace string
	// Was and Now are the plugin's versions before and after.
	Was, Now string
	Err      error
}

// Update reads the marketplaces again (a clone is cloned anew) and adds
// their plugins again: every plugin added from a marketplace, or only
// name. A plugin added by path is only recorded anew (its manifest's
// fingerprint).
func (a MarketAdder) Update(ctx context.Context, name string) ([]Updated, error) {
	recs, err := Records(a.Person, a.UserConfigDir)
	if err != nil {
		return nil, err
	}
	if name != "" && !slices.ContainsFunc(recs, func(r Record) bool { return r.Name == name }) {
		return nil, fmt.Errorf("%w: %s (ralph plugin list shows the plugins added)", ErrNotFound, name)
	}
	markets, err := Markets(a.Person, a.UserConfigDir)
	if err != nil {
		return nil, err
	}
	cloned := map[string]bool{}
	var out []Updated
	for _, r := range recs {
		if name != "" && r.Name != name {
			continue
		}
		u := Updated{Name: r.Name, Marketplace: r.Marketplace}
		if old, _, err := open(r.Dir, r.Name); err == nil {
			u.Was = old.Manifest.Version
		}
		var p Plugin
		switch i := slices.IndexFunc(markets, func(m MarketRecord) bool { return m.Name == r.Marketplace }); {
		case r.Marketplace == "":
			p, u.Err = a.readd(r)
		case i < 0:
			u.Err = fmt.Errorf("%w: %s, which it was added from, is no longer added", ErrNoMarket, r.Marketplace)
		default:
			if m := markets[i]; m.URL != "" && !cloned[m.Name] {
				cloned[m.Name] = true
				if _, _, err := a.cloneMarket(ctx, m.URL, m.Name); err != nil {
					u.Err = err
					break
				}
			}
			p, u.Err = a.AddFromMarket(ctx, r.Name, r.Marketplace)
		}
		u.Now = p.Manifest.Version
		out = append(out, u)
	}
	return out, nil
}

// readd records a plugin added by path anew.
func (a MarketAdder) readd(r Record) (Plugin, error) {
	recordMu.Lock()
	recs, err := readRecord(a.Person, a.UserConfigDir)
	if err == nil {
		err = writeRecord(a.Person, a.UserConfigDir, slices.DeleteFunc(recs, func(x Record) bool { return x.Name == r.Name }))
	}
	recordMu.Unlock()
	if err != nil {
		return Plugin{}, err
	}
	return add(a.Person, a.UserConfigDir, r.Dir, a.Project, a.Now(), r.Name, nil, a.Store)
}

// OfficialMarket is the name of Anthropic's official marketplace, which
// Claude Code prefers when a bare plugin name is listed by several. The
// agents' table sets it (workers/agents), as it sets ManifestPath: the
// CLI whose plugins these are names it.
var OfficialMarket string

// ErrAmbiguous says several added marketplaces list a plugin of the name
// given without @MARKETPLACE, and none of them is the official one.
var ErrAmbiguous = errors.New("several marketplaces list that plugin")

// MarketFor is the added marketplace to take the plugin name from when it
// is given without @MARKETPLACE, as Claude Code's install takes it: the
// one marketplace that lists it, or the official one when it is added and
// lists it. Otherwise the error is one sentence naming every marketplace
// that lists it (ErrAmbiguous), or saying none does (ErrNoEntry).
func (a MarketAdder) MarketFor(name string) (string, error) {
	recs, err := Markets(a.Person, a.UserConfigDir)
	if err != nil {
		return "", err
	}
	var holding []string
	for _, r := range recs {
		m, err := readMarket(r.Dir)
		if err != nil {
			continue
		}
		if slices.ContainsFunc(m.Plugins, func(e Entry) bool { return e.Name == name }) {
			holding = append(holding, r.Name)
		}
	}
	switch {
	case len(holding) == 1:
		return holding[0], nil
	case OfficialMarket != "" && slices.Contains(holding, OfficialMarket):
		return OfficialMarket, nil
	case len(holding) == 0 && len(recs) == 0:
		return "", fmt.Errorf("%w: %s is not a directory here and no marketplace is added; add a plugin by its directory, or add a marketplace with ralph plugin marketplace add PATH|GIT-URL|OWNER/REPO first", ErrNoEntry, name)
	case len(holding) == 0:
		return "", fmt.Errorf("%w: %s is not a directory here and no added marketplace lists a plugin of that name (ralph plugin marketplace list shows them)", ErrNoEntry, name)
	}
	refs := make([]string, len(holding))
	for i, h := range holding {
		refs[i] = name + "@" + h
	}
	return "", fmt.Errorf("%w: %s is listed by the marketplaces %s; add it as %s", ErrAmbiguous, name, strings.Join(holding, " and "), strings.Join(refs, " or "))
}
