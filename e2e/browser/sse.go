package browser

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// SSEEvent is one server-sent event as the page's EventSource saw it.
type SSEEvent struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Data string `json:"data"`
}

// SSEWatch follows an EventSource the page opened through WatchSSE.
type SSEWatch struct {
	p   *Page
	key string
}

// WatchSSE opens an EventSource on url inside the page and records each
// event it delivers with its lastEventId: unnamed events, and those of
// the named types. It is the page's own EventSource, so its reconnects
// and Last-Event-ID headers are the browser's, which is what a test of
// resumption needs.
func WatchSSE(p *Page, url string, types ...string) *SSEWatch {
	p.t.Helper()
	key := fmt.Sprintf("w%d", time.Now().UnixNano())
	all := append([]string{"message"}, types...)
	js := fmt.Sprintf(`(() => {
  const w = {events: [], opens: 0, errors: 0};
  (window.__ralphSSE = window.__ralphSSE || {})[%s] = w;
  const es = new EventSource(%s);
  w.source = es;
  es.onopen = () => { w.opens++; };
  es.onerror = () => { w.errors++; };
  for (const t of %s) {
    es.addEventListener(t, e => w.events.push({id: e.lastEventId, type: e.type, data: String(e.data)}));
  }
  return true;
})()`, quote(key), quote(url), jsonList(all))
	p.Eval(js)
	return &SSEWatch{p: p, key: key}
}

// ref is the expression of the watch's record in the page.
func (w *SSEWatch) ref() string { return "window.__ralphSSE[" + quote(w.key) + "]" }

// Events are the events seen so far, in order of arrival.
func (w *SSEWatch) Events() []SSEEvent {
	w.p.t.Helper()
	var out []SSEEvent
	w.p.EvalInto(w.ref()+".events", &out)
	return out
}

// IDs are the lastEventIds of the events seen so far.
func (w *SSEWatch) IDs() []string {
	var ids []string
	for _, e := range w.Events() {
		ids = append(ids, e.ID)
	}
	return ids
}

// Opens is how many times the connection has opened: 1, plus one for
// each reconnect.
func (w *SSEWatch) Opens() int {
	w.p.t.Helper()
	var n int
	w.p.EvalInto(w.ref()+".opens", &n)
	return n
}

// WaitEvents waits until at least n events have arrived.
func (w *SSEWatch) WaitEvents(n int, timeout time.Duration) {
	w.p.t.Helper()
	if err := w.p.waitTrue(fmt.Sprintf("%s.events.length >= %d", w.ref(), n), timeout); err != nil {
		w.p.t.Fatalf("wait for %d server-sent events: %v; have ids %v", n, err, w.IDs())
	}
}

// WaitOpens waits until the connection has opened n times.
func (w *SSEWatch) WaitOpens(n int, timeout time.Duration) {
	w.p.t.Helper()
	if err := w.p.waitTrue(fmt.Sprintf("%s.opens >= %d", w.ref(), n), timeout); err != nil {
		w.p.t.Fatalf("wait for the event stream to open %d times: %v (opened %d)", n, err, w.Opens())
	}
}

// WaitErrors waits until the EventSource has reported n errors: a
// dropped connection is one.
func (w *SSEWatch) WaitErrors(n int, timeout time.Duration) {
	w.p.t.Helper()
	if err := w.p.waitTrue(fmt.Sprintf("%s.errors >= %d", w.ref(), n), timeout); err != nil {
		w.p.t.Fatalf("wait for the event stream to drop: %v", err)
	}
}

// Close closes the page's EventSource.
func (w *SSEWatch) Close() {
	w.p.t.Helper()
	w.p.Eval(w.ref() + ".source.close(), true")
}

// DropConnections drops the page's connections to the server behind
// relay (a Relay or a Proxy) the way a flaky network does: the page goes
// offline (Chromium's network emulation, so reconnecting fails), every
// connection through the relay is cut, whileOffline runs (a test makes the server emit what
// the page must catch up on; it may be nil), and the page comes back
// online.
func (p *Page) DropConnections(relay Dropper, whileOffline func()) {
	p.t.Helper()
	p.setOffline(true)
	relay.Drop()
	if whileOffline != nil {
		whileOffline()
	}
	p.setOffline(false)
}

func (p *Page) setOffline(offline bool) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, CallTimeout)
	defer cancel()
	if _, err := chromedp.Call(ctx, emulateNetworkConditions, networkConditions{
		Offline: offline, DownloadThroughput: -1, UploadThroughput: -1}); err != nil {
		p.t.Fatalf("network offline=%v: %v", offline, err)
	}
}

// emulateNetworkConditions is the DevTools command that puts the page
// offline as a whole. cdproto dropped it as deprecated; its replacement,
// emulateNetworkConditionsByRule, leaves navigator.onLine true, and an
// EventSource that sees the network gone should see the page offline too.
var emulateNetworkConditions = cdp.Command[networkConditions, cdp.Empty]{Method: "Network.emulateNetworkConditions"}

type networkConditions struct {
	Offline            bool    `json:"offline"`
	Latency            float64 `json:"latency"`
	DownloadThroughput float64 `json:"downloadThroughput"`
	UploadThroughput   float64 `json:"uploadThroughput"`
}

// jsonList is a JavaScript array literal of strings.
func jsonList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ",") + "]"
}
