// Package browser drives a real headless Chromium from Go for the
// end-to-end tests: it opens a page, waits for text, clicks, evaluates
// script, takes screenshots, and records what the page did that a test
// may need to forbid — every JavaScript dialog, console error and
// request — so a test can show that a model-written string ran nothing.
//
// It is a thin layer on chromedp (a Chrome DevTools Protocol client):
// each call has its own timeout, so a stuck page fails the test instead
// of hanging it, and everything it starts ends in t.Cleanup.
package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// CallTimeout bounds every call that does not take its own timeout. It
// is generous because the machines that run the tests are often busy,
// and a call that needs it has failed anyway.
const CallTimeout = 20 * time.Second

// StartTimeout bounds the start of a browser: Chromium's start-up is
// seconds of CPU, and in the whole suite on two busy cores it has taken
// longer than CallTimeout without being stuck.
const StartTimeout = 2 * time.Minute

// Find returns the path of an installed Chromium, or "" when there is
// none. The names are those of Debian's package and of Google's build.
func Find() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Dialog is one JavaScript dialog the page opened: alert, confirm,
// prompt or beforeunload. Every one is dismissed as it opens, so a page
// never stalls on one.
type Dialog struct {
	Type    string
	Message string
}

// Page is one tab of its own headless Chromium.
type Page struct {
	t   testing.TB
	ctx context.Context

	mu       sync.Mutex
	dialogs  []Dialog
	errs     []string
	requests []string
}

// Open starts a headless Chromium with a fresh profile, opens url in it
// and waits for the page's load event. It skips the test when no
// Chromium is installed; the CI installs Debian's chromium package, so
// there the checks always run.
func Open(t testing.TB, rawURL string) *Page {
	t.Helper()
	bin := Find()
	if bin == "" {
		t.Skip("no Chromium installed: install Debian's chromium package (the CI does) to run the browser tests")
	}
	profile := t.TempDir()
	// The flags a root user in a container needs: Chromium's sandbox
	// refuses to run as root, there is no GPU, and /dev/shm is small.
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", "new"),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1200, 1400),
		chromedp.Env("HOME=" + profile),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	return newPage(t, ctx, rawURL)
}

// OpenTab opens url in another tab of p's browser: the same profile and
// cookies, as a second window of one person would have. A test of many
// followers opens one tab each.
func (p *Page) OpenTab(rawURL string) *Page {
	p.t.Helper()
	ctx, cancel := chromedp.NewContext(p.ctx)
	p.t.Cleanup(cancel)
	return newPage(p.t, ctx, rawURL)
}

// newPage starts recording what the tab of ctx does, then opens url in it.
func newPage(t testing.TB, ctx context.Context, rawURL string) *Page {
	t.Helper()
	p := &Page{t: t, ctx: ctx}
	// The first call on a tab opens it (and the browser, for the first
	// tab) and must not carry a timeout, which would close them again, so
	// it is bounded by a watchdog instead.
	done := make(chan error, 1)
	go func() { done <- chromedp.Listen(ctx, p.record) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("start Chromium: %v", err)
		}
	case <-time.After(StartTimeout):
		t.Fatalf("start Chromium: no browser after %v", StartTimeout)
	}
	if err := p.run(CallTimeout, chromedp.Navigate(rawURL)); err != nil {
		t.Fatalf("open %s: %v", rawURL, err)
	}
	return p
}

// record keeps what the page did. It runs on the loop that reads the
// browser's messages, so it only appends; answering a dialog is a
// command and goes to its own goroutine.
func (p *Page) record(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := ev.(type) {
	case *page.EventJavascriptDialogOpening:
		p.dialogs = append(p.dialogs, Dialog{Type: string(e.Type), Message: e.Message})
		go func() {
			ctx, cancel := context.WithTimeout(p.ctx, CallTimeout)
			defer cancel()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}()
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, strings.Trim(string(a.Value), `"`))
			}
			p.errs = append(p.errs, "console."+string(e.Type)+": "+strings.Join(parts, " "))
		}
	case *runtime.EventExceptionThrown:
		msg := e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil && e.ExceptionDetails.Exception.Description != "" {
			msg += " " + e.ExceptionDetails.Exception.Description
		}
		p.errs = append(p.errs, "exception: "+msg)
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError {
			p.errs = append(p.errs, "log: "+e.Entry.Text)
		}
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, e.Request.URL)
	}
}

// run runs actions with a timeout of their own.
func (p *Page) run(timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// WaitText waits until the first element matching the CSS selector sel
// shows text containing substring, and fails the test after timeout.
func (p *Page) WaitText(sel, substring string, timeout time.Duration) {
	p.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%s); return !!e && e.innerText.includes(%s); })()`,
		quote(sel), quote(substring))
	if err := p.waitTrue(js, timeout); err != nil {
		p.t.Fatalf("wait for %q in %s: %v; the page shows:\n%.2000s", substring, sel, err, p.bodyText())
	}
}

// WaitJS waits until the expression js is true in the page, and fails
// the test after timeout.
func (p *Page) WaitJS(js string, timeout time.Duration) {
	p.t.Helper()
	if err := p.waitTrue(js, timeout); err != nil {
		p.t.Fatalf("wait for %s: %v", js, err)
	}
}

// waitTrue polls js on each animation frame (and every 20 ms when the
// page has none, as a hidden headless tab may not) until it is true.
func (p *Page) waitTrue(js string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(p.ctx, timeout+2*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](js,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	return err
}

// bodyText is what the page shows, for a failure message.
func (p *Page) bodyText() string {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	return s
}

// Click clicks the first element matching the CSS selector sel, waiting
// for it to be visible.
func (p *Page) Click(sel string) {
	p.t.Helper()
	if err := p.run(CallTimeout, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)); err != nil {
		p.t.Fatalf("click %s: %v", sel, err)
	}
}

// Text is the visible text of the first element matching the CSS
// selector sel.
func (p *Page) Text(sel string) string {
	p.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%s); return e ? e.innerText : null; })()`, quote(sel))
	var v *string
	if err := p.evalInto(js, &v); err != nil {
		p.t.Fatalf("text of %s: %v", sel, err)
	}
	if v == nil {
		p.t.Fatalf("text of %s: no such element", sel)
	}
	return *v
}

