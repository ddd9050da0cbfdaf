package llmtest

import (
	"net/http"
	"strings"
	"testing"
)

// The stand-in refuses a search turn sent back half (a server_tool_use
// without its result, a result without its call) and a server tool it
// does not know, as the real API does; it searches only when the request
// offers the tool, streaming the search's blocks, the cited text and the
// count of searches.
func TestMessagesWebSearch(t *testing.T) {
	t.Parallel()
	user := `{"role":"user","content":"hi"}`
	call := `{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}}`
	result := `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}`
	tool := `"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":5}],`
	srv := NewServer(&Scenario{Responses: []Response{
		{Text: "No search offered.", WebSearch: &WebSearch{Query: "q", Results: []SearchResult{{Title: "T", URL: "https://example.org/t"}}}},
		{Text: "Found it.", WebSearch: &WebSearch{Query: "q", Results: []SearchResult{{Title: "T", URL: "https://example.org/t"}}}},
	}})
	defer srv.Close()
	for _, c := range []struct{ name, body, want string }{
		{"a call without its result", `{"model":"c","max_tokens":10,` + tool + `"messages":[` + user + `,{"role":"assistant","content":[` + call + `]},` + user + `]}`,
			"server_tool_use ids were found without web_search_tool_result blocks"},
		{"a result without its call", `{"model":"c","max_tokens":10,` + tool + `"messages":[` + user + `,{"role":"assistant","content":[` + result + `]},` + user + `]}`,
			"without a corresponding server_tool_use block"},
		{"another name", `{"model":"c","max_tokens":10,"tools":[{"type":"web_search_20250305","name":"search"}],"messages":[` + user + `]}`,
			"tools.0.name: Input should be 'web_search'"},
		{"an unknown server tool", `{"model":"c","max_tokens":10,"tools":[{"type":"web_search_1999","name":"web_search"}],"messages":[` + user + `]}`,
			"does not match any of the expected tags"},
	} {
		if status, body := postMessages(t, srv, c.body); status != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s\nwant 400 with %q", c.name, status, body, c.want)
		}
	}
	stream := `,"stream":true,`
	status, body := postMessages(t, srv, `{"model":"c","max_tokens":10`+stream+`"messages":[`+user+`]}`)
	if status != http.StatusOK || strings.Contains(body, "server_tool_use") || !strings.Contains(body, `"No searc"`) {
		t.Errorf("without the tool: %d %s", status, body)
	}
	status, body = postMessages(t, srv, `{"model":"c","max_tokens":10`+stream+tool+`"messages":[`+user+`,{"role":"assistant","content":[`+call+`,`+result+`,{"type":"text","text":"ok"}]},`+user+`]}`)
	for _, want := range []string{`"type":"server_tool_use"`, `"partial_json":"`, `"type":"web_search_tool_result"`, `"type":"citations_delta"`,
		`"url":"https://example.org/t"`, `"web_search_requests":1`, `"Found it"`} {
		if status != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("with the tool: %d, want %s in\n%s", status, want, body)
		}
	}
}
