package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"

	"github.com/spf13/afero"
)

// The project's .ralph/config.toml travels with the repository, so a
// cloned project could arrive with allowed_commands = ["rm"] already in
// it. ralph therefore also records every "always" approval on the user's
// side, in <user config dir>/ralph/approved_commands.json keyed by project
// root, and honours a project's allowed_commands only where that record
// agrees.

// TrustFile is the user-side record of approvals.
func TrustFile(userConfigDir string) string {
	return filepath.Join(userConfigDir, "ralph", "approved_commands.json")
}

var trustMu sync.Mutex

func readTrust(fs afero.Fs, userConfigDir string) (map[string][]string, error) {
	return readRecord[[]string](fs, TrustFile(userConfigDir))
}

// readRecord reads one of the person's JSON records of approvals (by
// project root): a file that is not there is an empty record.
func readRecord[T any](fs afero.Fs, path string) (map[string]T, error) {
	m := map[string]T{}
	data, err := afero.ReadFile(fs, path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s is corrupt: %w", path, err)
	}
	return m, nil
}

// writeRecord writes v as the JSON record at path, readable by the person
// alone, replacing it whole.
func writeRecord(fs afero.Fs, path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := fs.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return memory.WriteFileAtomic(fs, path, append(data, '\n'), 0o600)
}

// trustedOnly keeps the rules approved on this machine for root and
// counts the others.
func trustedOnly(fs afero.Fs, userConfigDir, root string, allowed []string) ([]string, int) {
	if len(allowed) == 0 {
		return nil, 0
	}
	if userConfigDir == "" || fs == nil {
		return nil, len(allowed)
	}
	m, err := readTrust(fs, userConfigDir)
	if err != nil {
		return nil, len(allowed)
	}
	trusted := m[filepath.Clean(root)]
	var out []string
	for _, a := range allowed {
		if slices.Contains(trusted, normalRule(a)) && !strings.HasPrefix(a, serverEntryPrefix) && !strings.HasPrefix(a, hookEntryPrefix) {
			out = append(out, a)
		}
	}
	return out, len(allowed) - len(out)
}

// trustRule records that the person approved rule "always" for root.
func trustRule(fs afero.Fs, userConfigDir, root, rule string) error {
	if userConfigDir == "" {
		return errors.New("no user config directory to record the approval in")
	}
	trustMu.Lock()
	defer trustMu.Unlock()
	m, err := readTrust(fs, userConfigDir)
	if err != nil {
		m = map[string][]string{}
	}
	root = filepath.Clean(root)
	if slices.Contains(m[root], rule) {
		return nil
	}
	m[root] = append(m[root], rule)
	sort.Strings(m[root])
	return writeRecord(fs, TrustFile(userConfigDir), m)
}

// A project's MCP server (its .mcp.json or .ralph/config.toml, which a
// cloned repository controls) starts only once the person approved it on
// this machine. The approval is kept in the same record as the rules,
// as an entry no rule can be, naming the server and its definition's
// fingerprint: a definition the repository changes must be approved
// again.
const serverEntryPrefix = "mcp_server "

func serverEntry(s config.MCPServer) string {
	return serverEntryPrefix + s.Name + " " + s.Fingerprint()
}

// ServerApproved reports whether the person approved the project's server
// s, as it is defined now, on this machine. A server of the person's own
// config needs no approval.
func ServerApproved(fs afero.Fs, userConfigDir, root string, s config.MCPServer) bool {
	if !s.FromProject {
		return true
	}
	if userConfigDir == "" || fs == nil {
		return false
	}
	m, err := readTrust(fs, userConfigDir)
	if err != nil {
		return false
	}
	return slices.Contains(m[filepath.Clean(root)], serverEntry(s))
}

// TrustServer records that the person approved the project's server s, as
// it is defined now, on this machine (`ralph mcp approve`, or "always"),
// and keeps what they were shown of it (secrets hidden, as secrets
// redacts them), so a later change can be shown against it.
func TrustServer(fs afero.Fs, userConfigDir, root string, s config.MCPServer, redactor *memory.Redactor) error {
	if err := trustRule(fs, userConfigDir, root, serverEntry(s)); err != nil {
		return err
	}
	trustMu.Lock()
	defer trustMu.Unlock()
	if err := keepApprovedServer(fs, userConfigDir, root, s, showDefinition(s.Definition(), redactor)); err != nil {
		return fmt.Errorf("the approval is recorded, but not what was approved, so a change cannot be shown against it: %w", err)
	}
	return nil
}
