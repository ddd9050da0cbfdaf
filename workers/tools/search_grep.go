package tools

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Claude Code's Grep (GrepInput in sdk-tools.d.ts of
// @anthropic-ai/claude-agent-sdk) is ripgrep's options under their own
// names; search takes each of them under ralph's. The one difference of
// meaning is the default output: Grep without output_mode lists the
// files with a match, search without output shows the matching lines. So
// a Grep call always maps to an explicit output, and search's arguments
// always map to an explicit output_mode.

// grepOutput maps Grep's output_mode to search's output, and back.
var grepOutput = map[string]string{
	"content":            searchLines,
	"files_with_matches": searchFiles,
	"count":              searchCount,
}

// grepFields maps Grep's options that carry over as they are (a string,
// a whole number or a flag) to search's arguments. "-C" and "context",
// head_limit and output_mode are mapped apart.
var grepFields = []struct {
	grep, search string
	kind         byte // 's' string, 'n' whole number, 'b' flag
}{
	{"pattern", "pattern", 's'},
	{"path", "path", 's'},
	{"glob", "glob", 's'},
	{"type", "type", 's'},
	{"-i", "ignore_case", 'b'},
	{"-B", "before", 'n'},
	{"-A", "after", 'n'},
	{"-o", "only_matching", 'b'},
	{"-n", "line_numbers", 'b'},
	{"multiline", "multiline", 'b'},
	{"offset", "skip", 'n'},
}

// SearchArgsFromGrep maps a call of Claude Code's Grep (its input, field
// by field) to search's arguments:
//
//   - pattern, path, glob and type are kept; -i is ignore_case, -B before,
//     -A after, -o only_matching, -n line_numbers, multiline multiline,
//     offset skip.
//   - context, or its alias -C (context wins when both are given), is
//     context.
//   - output_mode content is output lines, files_with_matches files,
//     count count, and no output_mode is files (Grep's default), so
//     output is always set.
//   - head_limit N > 0 is limit N; head_limit 0 (Grep's "unlimited") and
//     no head_limit (Grep's 250) are no limit, where search's own caps
//     (200 matching lines, 1,000 files, the output budget) hold.
//
// A number may come as a JSON number or a string of digits, a flag as a
// JSON boolean or "true"/"false", as models write them; anything else,
// or an unknown output_mode, is an error naming Grep's field. Fields Grep
// does not have are left out.
func SearchArgsFromGrep(in map[string]json.RawMessage) (json.RawMessage, error) {
	out := map[string]any{"output": searchFiles}
	for _, f := range grepFields {
		raw, ok := in[f.grep]
		if !ok || isNull(raw) {
			continue
		}
		v, err := grepValue(f.grep, f.kind, raw)
		if err != nil {
			return nil, err
		}
		out[f.search] = v
	}
	for _, k := range []string{"-C", "context"} {
		if raw, ok := in[k]; ok && !isNull(raw) {
			v, err := grepValue(k, 'n', raw)
			if err != nil {
				return nil, err
			}
			out["context"] = v
		}
	}
	if raw, ok := in["output_mode"]; ok && !isNull(raw) {
		var mode string
		if err := json.Unmarshal(raw, &mode); err != nil {
			return nil, fmt.Errorf(`Grep's "output_mode" must be "content", "files_with_matches" or "count"`)
		}
		o, ok := grepOutput[mode]
		if !ok {
			return nil, fmt.Errorf(`Grep's "output_mode" must be "content", "files_with_matches" or "count", not %q`, mode)
		}
		out["output"] = o
	}
	if raw, ok := in["head_limit"]; ok && !isNull(raw) {
		v, err := grepValue("head_limit", 'n', raw)
		if err != nil {
			return nil, err
		}
		if n := v.(int); n > 0 {
			out["limit"] = n
		}
	}
	return json.Marshal(out)
}

// GrepInputFromSearch maps search's arguments to Claude Code's Grep
// input, the way back of SearchArgsFromGrep: each argument given to its
// Grep field (context as "context", limit as head_limit, skip as offset),
// flags only when true, and output_mode always (no output, search's
// lines, is content). Arguments search does not have are left out. ok is
// false when args is not a JSON object of search's arguments.
func GrepInputFromSearch(args json.RawMessage) (map[string]json.RawMessage, bool) {
	var a SearchParams
	if json.Unmarshal(args, &a) != nil {
		return nil, false
	}
	in := map[string]json.RawMessage{}
	put := func(k string, v any) {
		b, _ := json.Marshal(v)
		in[k] = b
	}
	put("pattern", a.Pattern)
	for k, v := range map[string]string{"path": a.Path, "glob": a.Glob, "type": a.Type} {
		if v != "" {
			put(k, v)
		}
	}
	mode := "content"
	for m, o := range grepOutput {
		if o == a.Output {
			mode = m
		}
	}
	put("output_mode", mode)
	for k, v := range map[string]bool{"-i": a.IgnoreCase, "-o": a.OnlyMatching, "multiline": a.Multiline} {
		if v {
			put(k, true)
		}
	}
	if a.LineNumbers != nil {
		put("-n", *a.LineNumbers)
	}
	if a.Before != nil {
		put("-B", *a.Before)
	}
	if a.After != nil {
		put("-A", *a.After)
	}
	if a.Context > 0 {
		put("context", a.Context)
	}
	if a.Limit > 0 {
		put("head_limit", a.Limit)
	}
	if a.Skip > 0 {
		put("offset", a.Skip)
	}
	return in, true
}

// SearchArgsFromGrepUpdate is a PreToolUse hook's updatedInput for Grep
// (the whole input, in Grep's shape) as search's arguments: the FromPeer
// of search's row, beside GrepInputFromSearch as its ToPeer.
func SearchArgsFromGrepUpdate(_ json.RawMessage, updated map[string]any) (json.RawMessage, error) {
	in := make(map[string]json.RawMessage, len(updated))
	for k, v := range updated {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		in[k] = b
	}
	return SearchArgsFromGrep(in)
}

// grepValue reads one of Grep's fields as a string, a whole number 0 or
// more, or a flag.
func grepValue(field string, kind byte, raw json.RawMessage) (any, error) {
	var s string
	quoted := json.Unmarshal(raw, &s) == nil
	switch kind {
	case 's':
		if !quoted {
			return nil, fmt.Errorf("Grep's %q must be a string", field)
		}
		return s, nil
	case 'b':
		var b bool
		if json.Unmarshal(raw, &b) == nil {
			return b, nil
		}
		if b, err := strconv.ParseBool(strings.TrimSpace(s)); quoted && err == nil {
			return b, nil
		}
		return nil, fmt.Errorf("Grep's %q must be true or false", field)
	}
	if !quoted {
		s = string(raw)
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		// A whole number written as a float (3.0) is still one.
		var f float64
		if json.Unmarshal(raw, &f) != nil || f != float64(int(f)) {
			return nil, fmt.Errorf("Grep's %q must be a whole number", field)
		}
		n = int(f)
	}
	if n < 0 {
		return nil, fmt.Errorf("Grep's %q must be 0 or more, not %d", field, n)
	}
	return n, nil
}

// isNull reports a JSON null, which a model writes for a field it leaves
// out.
func isNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }
