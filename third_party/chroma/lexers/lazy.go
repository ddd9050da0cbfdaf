package lexers

import (
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// lazyLexer is a lexer built on first use (PATCH, ralph): the lexers this
// package defines in Go from embedded definitions with large word tables
// (Common Lisp, Emacs Lisp, Go templates) were built in package init, at
// the start of every program that linked chroma.
type lazyLexer struct {
	build func() chroma.Lexer
	once  sync.Once
	lexer chroma.Lexer
}

func lazy(build func() chroma.Lexer) chroma.Lexer { return &lazyLexer{build: build} }

func (l *lazyLexer) get() chroma.Lexer {
	l.once.Do(func() { l.lexer = l.build() })
	return l.lexer
}

func (l *lazyLexer) Config() *chroma.Config { return l.get().Config() }

func (l *lazyLexer) Tokenise(options *chroma.TokeniseOptions, text string) (chroma.Iterator, error) {
	return l.get().Tokenise(options, text)
}

func (l *lazyLexer) SetRegistry(registry *chroma.LexerRegistry) chroma.Lexer {
	l.get().SetRegistry(registry)
	return l
}

func (l *lazyLexer) SetAnalyser(analyser func(text string) float32) chroma.Lexer {
	l.get().SetAnalyser(analyser)
	return l
}

func (l *lazyLexer) AnalyseText(text string) float32 { return l.get().AnalyseText(text) }
