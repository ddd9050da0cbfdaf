package rootfs

import "github.com/spf13/afero"

// Person is the file system of the person's own directories outside any
// project: their config directory (ralph/config.toml, approvals), the
// cross-project registry and state directory, the runtime directory. No
// command ralph runs may write there (the sandbox keeps them read-only or
// hidden), so it is the plain OS file system; it is never used for a path
// under a project, which goes through New.
func Person() afero.Fs { return afero.NewOsFs() }
