package browser

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// Dropper is what DropConnections cuts: a Relay or a Proxy.
type Dropper interface{ Drop() }

// Proxy is an HTTP reverse proxy between the browser and a server that
// checks the Host header (ralph serve refuses any Host but the address it
// listens on, against DNS rebinding): each request reaches the server
// with the server's own Host, and an Origin of the proxy's address is
// rewritten to the server's, so the page behaves as if it were opened on
// the server itself. Responses stream through unbuffered, so an event
// stream flows as it would directly. Drop cuts the browser's connections
// the way Relay's Drop does.
type Proxy struct {
	// URL is the server's URL with the proxy's address in place of the
	// server's: open the page there.
	URL string

	srv   *http.Server
	mu    sync.Mutex
	conns map[net.Conn]bool
}

// NewProxy proxies a loopback port to the server at serverURL (http://
// host:port) until the test ends.
func NewProxy(t testing.TB, serverURL string) *Proxy {
	t.Helper()
	target, err := url.Parse(serverURL)
	if err != nil {
		t.Fatalf("proxy to %s: %v", serverURL, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	self := "http://" + ln.Addr().String()
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
			if r.In.Header.Get("Origin") == self {
				r.Out.Header.Set("Origin", target.Scheme+"://"+target.Host)
			}
		},
		// Every write is passed on at once: an event stream must not
		// wait in a buffer.
		FlushInterval: -1,
		// A request cut by Drop ends with an error that says nothing.
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) },
	}
	p := &Proxy{conns: map[net.Conn]bool{}}
	p.srv = &http.Server{Handler: rp, ConnState: func(c net.Conn, s http.ConnState) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch s {
		case http.StateNew:
			p.conns[c] = true
		case http.StateClosed, http.StateHijacked:
			delete(p.conns, c)
		}
	}}
	u := *target
	u.Host = ln.Addr().String()
	p.URL = u.String()
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = p.srv.Close()
	})
	return p
}

// Drop closes every connection the browser has open to the proxy; the
// proxy's requests to the server end with them, and new connections are
// still proxied.
func (p *Proxy) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}
