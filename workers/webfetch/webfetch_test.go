package webfetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestCheckAddr(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ip string
		// refused without and with web_fetch_allow_private
		refused, refusedAllowed bool
	}{
		{"127.0.0.1", true, false},
		{"127.1.2.3", true, false},
		{"::1", true, false},
		{"::ffff:127.0.0.1", true, false},
		{"::127.0.0.1", true, false},
		{"64:ff9b::7f00:1", true, false},
		{"10.1.2.3", true, false},
		{"172.16.0.1", true, false},
		{"192.168.1.1", true, false},
		{"::ffff:192.168.1.1", true, false},
		{"100.64.0.1", true, false},
		{"fd12:3456::1", true, false},
		{"fc00::1", true, false},
		{"169.254.169.254", true, true},
		{"::ffff:169.254.169.254", true, true},
		{"fd00:ec2::254", true, true},
		{"100.100.100.200", true, true},
		{"169.254.1.1", true, true},
		{"fe80::1", true, true},
		{"fe80::1%eth0", true, true},
		{"0.0.0.0", true, true},
		{"::", true, true},
		{"::ffff:0.0.0.0", true, true},
		{"224.0.0.1", true, true},
		{"ff02::1", true, true},
		{"255.255.255.255", true, true},
		{"192.0.2.2", true, true},
		{"203.0.113.9", true, true},
		{"2001:db8::1", true, true},
		{"93.184.215.14", false, false},
		{"::ffff:93.184.215.14", false, false},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", false, false},
		{"8.8.8.8", false, false},
	} {
		ip := netip.MustParseAddr(c.ip)
		if err := CheckAddr(ip, false); (err != nil) != c.refused {
			t.Errorf("CheckAddr(%s, false) = %v, want refused %v", c.ip, err, c.refused)
		} else if err != nil && !errors.Is(err, ErrAddress) {
			t.Errorf("CheckAddr(%s) = %v, not ErrAddress", c.ip, err)
		}
		if err := CheckAddr(ip, true); (err != nil) != c.refusedAllowed {
			t.Errorf("CheckAddr(%s, true) = %v, want refused %v", c.ip, err, c.refusedAllowed)
		}
	}
}

// TestOwnAddressIsRefused: a service bound to every address answers on
// the machine's own public addresses as on loopback, so those are refused
// unless the person allowed private ones. Not parallel: it stands in for
// the machine's interfaces, which the parallel tests read after it.
func TestOwnAddressIsRefused(t *testing.T) {
	real := interfaceAddrs
	defer func() { interfaceAddrs = real }()
	own := netip.MustParseAddr("93.184.215.77")
	interfaceAddrs = func() ([]net.Addr, error) {
		return []net.Addr{&net.IPNet{IP: net.ParseIP("93.184.215.77"), Mask: net.CIDRMask(24, 32)}}, nil
	}
	if err := CheckAddr(own, false); !errors.Is(err, ErrAddress) || !strings.Contains(err.Error(), "an address of this machine") {
		t.Errorf("CheckAddr(own address) = %v, want refused as this machine's", err)
	}
	if err := CheckAddr(netip.MustParseAddr("::ffff:93.184.215.77"), false); !errors.Is(err, ErrAddress) {
		t.Errorf("CheckAddr(own address, mapped) = %v, want refused", err)
	}
	if err := CheckAddr(own, true); err != nil {
		t.Errorf("CheckAddr(own address) with private allowed = %v", err)
	}
	if err := CheckAddr(netip.MustParseAddr("93.184.215.14"), false); err != nil {
		t.Errorf("CheckAddr(another public address) = %v", err)
	}
	interfaceAddrs = func() ([]net.Addr, error) { return nil, errors.New("no interfaces") }
	if err := CheckAddr(netip.MustParseAddr("93.184.215.14"), false); err == nil {
		t.Error("with the interfaces unknown, an address was let through")
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"file:///etc/passwd", "ftp://example.org/", "gopher://x/", "http:///nohost", "https://user:pw@example.org/", "javascript:alert(1)", "example.org"} {
		if _, err := CheckURL(u); !errors.Is(err, ErrScheme) {
			t.Errorf("CheckURL(%q) = %v, want ErrScheme", u, err)
		}
	}
	for _, u := range []string{"http://example.org/", "https://example.org/a?b=c#frag"} {
		if _, err := CheckURL(u); err != nil {
			t.Errorf("CheckURL(%q) = %v", u, err)
		}
	}
}

