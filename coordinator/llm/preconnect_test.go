package llm

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"
)

// resetPreconn forgets any connection opened ahead by an earlier test.
func resetPreconn(t *testing.T) {
	t.Helper()
	preconn.mu.Lock()
	if preconn.conn != nil {
		_ = preconn.conn.Close()
	}
	preconn.addr, preconn.done, preconn.conn = "", nil, nil
	preconn.mu.Unlock()
}

// connServer counts the connections it accepts.
func connServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &n
}

func get(t *testing.T, url string) {
	t.Helper()
	resp, err := (&http.Client{Transport: defaultTransport()}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// TestPreconnectedConnectionIsUsed: the connection opened ahead carries
// the first request; no second one is made.
func TestPreconnectedConnectionIsUsed(t *testing.T) {
	resetPreconn(t)
	t.Cleanup(func() { resetPreconn(t) })
	srv, conns := connServer(t)
	Preconnect(srv.URL + "/v1")
	deadline := time.Now().Add(5 * time.Second)
	for conns.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if conns.Load() != 1 {
		t.Fatalf("the server saw %d connections before any request, want 1", conns.Load())
	}
	get(t, srv.URL+"/v1/x")
	if n := conns.Load(); n != 1 {
		t.Fatalf("the server saw %d connections, want the one opened ahead", n)
	}
}

// TestStalePreconnectionIsNotUsed: a connection opened ahead and left
// unused for too long is closed, and the request dials afresh.
func TestStalePreconnectionIsNotUsed(t *testing.T) {
	resetPreconn(t)
	t.Cleanup(func() { resetPreconn(t) })
	old := preconnMaxAge
	preconnMaxAge = 0
	t.Cleanup(func() { preconnMaxAge = old })
	srv, conns := connServer(t)
	Preconnect(srv.URL)
	time.Sleep(10 * time.Millisecond)
	get(t, srv.URL+"/x")
	if n := conns.Load(); n != 2 {
		t.Fatalf("the server saw %d connections, want 2 (the stale one and a new one)", n)
	}
}

// TestPreconnectThroughAProxyDoesNothing: the transport would dial the
// proxy, not the endpoint, so nothing is opened ahead.
func TestPreconnectThroughAProxyDoesNothing(t *testing.T) {
	resetPreconn(t)
	t.Cleanup(func() { resetPreconn(t) })
	srv, conns := connServer(t)
	proxy, _ := url.Parse("http://127.0.0.1:1")
	preconnectVia(srv.URL, http.ProxyURL(proxy))
	time.Sleep(10 * time.Millisecond)
	if conns.Load() != 0 || preconn.done != nil {
		t.Fatalf("opened ahead through a proxy")
	}
}
