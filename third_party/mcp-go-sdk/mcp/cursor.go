// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package mcp

// PATCH (ralph): the pagination cursor's bytes are written and read here
// rather than by encoding/gob, whose package init registered its types at
// every start of every program that linked this package (about 0.1 ms,
// the costliest init ralph had left). The bytes are gob's own for a
// pageToken from a new encoder, unchanged: a cursor made by the upstream
// SDK is read here, and one made here is read by it.

import (
	"bytes"
	"errors"
)

// gobPageTokenType is the message a new gob encoder sends first for a
// pageToken: the definition of the struct type, id 64, with its one string
// field, LastUID.
var gobPageTokenType = []byte("\x22\x7f\x03\x01\x01\x09pageToken\x01\xff\x80\x00\x01\x01\x01\x07LastUID\x01\x0c\x00\x00\x00")

// errBadCursor is a cursor that is not a gob-encoded pageToken.
var errBadCursor = errors.New("not a page token")

// gobPutUint appends x as gob encodes an unsigned integer: below 128 in
// one byte, otherwise the negated count of its big-endian bytes, then
// those bytes.
func gobPutUint(b []byte, x uint64) []byte {
	if x < 0x80 {
		return append(b, byte(x))
	}
	var be [8]byte
	n := 0
	for v := x; v > 0; v >>= 8 {
		n++
	}
	for i := 0; i < n; i++ {
		be[i] = byte(x >> (8 * (n - 1 - i)))
	}
	return append(append(b, byte(-n)), be[:n]...)
}

// gobUint reads a gob unsigned integer from the front of b, returning it
// and what follows it.
func gobUint(b []byte) (uint64, []byte, error) {
	if len(b) == 0 {
		return 0, nil, errBadCursor
	}
	if b[0] < 0x80 {
		return uint64(b[0]), b[1:], nil
	}
	n := int(-int8(b[0]))
	if n < 1 || n > 8 || len(b) < 1+n {
		return 0, nil, errBadCursor
	}
	var x uint64
	for _, c := range b[1 : 1+n] {
		x = x<<8 | uint64(c)
	}
	return x, b[1+n:], nil
}

// gobEncodePageToken is what gob.NewEncoder(w).Encode(t) writes to w.
func gobEncodePageToken(t pageToken) []byte {
	// The value: its type id (64, as gob's signed integer 128), then,
	// unless the field has its zero value, the field (delta 1) with its
	// length and bytes; a zero ends the struct.
	msg := []byte{0xff, 0x80}
	if t.LastUID != "" {
		msg = append(msg, 0x01)
		msg = gobPutUint(msg, uint64(len(t.LastUID)))
		msg = append(msg, t.LastUID...)
	}
	msg = append(msg, 0x00)
	out := append([]byte(nil), gobPageTokenType...)
	out = gobPutUint(out, uint64(len(msg)))
	return append(out, msg...)
}

// gobDecodePageToken reads what gobEncodePageToken writes.
func gobDecodePageToken(b []byte) (pageToken, error) {
	var t pageToken
	if !bytes.HasPrefix(b, gobPageTokenType) {
		return t, errBadCursor
	}
	size, rest, err := gobUint(b[len(gobPageTokenType):])
	if err != nil || size != uint64(len(rest)) {
		return t, errBadCursor
	}
	if !bytes.HasPrefix(rest, []byte{0xff, 0x80}) {
		return t, errBadCursor
	}
	rest = rest[2:]
	if len(rest) > 0 && rest[0] == 0x01 {
		var n uint64
		if n, rest, err = gobUint(rest[1:]); err != nil || n > uint64(len(rest)) {
			return t, errBadCursor
		}
		t.LastUID, rest = string(rest[:n]), rest[n:]
	}
	if len(rest) != 1 || rest[0] != 0x00 {
		return t, errBadCursor
	}
	return t, nil
}
