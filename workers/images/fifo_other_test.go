//go:build !unix

package images

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs here") }
