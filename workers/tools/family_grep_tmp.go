package tools

import "encoding/json"

// TEMPORARY until the search options land (branch models-toolargs):
// pattern and path only.

func SearchArgsFromGrep(in map[string]json.RawMessage) (json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	for _, k := range []string{"pattern", "path"} {
		if v, ok := in[k]; ok {
			out[k] = v
		}
	}
	return json.Marshal(out)
}

func GrepInputFromSearch(args json.RawMessage) (map[string]json.RawMessage, bool) {
	var in map[string]json.RawMessage
	if json.Unmarshal(args, &in) != nil {
		return nil, false
	}
	out := map[string]json.RawMessage{"output_mode": json.RawMessage(`"content"`)}
	for _, k := range []string{"pattern", "path"} {
		if v, ok := in[k]; ok {
			out[k] = v
		}
	}
	return out, true
}
