package browser

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPageRecordsWhatItDid: the harness sees what a hostile page does —
// an alert (dismissed, so the page goes on), a console error, a request
// to another host — and drives a page: a click changes its text, its
// HttpOnly cookie is read through the browser, its screenshot is a PNG;
// a second tab is a page of its own in the same browser.
func TestPageRecordsWhatItDid(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "token", Value: "t0k", HttpOnly: true, SameSite: http.SameSiteStrictMode, Path: "/"})
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>t</title>
<p id=out>before</p><button id=go onclick="document.getElementById('out').textContent='clicked'">go</button>
<script>alert('hello'); console.error('boom');
const img = new Image(); img.onerror = () => { document.getElementById('out').dataset.after = '1'; };
img.src = 'http://attacker.invalid/steal';</script>`)
	}))
	t.Cleanup(srv.Close)
	page := Open(t, srv.URL+"/")
	// The image's failure comes after its request, so the request is on
	// record once the page has seen it fail.
	page.WaitJS(`document.getElementById('out').dataset.after === '1'`, 10*time.Second)
	page.Click("#go")
	page.WaitText("#out", "clicked", 10*time.Second)
	if got := page.Text("#out"); got != "clicked" {
		t.Errorf("text after the click: %q", got)
	}
	if d := page.Dialogs(); len(d) != 1 || d[0].Type != "alert" || d[0].Message != "hello" {
		t.Errorf("dialogs: %+v", d)
	}
	if errs := page.ConsoleErrors(); len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), "boom") {
		t.Errorf("console errors: %q", errs)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	if out := page.RequestsOutside(host); len(out) != 1 || out[0] != "http://attacker.invalid/steal" {
		t.Errorf("requests outside %s: %q (all: %q)", host, out, page.Requests())
	}
	cookies := page.Cookies()
	if len(cookies) != 1 || cookies[0].Name != "token" || !cookies[0].HTTPOnly || string(cookies[0].SameSite) != "Strict" {
		t.Errorf("cookies: %+v", cookies)
	}
	if v := page.Eval(`document.cookie`); v != "" {
		t.Errorf("an HttpOnly cookie is readable from script: %q", v)
	}
	// A second tab of the same browser records its own doings and shares
	// the first one's cookies.
	tab := page.OpenTab(srv.URL + "/")
	tab.WaitJS(`document.getElementById('out').dataset.after === '1'`, 10*time.Second)
	if d, d0 := tab.Dialogs(), page.Dialogs(); len(d) != 1 || len(d0) != 1 {
		t.Errorf("dialogs: the tab's %+v, the first page's %+v; want one each", d, d0)
	}
	if c := tab.Cookies(); len(c) != 1 || c[0].Value != "t0k" {
		t.Errorf("the tab's cookies: %+v", c)
	}
	if got := tab.Text("#out"); got != "before" {
		t.Errorf("the tab's text: %q, want its own page's", got)
	}
	// What could run script is listed, and only what is allowed is not.
	page.Eval(`(() => { const i = document.createElement('img'); i.setAttribute('onerror', 'x()'); document.body.appendChild(i); const a = document.createElement('a'); a.href = 'javascript:x()'; document.body.appendChild(a); return true; })()`)
	allowed := strings.Join(page.ScriptCapable("img"), "\n")
	if !strings.Contains(allowed, "IMG onerror=x()") || !strings.Contains(allowed, "A href=javascript:x()") || strings.Contains(allowed, "<img") {
		t.Errorf("script-capable with img allowed:\n%s\nwant the onerror attribute and the javascript: link, and no img element", allowed)
	}
	if all := strings.Join(page.ScriptCapable(""), "\n"); !strings.Contains(all, `<img onerror="x()">`) {
		t.Errorf("script-capable, nothing allowed:\n%s\nwant the img element too", all)
	}
	shot := filepath.Join(t.TempDir(), "shot.png")
	page.Screenshot(shot)
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(data)); err != nil {
		t.Errorf("the screenshot is not a PNG: %v", err)
	}
}
