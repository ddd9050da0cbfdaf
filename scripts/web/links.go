package web

import (
	"html"
	"net/url"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// safeLinks is the markdown transformer that keeps the model's answers
// from linking anywhere but the web: goldmark's own check of a link's
// address looks at it before character references are resolved, so
// `&#106;avascript:` and `javascript&colon;` passed it, and an autolink
// `<javascript:…>` is not checked at all. Here every address is judged as
// the browser will read it (references resolved, as goldmark writes the
// href, and percent-escapes decoded too), and only http, https, mailto
// and addresses without a scheme (a path, a query or a fragment on this
// server, whose GET requests change nothing) stay links. A link to
// anything else keeps its text and loses the link; an autolink becomes its
// text. Images are never shown: one from another site would tell it when
// the page is read, and ralph serves no images of its own at addresses a
// model could name; an image becomes its alt text.
type safeLinks struct{}

// allowedSchemes are the schemes a link in an answer may have.
var allowedSchemes = map[string]bool{"http": true, "https": true, "mailto": true}

// Transform rewrites doc's links, autolinks and images as safeLinks says.
func (safeLinks) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	source := reader.Source()
	var unwrap []ast.Node
	var texts []*ast.AutoLink
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			if !allowedURL(n.Destination) {
				unwrap = append(unwrap, n)
			}
		case *ast.Image:
			unwrap = append(unwrap, n)
		case *ast.AutoLink:
			if n.AutoLinkType == ast.AutoLinkURL && !allowedURL(n.URL(source)) {
				texts = append(texts, n)
			}
		}
		return ast.WalkContinue, nil
	})
	// Outermost first, as the walk found them: an image inside a refused
	// link moves out with the link's text and is unwrapped in turn.
	for _, n := range unwrap {
		parent := n.Parent()
		for c := n.FirstChild(); c != nil; {
			next := c.NextSibling()
			parent.InsertBefore(parent, n, c)
			c = next
		}
		parent.RemoveChild(parent, n)
	}
	for _, n := range texts {
		n.Parent().ReplaceChild(n.Parent(), n, ast.NewString(n.Label(source)))
	}
}

// allowedURL reports whether dest, a link's address as the markdown
// gives it, is one an answer may link to: read as goldmark writes it into
// the page, and again with entities and percent-escapes decoded, it has
// no scheme or one of allowedSchemes.
func allowedURL(dest []byte) bool {
	written := string(util.URLEscape(dest, true))
	forms := []string{string(dest), written, html.UnescapeString(written)}
	if decoded, err := url.PathUnescape(html.UnescapeString(written)); err == nil {
		forms = append(forms, decoded)
	} else {
		return false // a broken escape: nothing a model needs
	}
	for _, f := range forms {
		if !allowedForm(f) {
			return false
		}
	}
	return true
}

// allowedForm judges one reading of an address as a browser parses it:
// spaces and control characters around it are ignored and tabs and line
// breaks inside removed, and a scheme is what comes before the first
// colon that precedes any slash, question mark or hash.
func allowedForm(s string) bool {
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	i := strings.IndexAny(s, ":/?#")
	if i < 0 || s[i] != ':' {
		return true // a path, a query or a fragment: this server
	}
	return allowedSchemes[strings.ToLower(s[:i])]
}
