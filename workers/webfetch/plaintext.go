package webfetch

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlShape is what one pass of the tokenizer tells about a page: how
// deep its elements nest and how many tokens it has.
type htmlShape struct {
	depth, tokens int
}

// measureHTML finds a page's greatest nesting in time linear in its
// size. It keeps the open elements as the parser would, roughly: void
// elements and those whose end tag may be left out (p, li, td...) are not
// counted, since the parser closes them by itself and real pages leave
// them open; an end tag closes up to the innermost open element of its
// name and is ignored when none is open, as the parser ignores it (else
// a page could hide its nesting behind stray end tags). The per-name
// counts spare a search of the stack, so each element is pushed and
// popped once.
func measureHTML(text string) htmlShape {
	var (
		shape htmlShape
		stack []string
		open  = map[string]int{}
		z     = html.NewTokenizer(strings.NewReader(text))
	)
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return shape
		}
		shape.tokens++
		switch tt {
		case html.StartTagToken:
			name, _ := z.TagName()
			if !nests(atom.Lookup(name)) {
				continue
			}
			stack = append(stack, string(name))
			open[string(name)]++
			shape.depth = max(shape.depth, len(stack))
		case html.EndTagToken:
			name, _ := z.TagName()
			if open[string(name)] == 0 {
				continue
			}
			for {
				top := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				open[top]--
				if top == string(name) {
					break
				}
			}
		}
	}
}

// nests says whether an element opens a level that only its end tag
// (or an ancestor's) closes.
func nests(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input, atom.Link,
		atom.Meta, atom.Param, atom.Source, atom.Track, atom.Wbr, atom.Keygen,
		atom.Html, atom.Head, atom.Body,
		atom.P, atom.Li, atom.Dt, atom.Dd, atom.Option, atom.Optgroup, atom.Tr, atom.Td, atom.Th,
		atom.Thead, atom.Tbody, atom.Tfoot, atom.Colgroup, atom.Caption, atom.Rb, atom.Rt, atom.Rp, atom.Rtc:
		return false
	}
	return true
}

// htmlToText is a page as plain text, taken in one linear pass of the
// tokenizer, for a page the converter cannot be trusted with: text with
// its runs of white space made one space, block elements as line breaks,
// scripts, styles and templates dropped, and http(s) links kept as
// [text](absolute URL).
func htmlToText(text string, at *url.URL) string {
	var (
		b     strings.Builder
		skip  int    // depth inside elements whose text is not shown
		href  string // the open link's URL, if any
		space bool   // white space is owed before the next word
	)
	newline := func() {
		if s := b.String(); s != "" && !strings.HasSuffix(s, "\n") {
			b.WriteByte('\n')
		}
		space = false
	}
	word := func(s string) {
		if space && b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte(' ')
		}
		b.WriteString(s)
		space = false
	}
	closeLink := func() {
		if href != "" {
			b.WriteString("](" + href + ")")
			href = ""
		}
	}
	z := html.NewTokenizer(strings.NewReader(text))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			closeLink()
			return strings.TrimSpace(b.String()) + "\n"
		}
		tok := z.Token()
		switch tt {
		case html.TextToken:
			if skip > 0 {
				continue
			}
			if t := tok.Data; t != "" {
				lead := strings.TrimLeft(t, " \t\r\n\f")
				space = space || len(lead) < len(t)
				if f := strings.Fields(t); len(f) > 0 {
					word(strings.Join(f, " "))
				}
				space = space || strings.TrimRight(t, " \t\r\n\f") != t
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			switch {
			case hidden(tok.DataAtom):
				if tt == html.StartTagToken {
					skip++
				}
			case skip > 0:
			case tok.DataAtom == atom.A:
				closeLink()
				if u := linkURL(tok, at); u != "" {
					word("[")
					href = u
				}
			case block(tok.DataAtom):
				closeLink()
				newline()
			}
		case html.EndTagToken:
			switch {
			case hidden(tok.DataAtom):
				skip = max(skip-1, 0)
			case skip > 0:
			case tok.DataAtom == atom.A:
				closeLink()
			case block(tok.DataAtom):
				closeLink()
				newline()
			}
		}
	}
}

// linkURL is an <a>'s href made absolute against the page, when it is
// an http or https URL.
func linkURL(tok html.Token, at *url.URL) string {
	for _, a := range tok.Attr {
		if a.Key != "href" {
			continue
		}
		u, err := at.Parse(strings.TrimSpace(a.Val))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return ""
		}
		return u.String()
	}
	return ""
}

// hidden says whether an element's text is not shown on the page.
func hidden(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template:
		return true
	}
	return false
}

// block says whether an element starts a line of its own.
func block(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Br, atom.Dd, atom.Details, atom.Div, atom.Dl,
		atom.Dt, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form, atom.H1, atom.H2, atom.H3,
		atom.H4, atom.H5, atom.H6, atom.Header, atom.Hr, atom.Li, atom.Main, atom.Nav, atom.Ol, atom.P, atom.Pre,
		atom.Section, atom.Summary, atom.Table, atom.Tr, atom.Td, atom.Th, atom.Ul, atom.Title:
		return true
	}
	return false
}
