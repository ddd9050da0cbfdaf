package webfetch

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
)

// toMarkdown turns a body of media type ctype into markdown: HTML through
// html-to-markdown (headings, lists, links, tables, code; scripts and
// styles dropped; links made absolute against the page's URL), other text
// as it is. Anything else (an image, an archive) is refused: the model
// cannot read it as text.
func toMarkdown(ctx context.Context, body []byte, ctype string, at *url.URL) (string, error) {
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	switch {
	case ctype == "text/html" || ctype == "application/xhtml+xml":
		domain := at.Scheme + "://" + at.Host
		md, err := htmltomarkdown.ConvertString(text, converter.WithContext(ctx), converter.WithDomain(domain))
		if err != nil {
			return "", fmt.Errorf("converting the page to markdown: %w", err)
		}
		return md, nil
	case strings.HasPrefix(ctype, "text/"), ctype == "application/json", ctype == "application/xml",
		strings.HasSuffix(ctype, "+json"), strings.HasSuffix(ctype, "+xml"):
		return text, nil
	}
	return "", fmt.Errorf("%w: the page is %s, which web_fetch cannot show as text", ErrNotText, ctype)
}
