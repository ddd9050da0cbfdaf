package web

import (
	"bytes"
	"strings"
	"testing"
)

func render(t *testing.T, md string) string {
	t.Helper()
	var b bytes.Buffer
	if err := markdown().Convert([]byte(md), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Every way a model's answer could write a link to javascript:, vbscript:,
// data: or file: renders as text, with no link at all; so does every
// image, from another site or this one.
func TestAnswersLinkOnlyToTheWeb(t *testing.T) {
	for _, c := range []struct{ md, text string }{
		{"[x](&#106;avascript:alert(1))", "x"},
		{"[x](&#x6A;avascript:alert(1))", "x"},
		{"[x](javascript&colon;alert(1))", "x"},
		{"<javascript:alert(1)>", "javascript:alert(1)"},
		{"<JavaScript:alert(1)>", "JavaScript:alert(1)"},
		{"[x](JaVaScRiPt:alert(1))", "x"},
		{"[x]( javascript:alert(1))", "x"},
		{"[x](<java\tscript:alert(1)>)", "x"},
		{"[x](java%73cript:alert(1))", "x"},
		{"[x](data:text/html,<script>alert(1)</script>)", "x"},
		{"[x](data:image/png;base64,AAAA)", "x"},
		{"[x](vbscript:msgbox(1))", "x"},
		{"[x](file:///etc/passwd)", "x"},
		{"<file:///etc/passwd>", "file:///etc/passwd"},
		{"[x][r]\n\n[r]: &#106;avascript:alert(1)", "x"},
		{"![alt text](https://elsewhere.example/pixel.png)", "alt text"},
		{"![alt text](/api/pixel.png)", "alt text"},
		{"![alt text](data:image/png;base64,AAAA)", "alt text"},
		{"[![alt text](https://elsewhere.example/i.png)](javascript:alert(1))", "alt text"},
	} {
		got := render(t, c.md)
		if strings.Contains(got, "<a") || strings.Contains(got, "<img") || strings.Contains(got, "href") ||
			strings.Contains(got, "src=") || !strings.Contains(got, c.text) {
			t.Errorf("%q rendered as %q, want the text %q and no link or image", c.md, got, c.text)
		}
	}
}

// Links to the web, mail and this server stay links.
func TestAnswersKeepLinksToTheWeb(t *testing.T) {
	for _, c := range []struct{ md, href string }{
		{"[x](https://example.com/a?b=c)", "https://example.com/a?b=c"},
		{"[x](HTTP://example.com)", "HTTP://example.com"},
		{"<https://example.com>", "https://example.com"},
		{"<someone@example.com>", "mailto:someone@example.com"},
		{"[x](mailto:someone@example.com)", "mailto:someone@example.com"},
		{"[x](#top)", "#top"},
		{"[x](docs/run.md)", "docs/run.md"},
		{"[![alt](https://elsewhere.example/i.png)](https://example.com)", "https://example.com"},
	} {
		got := render(t, c.md)
		if !strings.Contains(got, `<a href="`+c.href+`"`) || strings.Contains(got, "<img") {
			t.Errorf("%q rendered as %q, want a link to %s", c.md, got, c.href)
		}
	}
}
