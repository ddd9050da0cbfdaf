package mcpserve

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configure the streamable HTTP transport.
type HTTPOptions struct {
	// Addr is where to listen, HOST:PORT (port 0: any free one).
	Addr string
	// AllowRemote lets Addr be other than a loopback address.
	AllowRemote bool
	// Token is the bearer token every request must carry; empty: a
	// random one, printed to Stderr.
	Token string
	// Stderr is told where the server listens and its token.
	Stderr io.Writer
}

// UsageError is an option the server cannot serve with (exit 2).
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

func usageErrorf(format string, a ...any) error { return &UsageError{msg: fmt.Sprintf(format, a...)} }

// MinTokenLength is the shortest token a person may choose: a token is
// all that stands between the network and an agent that runs commands.
const MinTokenLength = 32

// Path is where the MCP endpoint is served.
const Path = "/mcp"

// ServeHTTP serves MCP over streamable HTTP until ctx ends.
func (s *Server) ServeHTTP(ctx context.Context, o HTTPOptions) error {
	if err := checkAddr(o.Addr, o.AllowRemote); err != nil {
		return err
	}
	token := o.Token
	switch {
	case token == "":
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return fmt.Errorf("making a token: %w", err)
		}
		token = hex.EncodeToString(b)
	case len(token) < MinTokenLength:
		return usageErrorf("$RALPH_MCP_TOKEN must be at least %d characters: a token is all that guards an agent that runs commands", MinTokenLength)
	}
	l, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return usageErrorf("cannot listen on %s: %v", o.Addr, err)
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, nil)
	mux := http.NewServeMux()
	mux.Handle(Path, guard(handler, token, o.AllowRemote))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if o.Stderr != nil {
		fmt.Fprintf(o.Stderr, "ralph mcp serve: listening on http://%s%s\n", l.Addr(), Path)
		if o.Token == "" {
			fmt.Fprintf(o.Stderr, "ralph mcp serve: every request needs the header Authorization: Bearer %s\n", token)
		}
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return fmt.Errorf("serving MCP on %s: %w", l.Addr(), err)
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		return nil
	}
}

// checkAddr refuses an address that is not loopback unless remote use
// was asked for: an address left empty or 0.0.0.0 listens on every
// network the machine is on.
func checkAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErrorf("--addr takes HOST:PORT, such as 127.0.0.1:8765, not %q", addr)
	}
	if allowRemote || loopbackHost(host) {
		return nil
	}
	return usageErrorf("--addr %s is not a loopback address: ralph mcp serve listens on 127.0.0.1, ::1 or localhost unless --allow-remote is given", addr)
}

// loopbackHost says a host name or address stays on this machine.
func loopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// guard lets through only requests that carry the token, and, unless
// remote use was asked for, name a loopback host: a web page whose name
// was rebound to 127.0.0.1 (DNS rebinding) sends its own name as Host and
// is refused before the token is even looked at. A request from a
// browser page of another origin is refused too, and no CORS header is
// ever sent, so no page can read a reply.
func guard(next http.Handler, token string, allowRemote bool) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if !allowRemote && !loopbackHost(host) {
			http.Error(w, fmt.Sprintf("Forbidden: Host %q is not a loopback name", r.Host), http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(origin, r.Host) {
			http.Error(w, "Forbidden: cross-origin requests are not served", http.StatusForbidden)
			return
		}
		given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		// Hashing both sides first makes the comparison's time
		// independent of the token's length as well as of its bytes.
		got := sha256.Sum256([]byte(strings.TrimSpace(given)))
		if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ralph"`)
			http.Error(w, "Unauthorized: send Authorization: Bearer <the token ralph mcp serve printed>", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin says an Origin header names the server itself (http or
// https, the same host and port as the Host header).
func sameOrigin(origin, host string) bool {
	rest, ok := strings.CutPrefix(origin, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(origin, "https://")
	}
	return ok && strings.EqualFold(rest, host)
}