const page = `<html><head><title>T</title><script>alert("x")</script></head><body>
<h1>Install</h1><p>Read <a href="/docs/start">the guide</a> first.</p><ul><li>one</li></ul></body></html>`

func TestFetchConvertsAndRefusesLoopback(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Cookie") != "" || r.Header.Get("Authorization") != "" {
			t.Errorf("request carried credentials: %v", r.Header)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	if _, err := Fetch(ctx, srv.URL, Options{}); !errors.Is(err, ErrAddress) {
		t.Fatalf("a loopback fetch without AllowPrivate: %v, want ErrAddress", err)
	}
	p, err := Fetch(ctx, srv.URL, Options{AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Install", "[the guide](" + srv.URL + "/docs/start)", "- one"} {
		if !strings.Contains(p.Markdown, want) {
			t.Errorf("markdown lacks %q:\n%s", want, p.Markdown)
		}
	}
	if strings.Contains(p.Markdown, "alert") {
		t.Errorf("the script came through:\n%s", p.Markdown)
	}
}

// The client has no proxy (HTTP_PROXY would otherwise see, and answer
// for, every fetch; Go's own default skips it only for loopback hosts,
// so a loopback test server could not show it) and no cookie jar.
func TestClientHasNoProxyOrJar(t *testing.T) {
	t.Parallel()
	c := Options{}.withDefaults().client()
	if tr := c.Transport.(*http.Transport); tr.Proxy != nil || c.Jar != nil {
		t.Errorf("client has a proxy function or a cookie jar")
	}
}

func TestFetchRechecksRedirects(t *testing.T) {
	t.Parallel()
	var target string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/meta":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/mapped":
			http.Redirect(w, r, "http://[::ffff:169.254.169.254]/", http.StatusFound)
		case "/file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/other":
			http.Redirect(w, r, target, http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			fmt.Fprint(w, "landed")
		}
	}))
	t.Cleanup(srv.Close)
	target = srv.URL + "/landed"
	ctx := context.Background()
	for path, want := range map[string]error{"/meta": ErrAddress, "/mapped": ErrAddress, "/file": ErrScheme, "/loop": ErrRedirects} {
		if _, err := Fetch(ctx, srv.URL+path, Options{AllowPrivate: true}); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", path, err, want)
		}
	}
	// Every hop is put to Approve, which may refuse the one it lands on.
	var asked []string
	refuse := errors.New("not approved")
	approve := func(_ context.Context, u *url.URL) error {
		asked = append(asked, u.Path)
		if u.Path == "/landed" {
			return refuse
		}
		return nil
	}
	if _, err := Fetch(ctx, srv.URL+"/other", Options{AllowPrivate: true, Approve: approve}); !errors.Is(err, refuse) {
		t.Errorf("a redirect Approve refused: %v", err)
	}
	if strings.Join(asked, " ") != "/other /landed" {
		t.Errorf("Approve was asked about %q, want /other then /landed", asked)
	}
}

func TestFetchCapsSize(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a", 5000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, big)
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	p, err := Fetch(ctx, srv.URL, Options{AllowPrivate: true, MaxBytes: 1000})
	if err != nil || len(p.Markdown) != 1000 || !p.Truncated {
		t.Errorf("MaxBytes 1000: %d bytes, truncated %v, %v", len(p.Markdown), p.Truncated, err)
	}
	p, err = Fetch(ctx, srv.URL, Options{AllowPrivate: true, MaxChars: 300})
	if err != nil || len(p.Markdown) != 300 || !p.Truncated {
		t.Errorf("MaxChars 300: %d characters, truncated %v, %v", len(p.Markdown), p.Truncated, err)
	}
	p, err = Fetch(ctx, srv.URL, Options{AllowPrivate: true})
	if err != nil || len(p.Markdown) != 5000 || p.Truncated {
		t.Errorf("no cap reached: %d characters, truncated %v, %v", len(p.Markdown), p.Truncated, err)
	}
}

