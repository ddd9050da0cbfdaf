package webfetch

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestDeepNestingComesAsTextAtOnce: 400,000 nested <div>s (2 MB, the
// page that kept the converter's parser busy for many minutes) come back
// as text within seconds, saying why.
func TestDeepNestingComesAsTextAtOnce(t *testing.T) {
	t.Parallel()
	at, _ := url.Parse("http://example.org/a/")
	body := "<html><body>" + strings.Repeat("<div>", 400_000) + `deep <a href="/x">link</a> end`
	start := time.Now()
	md, plain, err := toMarkdown(context.Background(), []byte(body), "text/html", at)
	// Well under a second on its own; the bound is loose for the race
	// detector on a busy machine, and still far below the minutes of the
	// quadratic parse.
	took := time.Since(start)
	t.Logf("the nested page took %v", took)
	if took > 30*time.Second {
		t.Errorf("the nested page took %v", took)
	}
	if err != nil || !strings.Contains(plain, "nested too deeply") {
		t.Fatalf("plain = %q, err = %v; want it to say the page was too deeply nested", plain, err)
	}
	if !strings.Contains(md, "deep [link](http://example.org/x) end") {
		t.Errorf("text = %q", md)
	}
}

// TestStrayEndTagsDoNotHideNesting: the parser ignores an end tag with
// no open element of its name, so the measure must too.
func TestStrayEndTagsDoNotHideNesting(t *testing.T) {
	t.Parallel()
	if d := measureHTML(strings.Repeat("<div></span>", 1000)).depth; d != 1000 {
		t.Errorf("depth = %d, want 1000", d)
	}
	if d := measureHTML(strings.Repeat("<div><p><span>x</span></div>", 1000)).depth; d != 2 {
		t.Errorf("depth of a flat page = %d, want 2", d)
	}
	if d := measureHTML("<ul><li>a<li>b<ul><li>c</ul></ul><p>x<p>y<br><img>").depth; d != 2 {
		t.Errorf("depth of lists = %d, want 2", d)
	}
}

// TestNormalPageStillMarkdown: a page of ordinary shape is converted as
// before, with nothing said about text.
func TestNormalPageStillMarkdown(t *testing.T) {
	t.Parallel()
	at, _ := url.Parse("http://example.org/")
	md, plain, err := toMarkdown(context.Background(), []byte(page), "text/html", at)
	if err != nil || plain != "" {
		t.Fatalf("plain = %q, err = %v", plain, err)
	}
	for _, want := range []string{"# Install", "[the guide](http://example.org/docs/start)", "- one"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestTextFallback: the linear extraction keeps words, lines and links,
// and drops scripts and styles.
func TestTextFallback(t *testing.T) {
	t.Parallel()
	at, _ := url.Parse("https://example.org/d/")
	got := htmlToText(`<title>T</title><script>steal()</script><style>p{}</style><h1>Install</h1>
<p>Read  <a href="start">the   guide</a> <a href="javascript:x()">now</a>.</p><ul><li>one<li>two</ul>`, at)
	want := "T\nInstall\nRead [the guide](https://example.org/d/start) now.\none\ntwo\n"
	if got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
}

// TestConversionStopsWithContext: a cancelled context makes the call
// return at once with its error, even for a page slow to convert.
func TestConversionStopsWithContext(t *testing.T) {
	t.Parallel()
	at, _ := url.Parse("http://example.org/")
	// Nested quotes within the bounds, slow for the converter.
	body := strings.Repeat(strings.Repeat("<blockquote>x\n", 250)+strings.Repeat("</blockquote>", 250), 30)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, _, err := toMarkdown(ctx, []byte(body), "text/html", at)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("returned %v after the start, want soon after the cancel", took)
	}
}
