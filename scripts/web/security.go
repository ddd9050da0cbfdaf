package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// cookieName holds the token once the browser has come with it in the
// printed URL.
const cookieName = "ralph_token"

// csrfField is the form field (or X-CSRF-Token header) a POST carries.
const csrfField = "csrf"

// newToken is 32 random bytes in hex: what every request must show.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make the web token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// equal compares two secrets in constant time, so a guess learns nothing
// from how long the answer took.
func equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// csrfFor is the CSRF token of the pages served to the holder of token:
// derived from the session cookie's value, so a page of another session
// (or another server) has a token that does not pass here, and nothing
// needs to be stored.
func csrfFor(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("ralph web csrf"))
	return hex.EncodeToString(m.Sum(nil))
}

// guard holds what the security middleware checks against.
type guard struct {
	token string
	// hosts are the Host headers a request may carry: the names and
	// addresses of the loopback interface the server listens on. Empty
	// (a server allowed to be remote) accepts any: the token still
	// guards it.
	hosts map[string]bool
}

// loopbackHosts are the Host headers a browser sends to a server on a
// loopback addr: its address, and localhost, with the port.
func loopbackHosts(addr string) (map[string]bool, bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, false
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, false
	}
	hosts := map[string]bool{
		net.JoinHostPort(host, port):        true,
		net.JoinHostPort("localhost", port): true,
	}
	if ip == nil || ip.To4() != nil {
		hosts[net.JoinHostPort("127.0.0.1", port)] = true
	}
	if ip == nil || ip.To4() == nil {
		hosts[net.JoinHostPort("::1", port)] = true
	}
	return hosts, true
}

// IsLoopback reports whether addr (host:port) listens on the loopback
// interface only.
func IsLoopback(addr string) bool {
	_, ok := loopbackHosts(addr)
	return ok
}

// wrap puts the security rules in front of h, in the order that keeps
// the cheapest refusal first: the Host (DNS rebinding), the token (401),
// then, for a state-changing request, the method, the Origin (which must
// be there, and be this server) and the CSRF token (403). No CORS header
// is ever set, so no other origin may read a reply.
func (g guard) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		// The pages load nothing from elsewhere and run no inline
		// script: a string of the model's that got through as markup
		// would still do nothing.
		hd.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		// No address of these pages goes to another site; same-origin
		// (not no-referrer) because under no-referrer a browser sends
		// "Origin: null" with the pages' own form posts, which the
		// Origin check below would refuse.
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("Cache-Control", "no-store")
		if g.hosts != nil && !g.hosts[strings.ToLower(r.Host)] {
			http.Error(w, "this server answers only to the address it listens on", http.StatusForbidden)
			return
		}
		if q := r.URL.Query().Get("token"); q != "" {
			if !equal(q, g.token) {
				http.Error(w, "wrong token", http.StatusUnauthorized)
				return
			}
			// The token moves into a cookie and out of the address bar
			// (and so out of the history and any screenshot).
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: g.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			u := *r.URL
			v := u.Query()
			v.Del("token")
			u.RawQuery = v.Encode()
			// One leading slash: "//host" would send the browser to another
			// server.
			to := url.URL{Path: "/" + strings.TrimLeft(u.Path, "/"), RawQuery: u.RawQuery}
			http.Redirect(w, r, to.String(), http.StatusSeeOther)
			return
		}
		c, err := r.Cookie(cookieName)
		if err != nil || !equal(c.Value, g.token) {
			http.Error(w, "a token is required: open the address ralph serve printed", http.StatusUnauthorized)
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodPost:
			// Every browser of today sends Origin with a POST; one that
			// comes without it is not a page of this server's, and is
			// refused rather than trusted on the CSRF token alone.
			if o := r.Header.Get("Origin"); o == "" || !sameOrigin(o, r.Host) {
				http.Error(w, "cross-origin request refused: a POST must come from this server's own pages", http.StatusForbidden)
				return
			}
			got := r.Header.Get("X-CSRF-Token")
			if got == "" {
				got = r.PostFormValue(csrfField)
			}
			if got == "" || !equal(got, csrfFor(g.token)) {
				http.Error(w, "missing or wrong CSRF token", http.StatusForbidden)
				return
			}
		default:
			w.Header().Set("Allow", "GET, HEAD, POST")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether an Origin header names this server as the
// browser reached it.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, host)
}
