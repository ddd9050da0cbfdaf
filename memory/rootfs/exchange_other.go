//go:build !linux

package rootfs

import "os"

// ExchangeAt: only Linux swaps two names in one step here.
func ExchangeAt(int, string, string) error { return ErrNoExchange }

func exchangeAt(*os.File, string, string) error { return ErrNoExchange }
