package browser

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Relay is a TCP relay between the browser and a server under test, so a
// test can cut the connections the page has open. Chromium's offline
// emulation only fails requests that start while offline: an event
// stream that is already flowing keeps flowing, so the cut must happen
// on the wire.
type Relay struct {
	// URL is the server's URL with the relay's address in place of the
	// server's: open the page there.
	URL string

	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

// NewRelay relays a loopback port to the server at serverURL (http://
// host:port) until the test ends.
func NewRelay(t testing.TB, serverURL string) *Relay {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatalf("relay to %s: %v", serverURL, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("relay: %v", err)
	}
	r := &Relay{ln: ln, target: u.Host, conns: map[net.Conn]bool{}}
	u.Host = ln.Addr().String()
	r.URL = u.String()
	r.wg.Add(1)
	go r.accept()
	t.Cleanup(func() {
		ln.Close()
		r.Drop()
		r.wg.Wait()
	})
	return r
}

func (r *Relay) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", r.target)
		if err != nil {
			c.Close()
			continue
		}
		r.mu.Lock()
		r.conns[c], r.conns[s] = true, true
		r.mu.Unlock()
		r.wg.Add(2)
		go r.pipe(c, s)
		go r.pipe(s, c)
	}
}

// pipe copies one direction; when either side ends, both close.
func (r *Relay) pipe(dst, src net.Conn) {
	defer r.wg.Done()
	// A copy ends when either side closes, which is how every relayed
	// connection ends, so its error says nothing.
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
	r.mu.Lock()
	delete(r.conns, dst)
	delete(r.conns, src)
	r.mu.Unlock()
}

// Drop closes every connection open through the relay; new ones are
// still relayed.
func (r *Relay) Drop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for c := range r.conns {
		c.Close()
	}
}
