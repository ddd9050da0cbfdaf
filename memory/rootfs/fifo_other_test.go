//go:build !unix

package rootfs

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs") }
