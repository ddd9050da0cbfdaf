// Package models is the one place a model name meets the endpoint's list
// of models: shell completion of --model, chat's Tab after /model, and the
// check of /model NAME all go through a Resolver, so that they agree on
// what the endpoint serves. The provider's own list comes from its client
// (llm.Client.Models, by protocol), and its aliases from the provider
// table (memory/providers). It also makes a session's model client of
// its configuration (ClientConfig) and chains the fallback models, on
// the session's provider or another (WithFallbacks, fallback.go).
package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// ErrUnknown is a model name the endpoint's list lacks. It is returned
// only when the list was fetched and names other models: a gateway that
// lists nothing, or an endpoint that cannot be asked, refuses no name.
var ErrUnknown = errors.New("the endpoint does not list that model")

// UnknownError is a name the fetched list lacks, with the listed names
// nearest to it.
type UnknownError struct {
	Name    string
	BaseURL string
	Near    []string
}

func (e *UnknownError) Error() string {
	s := fmt.Sprintf("%s does not serve a model named %q", e.BaseURL, e.Name)
	if len(e.Near) > 0 {
		s += "; the nearest it lists: " + strings.Join(e.Near, ", ")
	}
	return s + " (`ralph models` lists them all)"
}

func (e *UnknownError) Unwrap() error { return ErrUnknown }

// ListTTL is how long the model list is taken from the cache file;
// ListTimeout is the longest a completion or a check waits for the
// endpoint, so that a slow or absent server never holds up the shell.
const (
	ListTTL     = 10 * time.Minute
	ListTimeout = 2 * time.Second
)

// Client is a client for cfg's endpoint, made as a session makes it, for
// the questions asked beside a session (the model list, `ralph doctor`).
func Client(cfg config.Config) *llm.Client {
	return llm.New(ClientConfig(cfg))
}

// ClientConfig is the one translation of a resolved configuration into a
// model client's: the provider, its protocol and endpoint, the key and how
// it is sent, thinking, and the limits. Every client ralph makes (a
// session's, the model list's, doctor's) is made of it, so that they all
// speak to the same provider the same way.
func ClientConfig(cfg config.Config) llm.Config {
	return llm.Config{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, MaxAttempts: cfg.MaxRetries + 1, IdleTimeout: cfg.IdleTimeout,
		MaxOutputTokens: cfg.MaxOutputTokens, MaxRetryAfter: cfg.MaxRetryAfter,
		Provider: cfg.Provider, Protocol: cfg.Protocol, Wire: cfg.Wire, Bearer: cfg.Bearer, ThinkingTokens: cfg.ThinkingTokens, KeyEnv: cfg.APIKeyEnv,
		// The search is the provider's, from its network, yet it is the
		// web all the same: --no-network takes it away as it takes
		// web_fetch away (docs/sandbox.md#web_search).
		WebSearch: cfg.WebSearch && cfg.Network}
}

// WebSearchNote is the one sentence a session says at its start when the
// person asked for web_search (web_search, --web-search) and it is not
// offered: without the network, or with a model whose provider has no
// search of its own. "" when it was not asked for or is offered.
func WebSearchNote(cfg config.Config) string {
	switch {
	case !cfg.WebSearch:
		return ""
	case !cfg.Network:
		return "web_search is not offered: the session has no network (--no-network or network = false), and the provider's search is the web all the same"
	}
	if err := llm.WebSearchWith(ClientConfig(cfg), cfg.Model); err != nil {
		return err.Error()
	}
	return ""
}

// Resolver knows an endpoint's models. Its list is asked for once and
// kept for the life of the Resolver (a chat session), so that Tab is
// fast; the cache file under the person's cache directory carries it
// from one ralph to the next for ListTTL.
type Resolver struct {
	baseURL string
	// provider is the provider's name (memory/providers), whose table
	// says what Claude Code's aliases (sonnet, opus, haiku) mean there.
	provider string
	list     func(ctx context.Context) ([]string, error)
	cache    string

	mu      sync.Mutex
	fetched bool
	ids     []string
	err     error
}

// ForConfig is the Resolver of cfg's endpoint. A config that would not
// let ralph call the endpoint (no key for a remote one, a project's
// base_url that may not get the key) gets no list, and the endpoint is
// never sent the key it would refuse.
func ForConfig(cfg config.Config) *Resolver {
	if err := cfg.Validate(); err != nil {
		r := New(cfg.BaseURL, "", func(context.Context) ([]string, error) { return nil, err })
		r.provider = cfg.Provider
		return r
	}
	r := New(cfg.BaseURL, CacheFile(cfg.BaseURL), func(ctx context.Context) ([]string, error) {
		served, err := Client(cfg).Models(ctx)
		if err != nil {
			return nil, err
		}
		ids := make([]string, 0, len(served))
		for _, m := range served {
			if m.ID != "" {
				ids = append(ids, m.ID)
			}
		}
		return ids, nil
	})
	r.provider = cfg.Provider
	return r
}

// Alias is the model a Claude Code alias (sonnet, opus, haiku) means at
// the Resolver's provider, from the provider table; false for any other
// name and where the provider serves no such family.
func (r *Resolver) Alias(name string) (string, bool) {
	return providers.ModelForAlias(r.provider, name)
}

