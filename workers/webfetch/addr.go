// Package webfetch fetches one web page for the model's web_fetch tool
// and turns it into markdown. It runs in ralph's own process, outside the
// sandbox, so it keeps its own rules: only http and https; no cookies,
// credentials, proxy or .netrc of the person's; no address on the
// person's machine or network unless the person allowed them
// (Options.AllowPrivate); link-local and cloud metadata addresses never;
// the address checked is the one dialled (DNS rebinding), on every
// redirect; and the bytes read and characters returned are capped.
package webfetch

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// ErrAddress is returned when a host resolves to an address web_fetch may
// not reach; callers tell the model and the person why in one sentence.
var ErrAddress = errors.New("address refused")

// metadata are the cloud providers' instance metadata services, which
// hand out the machine's credentials: refused whatever the person
// allowed. 169.254.169.254 (and fd00:ec2::254) lie in ranges refused
// anyway; 100.100.100.200 (Alibaba Cloud) lies in the shared range.
var metadata = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
}

// never are ranges no fetch reaches, allowed or not: link-local (where
// metadata services answer), multicast, "this network" and the reserved
// and broadcast ranges.
var never = prefixes(
	"0.0.0.0/8", "169.254.0.0/16", "224.0.0.0/4", "240.0.0.0/4",
	"::/128", "fe80::/10", "ff00::/8",
	// The documentation ranges, which no public site uses but a machine
	// may be given (a container's own address in 192.0.2.0/24).
	"192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32",
)

// private are the person's own machine and networks: refused unless the
// person allowed them (web_fetch_allow_private).
var private = prefixes(
	"127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
	"100.64.0.0/10", "192.0.0.0/24", "198.18.0.0/15",
	"::1/128", "fc00::/7", "fec0::/10",
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// CheckAddr returns nil when web_fetch may connect to ip, else an error
// wrapping ErrAddress that says why. An IPv6 address that carries an
// IPv4 one (mapped ::ffff:a.b.c.d, the deprecated compatible ::a.b.c.d,
// NAT64's 64:ff9b::a.b.c.d) is judged by the IPv4 address it reaches.
func CheckAddr(ip netip.Addr, allowPrivate bool) error {
	if why := addrRefusal(ip, allowPrivate); why != "" {
		return fmt.Errorf("%w: %s", ErrAddress, why)
	}
	return nil
}

// addrRefusal is the sentence that says why web_fetch may not connect to
// ip, or "" when it may.
func addrRefusal(ip netip.Addr, allowPrivate bool) string {
	ip = ip.WithZone("")
	shown := ip
	ip = embedded(ip)
	for _, m := range metadata {
		if ip == m {
			return fmt.Sprintf("%s is a cloud metadata address, which web_fetch never reaches", shown)
		}
	}
	for _, p := range never {
		if p.Contains(ip) {
			return fmt.Sprintf("%s is a link-local, multicast or reserved address, which web_fetch never reaches", shown)
		}
	}
	if allowPrivate {
		return ""
	}
	for _, p := range private {
		if p.Contains(ip) {
			return fmt.Sprintf("%s is a loopback or private-network address, %s", shown, allowPrivateHint)
		}
	}
	if isOwnAddress(ip) {
		// A service bound to every address answers on the machine's own
		// public ones as on loopback.
		return fmt.Sprintf("%s is an address of this machine, %s", shown, allowPrivateHint)
	}
	return ""
}

// allowPrivateHint ends every refusal the person can lift.
const allowPrivateHint = "which web_fetch reaches only when the user sets web_fetch_allow_private = true in their user config"

// HostError is a host refused from the URL alone, before the approval
// policy is asked about it: a literal address web_fetch may not reach, or
// localhost by name. Asking first would put a question whose "yes" (and
// "always") could never work. Names that resolve to such addresses are
// still refused when dialled (dial), where DNS rebinding is caught.
type HostError struct {
	// Host is the URL's host as written (without brackets).
	Host string
	// Reason is the one sentence that says why, and how to lift it where
	// the person can.
	Reason string
}

func (e *HostError) Error() string { return e.Reason }
func (e *HostError) Unwrap() error { return ErrAddress }

// CheckHost refuses a URL's host (u.Hostname()) that needs no lookup to be
// refused: a literal address CheckAddr refuses, or localhost and the
// names under .localhost, which resolve to the loopback whatever DNS says
// (RFC 6761). Any other name returns nil: only its addresses, when
// dialled, can say.
func CheckHost(host string, allowPrivate bool) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := addrRefusal(ip, allowPrivate); why != "" {
			return &HostError{Host: host, Reason: why}
		}
		return nil
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if !allowPrivate && (name == "localhost" || strings.HasSuffix(name, ".localhost")) {
		return &HostError{Host: host, Reason: fmt.Sprintf("%s is this machine's loopback, %s", host, allowPrivateHint)}
	}
	return nil
}

// interfaceAddrs lists this machine's addresses (a variable for tests).
var interfaceAddrs = net.InterfaceAddrs

// isOwnAddress reports whether ip is one of this machine's interface
// addresses, whatever range it lies in. When they cannot be listed every
// address counts as the machine's: a check that could not run refuses.
func isOwnAddress(ip netip.Addr) bool {
	addrs, err := interfaceAddrs()
	if err != nil {
		return true
	}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		if own, ok := netip.AddrFromSlice(n.IP); ok && embedded(own.Unmap()) == ip {
			return true
		}
	}
	return false
}

// nat64 is the well-known NAT64 prefix, whose last 32 bits are an IPv4
// address a translator reaches.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// embedded is the IPv4 address an IPv6 address reaches, or ip itself.
func embedded(ip netip.Addr) netip.Addr {
	if ip.Is4In6() {
		return ip.Unmap()
	}
	if !ip.Is6() {
		return ip
	}
	b := ip.As16()
	compat := true
	for _, x := range b[:12] {
		if x != 0 {
			compat = false
			break
		}
	}
	// ::a.b.c.d, but not :: and ::1, which are IPv6's own.
	if compat && (b[12]|b[13]) != 0 || nat64.Contains(ip) {
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	return ip
}
