// Package engine runs ralph's task loop on Temporal: the loop is a
// workflow, each task attempt an activity on some worker, and one
// integration activity at a time writes the results to the target branch
// of the project's git remote. The decisions (what starts next, how an
// attempt settles, when the loop stops, the breaker) are ralph's own, from
// coordinator/decide, so a local run and a Temporal run decide alike.
package engine

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
)

// DefaultTaskQueue is the task queue workers poll and runs are started on
// when none is named.
const DefaultTaskQueue = "ralph"

// APIKeyEnv names the environment variable holding a Temporal Cloud (or
// other) API key. It is read from the environment only, never from a file
// ralph writes, and never written anywhere.
const APIKeyEnv = "TEMPORAL_API_KEY"

// ErrConfig is a connection setting that cannot work.
var ErrConfig = errors.New("bad Temporal connection settings")

// Conn says how to reach a Temporal service.
type Conn struct {
	Address   string
	Namespace string
	TaskQueue string
	// TLS turns on TLS with the system's roots; CertFile and KeyFile add
	// a client certificate (mTLS), as self-hosted clusters and Temporal
	// Cloud's certificate auth want.
	TLS      bool
	CertFile string
	KeyFile  string
	// ServerName overrides the name the server's certificate is checked
	// against.
	ServerName string
}

// Normalise fills the defaults and checks the settings.
func (c *Conn) Normalise() error {
	if c.Address == "" {
		return fmt.Errorf("%w: --address HOST:PORT is needed (a dev server listens on 127.0.0.1:7233)", ErrConfig)
	}
	if !strings.Contains(c.Address, ":") {
		return fmt.Errorf("%w: --address %q has no port; give HOST:PORT", ErrConfig, c.Address)
	}
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	if c.TaskQueue == "" {
		c.TaskQueue = DefaultTaskQueue
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return fmt.Errorf("%w: --tls-cert and --tls-key go together", ErrConfig)
	}
	return nil
}

// Options are the SDK's client options for c. The API key, if any, comes
// from the environment (APIKeyEnv); it turns TLS on, as every service that
// takes one requires.
func (c Conn) Options(getenv func(string) string) (client.Options, error) {
	o := client.Options{HostPort: c.Address, Namespace: c.Namespace, Logger: quietLogger{}}
	key := strings.TrimSpace(getenv(APIKeyEnv))
	if c.TLS || c.CertFile != "" || key != "" {
		cfg := &tls.Config{ServerName: c.ServerName, MinVersion: tls.VersionTLS12}
		if c.CertFile != "" {
			cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
			if err != nil {
				return o, fmt.Errorf("%w: cannot load the client certificate: %w", ErrConfig, err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		o.ConnectionOptions.TLS = cfg
	}
	if key != "" {
		o.Credentials = client.NewAPIKeyStaticCredentials(key)
	}
	return o, nil
}

// Dial connects to the service.
func (c Conn) Dial() (client.Client, error) {
	if err := c.Normalise(); err != nil {
		return nil, err
	}
	o, err := c.Options(os.Getenv)
	if err != nil {
		return nil, err
	}
	cl, err := client.Dial(o)
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at %s (namespace %s): %w", c.Address, c.Namespace, err)
	}
	return cl, nil
}

// quietLogger keeps the SDK's own logging to warnings and errors on
// stderr: ralph-temporal's stdout carries the event stream.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(msg string, kv ...any) {
	fmt.Fprintln(os.Stderr, "ralph-temporal: warning: "+msg+kvText(kv))
}
func (quietLogger) Error(msg string, kv ...any) {
	fmt.Fprintln(os.Stderr, "ralph-temporal: "+msg+kvText(kv))
}

func kvText(kv []any) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %v=%v", kv[i], kv[i+1])
	}
	return b.String()
}

var _ log.Logger = quietLogger{}
