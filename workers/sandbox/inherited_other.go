//go:build !unix

package sandbox

// sealInherited does nothing: Windows passes a child only the handles it
// is given explicitly (exec.Cmd marks the rest not inheritable).
func sealInherited() error { return nil }