// New is a Resolver that asks list for the models of baseURL, keeping
// them in the cache file cache ("" for none).
func New(baseURL, cache string, list func(ctx context.Context) ([]string, error)) *Resolver {
	return &Resolver{baseURL: baseURL, list: list, cache: cache}
}

// List is the endpoint's model ids: from this Resolver's memory, else the
// cache file while fresh, else the endpoint (waiting at most
// ListTimeout). A failure is kept too, so that an endpoint that cannot be
// asked is asked once a session.
func (r *Resolver) List(ctx context.Context) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fetched {
		return r.ids, r.err
	}
	if ids, ok := readCache(r.cache, r.baseURL); ok {
		r.fetched, r.ids = true, ids
		return ids, nil
	}
	ctx, cancel := context.WithTimeout(ctx, ListTimeout)
	defer cancel()
	ids, err := r.list(ctx)
	// The names reach the terminal (Tab, the nearest named): one that
	// would drive it is no model anyone can type, and is left out.
	for _, id := range ids {
		if id != "" && text.StripControls(id) == id {
			r.ids = append(r.ids, id)
		}
	}
	r.err, r.fetched = err, true
	if r.err == nil && len(r.ids) > 0 {
		writeCache(r.cache, r.baseURL, r.ids)
	}
	return r.ids, r.err
}

// Check says whether name may be used: an error wrapping ErrUnknown (an
// *UnknownError naming the nearest) when the list was fetched and lacks
// it; otherwise nil, with a one-line warning when the list could not be
// had or was empty, so the name is kept unchecked.
func (r *Resolver) Check(ctx context.Context, name string) (warning string, err error) {
	ids, lerr := r.List(ctx)
	switch {
	case lerr != nil:
		return fmt.Sprintf("kept %q unchecked: the endpoint's model list could not be had (%s)", name, text.OneLine(lerr.Error())), nil
	case len(ids) == 0:
		return fmt.Sprintf("kept %q unchecked: %s lists no models", name, r.baseURL), nil
	}
	for _, id := range ids {
		if id == name {
			return "", nil
		}
	}
	return "", &UnknownError{Name: name, BaseURL: r.baseURL, Near: Nearest(name, ids, 3)}
}

// Nearest is up to n of ids nearest to name: those that contain it or it
// contains first, then by edit distance, ignoring case.
func Nearest(name string, ids []string, n int) []string {
	lname := strings.ToLower(name)
	type cand struct {
		id string
		d  int
	}
	var cs []cand
	for _, id := range ids {
		lid := strings.ToLower(id)
		d := text.Distance(lname, lid)
		if strings.Contains(lid, lname) || strings.Contains(lname, lid) {
			d = -1
		}
		if d <= max(2, len([]rune(name))/2) {
			cs = append(cs, cand{id, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []string
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.id)
	}
	return out
}

// CacheFile is the cache file of an endpoint's list, named by a hash of
// its URL; "" when the person has no cache directory, or when it lies in
// the temporary directory (XDG_CACHE_HOME there, as on CI): the model's
// commands write there, and a link they plant on the way (ralph/ →
// ~/.config/ralph) would choose where ralph writes, at any moment
// between a check and the write. The list is then asked for each time.
func CacheFile(baseURL string) string {
	dir, err := os.UserCacheDir()
	if err != nil || sandbox.WritableByCommands(dir) {
		return ""
	}
	sum := sha256.Sum256([]byte(baseURL))
	return filepath.Join(dir, "ralph", "models-"+hex.EncodeToString(sum[:8])+".json")
}

// cacheRecord is a cache file: an endpoint's models and when they were
// asked for.
type cacheRecord struct {
	BaseURL string    `json:"base_url"`
	Fetched time.Time `json:"fetched"`
	Models  []string  `json:"models"`
}

// readCache is the cached list of baseURL if it is younger than ListTTL.
func readCache(path, baseURL string) ([]string, bool) {
	if path == "" {
		return nil, false
	}
	data, err := rootfs.ReadSmall(rootfs.Person(), path, maxCache)
	if err != nil {
		return nil, false
	}
	var mc cacheRecord
	if json.Unmarshal(data, &mc) != nil || mc.BaseURL != baseURL || time.Since(mc.Fetched) > ListTTL || time.Since(mc.Fetched) < 0 || len(mc.Models) == 0 {
		return nil, false
	}
	return mc.Models, true
}

// maxCache is the most of a cache file ralph reads; an endpoint's list
// is a few KiB.
const maxCache = 4 << 20

// writeCache keeps the list for the next ralph; a cache that cannot be
// written only costs the next one a request. The cache directory may be
// writable to commands (sandbox_writable = ["~/.cache"], XDG_CACHE_HOME
// inside $TMPDIR), so the file is written through the person's door: a
// temporary file of a random name made with O_EXCL, renamed over the
// name, which replaces a link planted there and never follows it.
func writeCache(path, baseURL string, models []string) {
	if path == "" {
		return
	}
	data, err := json.Marshal(cacheRecord{BaseURL: baseURL, Fetched: time.Now(), Models: models})
	person := rootfs.Person()
	if err != nil || person.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	// A cache directory commands may write (sandbox_writable ~/.cache)
	// whose ralph/ is a link is not followed.
	if fi, err := os.Lstat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return
	}
	_ = memory.WriteFileAtomicUnsynced(person, path, data, 0o600)
}
