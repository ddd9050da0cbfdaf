// Package contract holds what of ralph's JSON output contract
// (docs/events.md) more than one face writes or reads: the version every
// line carries and the result line that ends a run. scripts/cli writes
// them, and scripts/mcpserve's task tool reads a one-shot's result line
// back, so both use the one declaration here and cannot drift apart.
package contract

import (
	"strconv"

	"github.com/ralph-dev/ralph/coordinator/event"
)

// Version is the schema_version member every JSON line of the
// event contract carries. It has no value of its own: it always marshals
// as event.SchemaVersion, so no line can leave the version out or
// say an old one.
type Version struct{}

// versionJSON is the version as JSON, made once: encoding/json
// copies what MarshalJSON returns, so every line can share it.
var versionJSON = strconv.AppendInt(nil, event.SchemaVersion, 10)

// MarshalJSON writes the contract's version.
func (Version) MarshalJSON() ([]byte, error) {
	return versionJSON, nil
}

// UnmarshalJSON accepts any version: a reader of ralph's own lines (the
// tests, a Go consumer) decides for itself what it understands.
func (*Version) UnmarshalJSON([]byte) error { return nil }
