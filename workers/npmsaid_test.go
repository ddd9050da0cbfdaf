package workers

import (
	"strings"
	"testing"
)

// TestNpmSaid: a server started with npx that npm cannot fetch or start
// is reported with what npm said went wrong, not its last line, which
// only says where its log is (issue 36 item 11).
func TestNpmSaid(t *testing.T) {
	for _, c := range []struct{ stderr, want string }{
		{`npm warn Unknown user config "nodedir".
npm error code E404
npm error 404 Not Found - GET https://packages.example/@modelcontextprotocol%2fserver-nope - Not found
npm error 404
npm error 404  '@modelcontextprotocol/server-nope@*' is not in this registry.
npm error 404
npm error 404 Note that you can also install from a
npm error 404 tarball, folder, http url, or git url.
npm error A complete log of this run can be found in: /home/u/.npm/_logs/2026-11-24T12_00_00_000Z-debug-0.log
`, "npm E404: 404 Not Found - GET https://packages.example/@modelcontextprotocol%2fserver-nope - Not found '@modelcontextprotocol/server-nope@*' is not in this registry."},
		{`npm error code ENOTFOUND
npm error syscall getaddrinfo
npm error errno ENOTFOUND
npm error network request to https://packages.example/x failed, reason: getaddrinfo ENOTFOUND packages.example
npm error network This is a problem related to network connectivity.
npm error A complete log of this run can be found in: /tmp/x.log
`, "npm ENOTFOUND: network request to https://packages.example/x failed, reason: getaddrinfo ENOTFOUND packages.example network This is a problem related to network connectivity."},
		{"Traceback (most recent call last):\nModuleNotFoundError: No module named 'mcp'\n", "ModuleNotFoundError: No module named 'mcp'"},
	} {
		tl := &ErrTail{}
		_, _ = tl.Write([]byte(c.stderr))
		if got := tl.Last(); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
	if !strings.Contains(npmSaid(strings.Split("npm ERR! code ENOENT\nnpm ERR! enoent Could not read package.json\n", "\n")), "Could not read package.json") {
		t.Error("npm's older ERR! prefix is not read")
	}
}
