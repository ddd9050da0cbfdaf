package lexers

import (
	"embed"
	"io/fs"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

//go:embed embedded
var embedded embed.FS

// GlobalLexerRegistry is the global LexerRegistry of Lexers.
//
// It is filled on first use of this package's functions (see registry), not
// in package init: parsing every embedded definition took ~5 ms and 2.5 MB
// at the start of every program that linked chroma, used or not. Call one
// of the functions below (Get, Names, ...) before reading it directly.
var GlobalLexerRegistry = chroma.NewLexerRegistry()

var (
	loadOnce sync.Once
	// initialised is set by this package's init function, which runs after
	// every package-level variable: until then Register only records the
	// lexers this package defines in Go, in the order of their variables.
	initialised bool
	builtins    []chroma.Lexer
	// afterLoad are this package's changes to embedded lexers (analysers),
	// made once they are registered; they use GlobalLexerRegistry itself,
	// since registry would wait for the sync.Once that runs them.
	afterLoad []func()
)

func init() { // nolint: gochecknoinits
	initialised = true
}

// registry is GlobalLexerRegistry filled as package init used to fill it:
// the embedded lexers in path order, then the Go-defined ones, then the
// analysers set on embedded lexers.
func registry() *chroma.LexerRegistry {
	loadOnce.Do(func() {
		paths, err := fs.Glob(embedded, "embedded/*.xml")
		if err != nil {
			panic(err)
		}
		for _, path := range paths {
			GlobalLexerRegistry.Register(chroma.MustNewXMLLexer(embedded, path))
		}
		for _, lexer := range builtins {
			GlobalLexerRegistry.Register(lexer)
		}
		builtins = nil
		for _, f := range afterLoad {
			f()
		}
		afterLoad = nil
	})
	return GlobalLexerRegistry
}

// Names of all lexers, optionally including aliases.
func Names(withAliases bool) []string {
	return registry().Names(withAliases)
}

// Aliases of all the lexers, and skip those lexers who do not have any aliases,
// or show their name instead
func Aliases(skipWithoutAliases bool) []string {
	return registry().Aliases(skipWithoutAliases)
}

// Get a Lexer by name, alias or file extension.
//
// Note that this if there isn't an exact match on name or alias, this will
// call Match(), so it is not efficient.
func Get(name string) chroma.Lexer {
	return registry().Get(name)
}

// MatchMimeType attempts to find a lexer for the given MIME type.
func MatchMimeType(mimeType string) chroma.Lexer {
	return registry().MatchMimeType(mimeType)
}

// Match returns the first lexer matching filename.
//
// Note that this iterates over all file patterns in all lexers, so it's not
// particularly efficient.
func Match(filename string) chroma.Lexer {
	return registry().Match(filename)
}

// Register a Lexer with the global registry.
func Register(lexer chroma.Lexer) chroma.Lexer {
	if !initialised {
		builtins = append(builtins, lexer)
		return lexer
	}
	return registry().Register(lexer)
}

// Analyse text content and return the "best" lexer..
func Analyse(text string) chroma.Lexer {
	return registry().Analyse(text)
}

// PlaintextRules is used for the fallback lexer as well as the explicit
// plaintext lexer.
func PlaintextRules() chroma.Rules {
	return chroma.Rules{
		"root": []chroma.Rule{
			{`.+`, chroma.Text, nil},
			{`\n`, chroma.Text, nil},
		},
	}
}

// Fallback lexer if no other is found.
var Fallback chroma.Lexer = chroma.MustNewLexer(&chroma.Config{
	Name:      "fallback",
	Filenames: []string{"*"},
	Priority:  -1,
}, PlaintextRules)
