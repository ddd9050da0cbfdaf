package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Models accept function names of at most 64 letters, digits, _ and -.
// An MCP tool may be called anything ("files/read.v2"), so its full name
// mcp__<server>__<tool> keeps what fits that alphabet, replaces the rest
// with _, and when the name is too long, or collides with another tool's
// after that, ends in a short hash of the tool's real name.
const maxToolName = 64

// ToolName is the name the model calls a server's tool by.
func ToolName(server, tool string) string {
	name := "mcp__" + server + "__" + sanitize(tool)
	if len(name) <= maxToolName && sanitize(tool) == tool {
		return name
	}
	return hashed(name, tool)
}

// hashed cuts name to fit with a hash of the tool's real name on the end.
func hashed(name, tool string) string {
	sum := sha256.Sum256([]byte(tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(name)+len(suffix) > maxToolName {
		name = name[:maxToolName-len(suffix)]
	}
	return name + suffix
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// toolNames names a server's tools, distinctly.
func toolNames(server string, tools []string) []string {
	out := make([]string, len(tools))
	seen := map[string]bool{}
	for i, t := range tools {
		n := ToolName(server, t)
		if seen[n] {
			n = hashed("mcp__"+server+"__"+sanitize(t), t)
		}
		seen[n] = true
		out[i] = n
	}
	return out
}
