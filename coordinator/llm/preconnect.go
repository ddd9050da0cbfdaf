package llm

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// A one-shot knows its endpoint long before it sends anything to it: the
// lock, recovery and the session record come first, and they wait for the
// disk. Preconnect opens the TCP connection meanwhile, so the request
// finds it ready: a fraction of a millisecond on a loopback server, a
// round trip to a remote one. The transport (defaultTransport) takes the
// connection the first time it dials that address.

// preconnMaxAge is how old a connection opened ahead may be and still be
// used: a server may close a connection that sends nothing for long.
var preconnMaxAge = time.Second

var preconn struct {
	mu   sync.Mutex
	addr string
	at   time.Time
	done chan struct{} // closed when the dial is over
	conn net.Conn      // nil if the dial failed or the connection was taken
}

// dial is the standard transport's own dial, which defaultTransport
// wraps (its copy of the standard transport keeps the same dial).
var dial = http.DefaultTransport.(*http.Transport).DialContext

// Preconnect starts opening a connection to baseURL's host on a goroutine
// of its own and returns at once. Through a proxy, which the transport
// would dial instead, it does nothing.
func Preconnect(baseURL string) {
	preconnectVia(baseURL, defaultTransport().(*http.Transport).Proxy)
}

// preconnectVia is Preconnect with the transport's choice of proxy.
func preconnectVia(baseURL string, proxy func(*http.Request) (*url.URL, error)) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return
	}
	if proxy != nil {
		if p, err := proxy(&http.Request{URL: u}); err != nil || p != nil {
			return
		}
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	done := make(chan struct{})
	preconn.mu.Lock()
	if preconn.done != nil {
		preconn.mu.Unlock()
		return
	}
	preconn.addr, preconn.at, preconn.done = addr, time.Now(), done
	preconn.mu.Unlock()
	go func() {
		defer close(done)
		c, err := dial(context.Background(), "tcp", addr)
		if err != nil {
			return
		}
		preconn.mu.Lock()
		preconn.conn = c
		preconn.mu.Unlock()
	}()
}

// takePreconnected returns the connection opened ahead to addr, waiting
// for its dial if it is under way, or nil. It is handed out once; one too
// old is closed.
func takePreconnected(ctx context.Context, addr string) net.Conn {
	preconn.mu.Lock()
	done, ok := preconn.done, preconn.addr == addr
	preconn.mu.Unlock()
	if done == nil || !ok {
		return nil
	}
	select {
	case <-done:
	case <-ctx.Done():
		return nil
	}
	preconn.mu.Lock()
	c, at := preconn.conn, preconn.at
	preconn.conn, preconn.addr = nil, ""
	preconn.mu.Unlock()
	if c != nil && time.Since(at) > preconnMaxAge {
		_ = c.Close()
		return nil
	}
	return c
}

// dialContext is the transport's dial: the connection opened ahead when
// there is one for addr, a new one otherwise.
func dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if network == "tcp" {
		if c := takePreconnected(ctx, addr); c != nil {
			return c, nil
		}
	}
	return dial(ctx, network, addr)
}