// Eval evaluates the JavaScript expression js in the page and returns
// its value as JSON decodes it (string, float64, bool, nil, []any,
// map[string]any). A promise is awaited.
func (p *Page) Eval(js string) any {
	p.t.Helper()
	var v any
	if err := p.evalInto(js, &v); err != nil {
		p.t.Fatalf("eval %s: %v", js, err)
	}
	return v
}

// EvalInto evaluates js and decodes its value into out (a pointer).
func (p *Page) EvalInto(js string, out any) {
	p.t.Helper()
	if err := p.evalInto(js, out); err != nil {
		p.t.Fatalf("eval %s: %v", js, err)
	}
}

func (p *Page) evalInto(js string, out any) error {
	ctx, cancel := context.WithTimeout(p.ctx, CallTimeout)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](js, chromedp.EvalAwaitPromise))
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	if len(raw) == 0 {
		raw = json.RawMessage("null")
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode %s: %w", raw, err)
	}
	return nil
}

// Screenshot saves a PNG of the whole page to path.
func (p *Page) Screenshot(path string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, CallTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
}

// Phone and Desktop are the sizes the tests look at a page in, in CSS
// pixels: a common phone's (390×844, a touch screen that scales by 3)
// and a laptop's window (1280×800).
var (
	Phone   = Size{Width: 390, Height: 844, Scale: 3, Mobile: true}
	Desktop = Size{Width: 1280, Height: 800, Scale: 1}
)

// Size is a screen a page is shown on.
type Size struct {
	Width, Height int64
	Scale         float64
	Mobile        bool
}

// Resize shows the page as on a screen of size s (Chromium's device
// emulation, as its developer tools do): the width media queries see,
// the viewport a phone's meta viewport sets, and the scroll widths.
func (p *Page) Resize(s Size) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, CallTimeout)
	defer cancel()
	_, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: s.Width, Height: s.Height, DeviceScaleFactor: s.Scale, Mobile: s.Mobile})
	if err != nil {
		p.t.Fatalf("resize to %d×%d: %v", s.Width, s.Height, err)
	}
	// A layout after the change, before the test measures anything.
	p.Eval(`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`)
}

// Cookies are the browser's cookies for the page's URL.
func (p *Page) Cookies() []*network.Cookie {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, CallTimeout)
	defer cancel()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		p.t.Fatalf("cookies: %v", err)
	}
	return res.Cookies
}

// Dialogs are the JavaScript dialogs the page has opened so far.
func (p *Page) Dialogs() []Dialog {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Dialog(nil), p.dialogs...)
}

// ConsoleErrors are the console errors, uncaught exceptions and
// browser-logged errors (a refused load, a CSP violation) so far.
func (p *Page) ConsoleErrors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errs...)
}

// Requests are the URLs of every request the page has made so far, the
// page itself first.
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// RequestsOutside are the requests to any host but those named (host or
// host:port), and any request of a scheme other than http, https, file
// and data: where an injected script or image would call home.
func (p *Page) RequestsOutside(hosts ...string) []string {
	var out []string
	for _, r := range p.Requests() {
		u, err := url.Parse(r)
		if err != nil {
			out = append(out, r)
			continue
		}
		switch u.Scheme {
		case "data", "file":
			continue
		case "http", "https":
			ok := false
			for _, h := range hosts {
				ok = ok || u.Host == h || u.Hostname() == h
			}
			if ok {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// quote is s as a JavaScript string literal.
func quote(s string) string {
	// Marshalling a string cannot fail.
	b, _ := json.Marshal(s)
	return string(b)
}

// ScriptCapable lists what in the page's DOM could run script: an on*
// handler attribute, a javascript: URL, or a script, img, iframe, object
// or embed element, less the elements matching the CSS selector allow
// (a page's own script; "" allows none). A page showing model-written
// text must list nothing.
func (p *Page) ScriptCapable(allow string) []string {
	p.t.Helper()
	js := fmt.Sprintf(`((allow) => {
  const out = [];
  for (const e of document.querySelectorAll('*')) {
    for (const a of e.attributes) {
      if (a.name.startsWith('on')) out.push(e.tagName + ' ' + a.name + '=' + a.value);
      if (/^\s*javascript:/i.test(a.value)) out.push(e.tagName + ' ' + a.name + '=' + a.value);
    }
  }
  for (const e of document.querySelectorAll('script, img, iframe, object, embed')) {
    if (allow === '' || !e.matches(allow)) out.push(e.outerHTML);
  }
  return out;
})(%s)`, quote(allow))
	var out []string
	if err := p.evalInto(js, &out); err != nil {
		p.t.Fatalf("script-capable elements: %v", err)
	}
	return out
}
