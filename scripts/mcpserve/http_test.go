package mcpserve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheckAddr(t *testing.T) {
	for _, c := range []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:0", false, true},
		{"[::1]:8765", false, true},
		{"localhost:8765", false, true},
		{":8765", false, false},
		{"0.0.0.0:8765", false, false},
		{"192.168.1.2:8765", false, false},
		{"0.0.0.0:8765", true, true},
		{"8765", false, false},
	} {
		err := checkAddr(c.addr, c.remote)
		if (err == nil) != c.ok {
			t.Errorf("checkAddr(%q, %v) = %v, want ok %v", c.addr, c.remote, err, c.ok)
		}
	}
}

// TestGuard: a request passes only with the token, a loopback Host
// (unless remote use was asked for) and no foreign Origin.
func TestGuard(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	for _, c := range []struct {
		name, host, origin, auth string
		remote                   bool
		want                     int
	}{
		{"token", "127.0.0.1:9", "", "Bearer " + token, false, http.StatusTeapot},
		{"localhost", "localhost:9", "", "Bearer " + token, false, http.StatusTeapot},
		{"ipv6", "[::1]:9", "", "Bearer " + token, false, http.StatusTeapot},
		{"same origin", "127.0.0.1:9", "http://127.0.0.1:9", "Bearer " + token, false, http.StatusTeapot},
		{"no token", "127.0.0.1:9", "", "", false, http.StatusUnauthorized},
		{"basic", "127.0.0.1:9", "", "Basic " + token, false, http.StatusUnauthorized},
		{"prefix of the token", "127.0.0.1:9", "", "Bearer " + token[:31], false, http.StatusUnauthorized},
		{"rebound host", "attacker.example:9", "", "Bearer " + token, false, http.StatusForbidden},
		{"localhost suffix", "localhost.attacker.example", "", "Bearer " + token, false, http.StatusForbidden},
		{"foreign origin", "127.0.0.1:9", "http://attacker.example", "Bearer " + token, false, http.StatusForbidden},
		{"null origin", "127.0.0.1:9", "null", "Bearer " + token, false, http.StatusForbidden},
		{"remote host allowed", "devbox.example:9", "", "Bearer " + token, true, http.StatusTeapot},
		{"remote needs the token", "devbox.example:9", "", "", true, http.StatusUnauthorized},
	} {
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader("{}"))
		req.Host = c.host
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		w := httptest.NewRecorder()
		guard(next, token, c.remote).ServeHTTP(w, req)
		if w.Code != c.want {
			t.Errorf("%s: status %d, want %d", c.name, w.Code, c.want)
		}
		if w.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: a CORS header was sent", c.name)
		}
	}
}
