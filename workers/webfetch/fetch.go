package webfetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// The caps of a fetch. MaxBytes bounds what is read of a response's body
// (a page past it is cut there and said to be), MaxChars the markdown the
// model gets back; both are Claude Code's order of magnitude (10 MB, 100k
// characters) made smaller, since the page goes into the conversation.
const (
	DefaultMaxBytes     = 2 << 20
	DefaultMaxChars     = 100_000
	DefaultMaxRedirects = 5
	DefaultTimeout      = 30 * time.Second
)

// Sentinel errors a caller may branch on; each is wrapped with the
// sentence that says what happened.
var (
	ErrScheme    = errors.New("unsupported URL")
	ErrRedirects = errors.New("too many redirects")
	ErrNotText   = errors.New("not a text page")
)

// Options configure a Fetcher.
type Options struct {
	// AllowPrivate lets fetches reach loopback and private-network
	// addresses (the person's web_fetch_allow_private); link-local and
	// metadata addresses stay refused.
	AllowPrivate bool
	// Approve, when set, is asked before every request, the first and
	// each redirect's, with the URL about to be fetched: the approval
	// policy's per-domain question. An error stops the fetch.
	Approve func(ctx context.Context, u *url.URL) error
	// Caps; zero means the Default.
	MaxBytes     int64
	MaxChars     int
	MaxRedirects int
	Timeout      time.Duration
}

// RedirectError is a redirect to a URL refused before it was asked about
// (CheckHost): Err says why.
type RedirectError struct {
	URL string
	Err error
}

func (e *RedirectError) Error() string { return "redirected to " + e.URL + ": " + e.Err.Error() }
func (e *RedirectError) Unwrap() error { return e.Err }

// Page is a fetched page.
type Page struct {
	// URL is where the page was found, after redirects.
	URL string
	// Status is the HTTP status line's code and text ("200 OK").
	Status string
	// ContentType is the response's media type ("text/html").
	ContentType string
	// Markdown is the page as markdown (HTML converted; other text as it
	// came), at most MaxChars characters.
	Markdown string
	// Truncated says the body went past MaxBytes or the markdown past
	// MaxChars, and was cut.
	Truncated bool
	// Plain, when set, says why an HTML page came as plain text rather
	// than markdown (too deeply nested, too long or too slow to convert).
	Plain string
}

// Fetch gets rawURL and returns it as markdown. It follows at most
// MaxRedirects redirects itself, each checked like the first (scheme,
// Approve, the address dialled). Approve runs outside each request's
// Timeout, so a person answering a question about a redirect's domain
// is not cut short by it.
func Fetch(ctx context.Context, rawURL string, o Options) (Page, error) {
	o = o.withDefaults()
	u, err := CheckURL(rawURL)
	if err != nil {
		return Page{}, err
	}
	client := o.client()
	for hop := 0; ; hop++ {
		// A host refused from the URL alone is refused before anyone is
		// asked about it, on every hop.
		if err := CheckHost(u.Hostname(), o.AllowPrivate); err != nil {
			if hop > 0 {
				return Page{}, &RedirectError{URL: u.Redacted(), Err: err}
			}
			return Page{}, err
		}
		if o.Approve != nil {
			if err := o.Approve(ctx, u); err != nil {
				return Page{}, err
			}
		}
		page, next, err := o.get(ctx, client, u)
		if err != nil || next == nil {
			return page, err
		}
		if hop == o.MaxRedirects {
			return Page{}, fmt.Errorf("%w: more than %d", ErrRedirects, o.MaxRedirects)
		}
		if u, err = CheckURL(next.String()); err != nil {
			return Page{}, fmt.Errorf("redirected to %w", err)
		}
	}
}

// get makes one request within Timeout and reads its page, or returns
// where a redirect points (next). The conversion to markdown runs under
// the caller's ctx and its own bound (ConvertTimeout), not the request's:
// a slow server must not leave it no time.
func (o Options) get(ctx context.Context, client *http.Client, u *url.URL) (page Page, next *url.URL, err error) {
	caller := ctx
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Page{}, nil, fmt.Errorf("%w: %w", ErrScheme, err)
	}
	req.Header.Set("User-Agent", "ralph-web-fetch/1")
	req.Header.Set("Accept", "text/html, text/markdown;q=0.9, text/plain;q=0.8, */*;q=0.1")
	resp, err := client.Do(req)
	if err != nil {
		return Page{}, nil, unwrapURLError(err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		if loc := resp.Header.Get("Location"); loc != "" {
			next, err := u.Parse(loc)
			if err != nil {
				return Page{}, nil, fmt.Errorf("%w: the redirect's Location %q is not a URL", ErrScheme, loc)
			}
			return Page{}, next, nil
		}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, o.MaxBytes+1))
	if err != nil {
		return Page{}, nil, fmt.Errorf("reading the page: %w", err)
	}
	page = Page{URL: u.String(), Status: resp.Status}
	if int64(len(body)) > o.MaxBytes {
		body, page.Truncated = body[:o.MaxBytes], true
	}
	page.ContentType, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if page.ContentType == "" {
		page.ContentType, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	cancel()
	md, plain, err := toMarkdown(caller, body, page.ContentType, u)
	if err != nil {
		return page, nil, err
	}
	if utf8.RuneCountInString(md) > o.MaxChars {
		md, page.Truncated = clipRunes(md, o.MaxChars), true
	}
	page.Markdown, page.Plain = md, plain
	return page, nil, nil
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxChars <= 0 {
		o.MaxChars = DefaultMaxChars
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// CheckURL parses rawURL and refuses what web_fetch does not fetch: a
// scheme other than http and https, no host, or credentials in the URL
// (which would go out as an Authorization header).
func CheckURL(rawURL string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %q is not a URL", ErrScheme, rawURL)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%w: %q is not an http or https URL", ErrScheme, rawURL)
	case u.Hostname() == "":
		return nil, fmt.Errorf("%w: %q names no host", ErrScheme, rawURL)
	case u.User != nil:
		return nil, fmt.Errorf("%w: %q holds a user name or password, which web_fetch never sends", ErrScheme, u.Redacted())
	}
	u.Fragment = ""
	return u, nil
}

// client is a fresh client for one fetch: no cookie jar, no proxy (the
// environment's HTTP_PROXY is ignored: a proxy would see, and could
// answer for, every address), its own transport whose every connection
// goes through dial, and no redirects of its own (Fetch follows them,
// checking each). Go's client reads no .netrc and sends no
// Authorization it was not given.
func (o Options) client() *http.Client {
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            o.dial,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  o.Timeout,
		ForceAttemptHTTP2:      true,
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// dial resolves the host once, refuses it when any of its addresses is
// refused (a name that answers with a public and a private address is
// the DNS rebinding trick), and dials the first address itself, so the
// address checked is the address used; the dialer's Control checks the
// socket's address once more, just before the connect.
func (o Options) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		ips, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, fmt.Errorf("looking up %s: %w", host, err)
		}
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("looking up %s: no address", host)
	}
	for _, ip := range ips {
		if err := CheckAddr(ip, o.AllowPrivate); err != nil {
			return nil, fmt.Errorf("%s: %w", host, err)
		}
	}
	d := net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: cannot read the address dialled (%s)", ErrAddress, address)
		}
		return CheckAddr(ap.Addr(), o.AllowPrivate)
	}}
	return d.DialContext(ctx, network, net.JoinHostPort(ips[0].String(), port))
}

// unwrapURLError takes net/http's "Get \"URL\": " off an error, which
// the caller's sentence names already, and keeps the cause's sentinel.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// clipRunes is s cut to at most n characters.
func clipRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
