package llm

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/providers"
)

// wireChoiceFile is the one file of this package that may ask which
// protocol a client speaks: wireFor chooses, once, in New.
const wireChoiceFile = "protocols.go"

// TestNoProtocolSwitchOutsideTheWireChoice fails when code in this
// package asks which protocol it speaks anywhere but wireFor and the
// wires' serving: a protocol named (providers.ProtocolAnthropic,
// ProtocolOpenAI, ProtocolResponses), a protocol compared or switched on
// (x.Protocol == …, switch protocol), OpenAI's choice of API asked
// (providers.Wire, providers.WireChat), or a protocol's type asserted
// (w.(messagesWire)). Each such question is a place a third
// protocol would have to be added by hand; the wire interface is where
// protocols differ.
func TestNoProtocolSwitchOutsideTheWireChoice(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var sites []string
	for _, name := range files {
		if name == wireChoiceFile || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sites = append(sites, protocolQuestions(t, name, src)...)
	}
	for _, s := range sites {
		t.Errorf("%s asks which protocol the client speaks; put the difference behind the wire interface (%s) instead", s, wireChoiceFile)
	}
}

// TestProtocolGuardSeesSwitches shows the guard above catching each kind
// of question, so that it cannot pass by seeing nothing.
func TestProtocolGuardSeesSwitches(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		`package llm; func f(c *Client) bool { return c.cfg.Protocol == "anthropic" }`,
		`package llm; func f(p string) bool { return p != providers.ProtocolOpenAI }`,
		`package llm; var x = providers.ProtocolAnthropic`,
		`package llm; func f(c *Client) { switch c.cfg.Protocol { case "x": } }`,
		`package llm; func f(protocol string) { switch { case protocol == "x": } }`,
		`package llm; func f(c *Client) bool { _, ok := c.wire.(messagesWire); return ok }`,
		`package llm; func f(c *Client) { switch c.wire.(type) { case chatWire: } }`,
		`package llm; func f(c *Client) bool { _, ok := c.wireOf("m").(responsesWire); return ok }`,
		`package llm; func f(c *Client) bool { return providers.Wire(c.cfg.BaseURL, "m", c.cfg.Wire) == "chat" }`,
		`package llm; func f(c *Client) bool { return c.cfg.Wire == providers.WireResponses }`,
		`package llm; var x = providers.ProtocolResponses`,
	} {
		if got := protocolQuestions(t, "snippet.go", []byte(src)); len(got) == 0 {
			t.Errorf("the guard misses the protocol question in %s", src)
		}
	}
	clean := `package llm; func f(c *Client) wire { cfg := c.cfg; cfg.Protocol = "x"; return wireFor(cfg.Protocol) }`
	if got := protocolQuestions(t, "snippet.go", []byte(clean)); len(got) != 0 {
		t.Errorf("the guard sees a question in code that asks none: %v", got)
	}
}

// protocolQuestions lists the places in one file that ask which protocol
// the client speaks, as file:line.
func protocolQuestions(t *testing.T, name string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	at := func(n ast.Node) { out = append(out, fset.Position(n.Pos()).String()) }
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if strings.HasPrefix(n.Sel.Name, "Protocol") && n.Sel.Name != "Protocol" {
				at(n) // providers.ProtocolAnthropic and its kind
			}
			if x, ok := n.X.(*ast.Ident); ok && x.Name == "providers" && strings.HasPrefix(n.Sel.Name, "Wire") {
				at(n) // providers.Wire, providers.WireChat: OpenAI's choice of API
			}
		case *ast.BinaryExpr:
			if (n.Op == token.EQL || n.Op == token.NEQ) && (namesProtocol(n.X) || namesProtocol(n.Y)) {
				at(n)
			}
		case *ast.SwitchStmt:
			if n.Tag != nil && namesProtocol(n.Tag) {
				at(n)
			}
		case *ast.TypeAssertExpr:
			if isWire(n.X) || isWireType(n.Type) {
				at(n)
			}
		}
		return true
	})
	return out
}

// isWire reports an expression that is a client's wire (c.wire, wire,
// c.wireOf(model)).
func isWire(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.CallExpr:
		if s, ok := e.Fun.(*ast.SelectorExpr); ok {
			return s.Sel.Name == "wireOf"
		}
	case *ast.SelectorExpr:
		return e.Sel.Name == "wire"
	case *ast.Ident:
		return e.Name == "wire" || e.Name == "w"
	}
	return false
}

