package lexers

import (
	"github.com/alecthomas/chroma/v2"
)

// HTML lexer.
//
// It is built on first use (PATCH, ralph): parsing html.xml in package
// init cost every start of a program that linked chroma ~0.1 ms. Its type
// is chroma.Lexer, not *chroma.RegexLexer; the lexers that delegate to it
// (PHP, Svelte, the Go HTML template) take a chroma.Lexer.
var HTML = lazy(func() chroma.Lexer { return chroma.MustNewXMLLexer(embedded, "embedded/html.xml") })
