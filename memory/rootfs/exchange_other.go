//go:build !linux

package rootfs

import "os"

// exchangeAt: only Linux swaps two names in one step here.
func exchangeAt(*os.File, string, string) error { return ErrNoExchange }