// isWireType reports one of the protocols' types.
func isWireType(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && (id.Name == "chatWire" || id.Name == "messagesWire" || id.Name == "responsesWire")
}

// namesProtocol reports an expression that is a protocol: a field or a
// variable called Protocol or protocol.
func namesProtocol(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return strings.EqualFold(e.Sel.Name, "protocol")
	case *ast.Ident:
		return strings.EqualFold(e.Name, "protocol")
	}
	return false
}

// TestWireHomes checks that the provider table has a row for each
// protocol's own provider, speaking that protocol: the default endpoint
// and the variables error sentences name come from it.
//
// The Responses API is OpenAI's: its home is OpenAI's row, which speaks
// OpenAI's protocol (chat completions and the Responses API at one
// endpoint), since no row names the Responses API as its protocol.
func TestWireHomes(t *testing.T) {
	t.Parallel()
	for protocol, want := range map[string]string{providers.ProtocolOpenAI: "openai", "": "openai", providers.ProtocolAnthropic: "anthropic",
		providers.ProtocolResponses: "openai"} {
		home := wireFor(protocol).home()
		if home.Name != want || home.BaseURL == "" || home.KeyEnv == "" || home.URLVariable() == "" {
			t.Errorf("wireFor(%q).home() = %+v, want the table's %s row with an endpoint, a key and an endpoint variable", protocol, home, want)
		}
		speaks := protocol
		if protocol == providers.ProtocolResponses {
			speaks = providers.ProtocolOpenAI
		}
		if protocol != "" && home.Protocol != speaks {
			t.Errorf("wireFor(%q).home() is %s, which speaks %q", protocol, home.Name, home.Protocol)
		}
	}
	// The wire OpenAI's protocol serves a request on has the same home:
	// the sentences of both APIs name OpenAI's variables.
	c := New(Config{Provider: "openai"})
	for _, model := range []string{"gpt-4o", "gpt-5-codex"} {
		if home := c.wireOf(model).home(); home.Name != "openai" {
			t.Errorf("the wire of %s is at home at %s", model, home.Name)
		}
	}
}

// wireFiles are each wire type's own files, by the prefixes of their
// names: the only files beside the wire choice (wireChoiceFile) whose
// code names the type. Adding a wire (the Responses API was the third)
// is then files of its own, a case in the wire choice and the provider
// table's facts, and no field on Client.
var wireFiles = map[string][]string{
	"chatWire":      {"wire.go", "attempt.go", "learn.go"},
	"messagesWire":  {"messages"},
	"responsesWire": {"responses"},
}

// TestEachWireLivesInItsOwnFiles fails when code outside a wire's own
// files and the wire choice names its type: the state and the protocol
// of a wire are its own, and the Client shares only what every wire
// uses.
func TestEachWireLivesInItsOwnFiles(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range wireTypesNamed(t, name, src) {
			named[typ] = true
			if !ownFile(typ, name) {
				t.Errorf("%s names %s: keep the wire's code in its own files (%v) or the wire choice (%s)", name, typ, wireFiles[typ], wireChoiceFile)
			}
		}
	}
	for typ := range wireFiles {
		if !named[typ] {
			t.Errorf("no file names %s: the guard sees nothing", typ)
		}
	}
	if got := wireTypesNamed(t, "planted.go", []byte(`package llm; func f(w *responsesWire) {}`)); len(got) != 1 || ownFile(got[0], "client.go") {
		t.Errorf("the guard misses a wire type named in client.go: %v", got)
	}
}

// ownFile reports whether file may name the wire type typ.
func ownFile(typ, file string) bool {
	if file == wireChoiceFile {
		return true
	}
	for _, prefix := range wireFiles[typ] {
		if strings.HasPrefix(file, prefix) {
			return true
		}
	}
	return false
}

// wireTypesNamed lists the wire types the code of one file names.
func wireTypesNamed(t *testing.T, name string, src []byte) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if _, wire := wireFiles[id.Name]; wire && !slices.Contains(out, id.Name) {
				out = append(out, id.Name)
			}
		}
		return true
	})
	return out
}