func TestFetchRefusesBinary(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n"))
	}))
	t.Cleanup(srv.Close)
	if _, err := Fetch(context.Background(), srv.URL, Options{AllowPrivate: true}); !errors.Is(err, ErrNotText) {
		t.Errorf("an image: %v, want ErrNotText", err)
	}
}

// A host refused from the URL alone is refused before Approve is asked
// (whose "yes" could never work), naming web_fetch_allow_private where
// the person can lift it; with AllowPrivate the loopback is asked about
// as any host; a name is left to the dial-time check, which still
// refuses the addresses it dials (DNS rebinding).
func TestCheckHostRefusesBeforeAsking(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		host          string
		refused       bool // without web_fetch_allow_private
		refusedWhenOK bool // with it
	}{
		{"127.0.0.1", true, false}, {"::1", true, false}, {"::ffff:127.0.0.1", true, false},
		{"localhost", true, false}, {"LocalHost.", true, false}, {"app.localhost", true, false},
		{"10.1.2.3", true, false}, {"172.16.0.1", true, false}, {"192.168.1.1", true, false},
		{"fc00::1", true, false}, {"fd12::1", true, false},
		{"0.0.0.0", true, true}, {"169.254.1.1", true, true}, {"169.254.169.254", true, true}, {"fe80::1", true, true},
		{"example.org", false, false}, {"localhost.example.org", false, false}, {"93.184.216.34", false, false},
	} {
		err := CheckHost(c.host, false)
		if (err != nil) != c.refused {
			t.Errorf("CheckHost(%q, false) = %v, want refused %v", c.host, err, c.refused)
		}
		var he *HostError
		if err != nil && (!errors.As(err, &he) || !errors.Is(err, ErrAddress)) {
			t.Errorf("CheckHost(%q, false) = %#v, want a *HostError wrapping ErrAddress", c.host, err)
		}
		if err != nil && !c.refusedWhenOK && !strings.Contains(err.Error(), "web_fetch_allow_private = true") {
			t.Errorf("CheckHost(%q, false) = %q, which does not name web_fetch_allow_private", c.host, err)
		}
		if err != nil && c.refusedWhenOK && strings.Contains(err.Error(), "web_fetch_allow_private") {
			t.Errorf("CheckHost(%q, false) = %q names a setting that cannot lift it", c.host, err)
		}
		if err := CheckHost(c.host, true); (err != nil) != c.refusedWhenOK {
			t.Errorf("CheckHost(%q, true) = %v, want refused %v", c.host, err, c.refusedWhenOK)
		}
	}
	asked := 0
	approve := func(context.Context, *url.URL) error { asked++; return nil }
	for _, u := range []string{"http://127.0.0.1:1/", "http://[::1]:1/", "http://[::ffff:127.0.0.1]:1/", "http://localhost:1/", "http://0.0.0.0:1/"} {
		if _, err := Fetch(context.Background(), u, Options{Approve: approve}); !errors.Is(err, ErrAddress) {
			t.Errorf("Fetch(%s) = %v, want ErrAddress", u, err)
		}
	}
	if asked != 0 {
		t.Errorf("Approve was asked %d times about hosts refused from the URL alone", asked)
	}
	// The dial-time check stays behind it, for names that resolve there.
	if _, err := (Options{}).dial(context.Background(), "tcp", "127.0.0.1:1"); !errors.Is(err, ErrAddress) {
		t.Errorf("dialling the loopback without AllowPrivate: %v, want ErrAddress", err)
	}
}
