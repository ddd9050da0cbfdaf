package cli

import "os"

// protocolOut takes standard output for the protocol: ralph's own
// writes to os.Stdout go to standard error from now on.
func protocolOut() (*os.File, error) {
	out := os.Stdout
	os.Stdout = os.Stderr
	return out, nil
}
