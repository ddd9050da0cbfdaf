package webfetch

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/ralph-dev/ralph/memory/text"
)

// The bounds of turning HTML into markdown. The converter builds the
// page's tree with golang.org/x/net/html, whose parser looks through the
// open elements on every tag: time quadratic in the nesting, so a 2 MB
// page of 400,000 nested <div>s kept it busy for many minutes. A page
// past MaxNesting (real pages rarely pass 60) or MaxTokens is therefore
// never given to it: it comes as text, taken in one linear pass.
// ConvertTimeout bounds the conversion of every other page; a page that
// takes longer also comes as text.
const (
	MaxNesting     = 256
	MaxTokens      = 300_000
	ConvertTimeout = 10 * time.Second
)

// toMarkdown turns a body of media type ctype into markdown: HTML through
// html-to-markdown (headings, lists, links, tables, code; scripts and
// styles dropped; links made absolute against the page's URL), other text
// as it is. An HTML page too deep, too long or too slow to convert comes
// as text instead, and plain says why. Anything else (an image, an
// archive) is refused: the model cannot read it as text. It returns as
// soon as ctx is done, with ctx's error, whatever the converter is doing.
func toMarkdown(ctx context.Context, body []byte, ctype string, at *url.URL) (md, plain string, err error) {
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	switch {
	case ctype == "text/html" || ctype == "application/xhtml+xml":
		return htmlToMarkdown(ctx, text, at)
	case strings.HasPrefix(ctype, "text/"), ctype == "application/json", ctype == "application/xml",
		strings.HasSuffix(ctype, "+json"), strings.HasSuffix(ctype, "+xml"):
		return text, "", nil
	}
	return "", "", fmt.Errorf("%w: the page is %s, which web_fetch cannot show as text", ErrNotText, ctype)
}

// htmlToMarkdown measures the page in one linear pass and converts it
// when its shape is safe for the converter. The conversion runs in a
// goroutine this call does not wait for past ctx or ConvertTimeout: a
// parser cannot be stopped, so the measuring is what bounds its time,
// and the deadline only keeps the call from hanging should it miss a
// case.
// tooDeep is why a page nested beyond MaxNesting comes as text.
var tooDeep = "the page is nested too deeply to convert (more than " + text.Counted(MaxNesting, "element", "elements") + " deep), so it comes as text"

func htmlToMarkdown(ctx context.Context, text string, at *url.URL) (md, plain string, err error) {
	shape := measureHTML(text)
	switch {
	case shape.depth > MaxNesting:
		return htmlToText(text, at), tooDeep, nil
	case shape.tokens > MaxTokens:
		return htmlToText(text, at), fmt.Sprintf("the page has too many tags to convert (more than %d), so it comes as text", MaxTokens), nil
	}
	cctx, cancel := context.WithTimeout(ctx, ConvertTimeout)
	defer cancel()
	type converted struct {
		md  string
		err error
	}
	done := make(chan converted, 1)
	go func() {
		md, err := htmltomarkdown.ConvertString(text, converter.WithContext(cctx), converter.WithDomain(at.Scheme+"://"+at.Host))
		done <- converted{md, err}
	}()
	select {
	case c := <-done:
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		if cctx.Err() == nil && c.err == nil {
			return c.md, "", nil
		}
		if cctx.Err() == nil {
			return "", "", fmt.Errorf("converting the page to markdown: %w", c.err)
		}
	case <-cctx.Done():
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
	}
	return htmlToText(text, at), fmt.Sprintf("converting the page took longer than %s, so it comes as text", ConvertTimeout), nil
}
