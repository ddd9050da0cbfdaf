package memory

import (
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// Continuing a session decodes every message of its kept conversation,
// and encoding/json's reflective decoding was most of what a long
// history added to a resume (issue 94). The lines ralph writes are
// nearly all of one plain shape: a role, text, tool calls of three
// strings, a seq. decodeLine reads that shape itself and leaves every
// other line (opaque blocks, images, a compaction, a refusal, a key in
// another case, whitespace, a null, anything unexpected) to
// encoding/json, so that whatever it reads, it reads as json.Unmarshal
// does.

// decodeLine decodes one line of messages.jsonl into l, as
// json.Unmarshal does.
func decodeLine(line []byte, l *seqLine) error {
	if plainLine(line, l) {
		return nil
	}
	*l = seqLine{}
	return json.Unmarshal(line, l)
}

// plainLine reads a line of the plain shape into l and reports whether
// it was one; l is undefined when it was not.
func plainLine(b []byte, l *seqLine) bool {
	*l = seqLine{}
	p := lineParser{b: b}
	if !p.take('{') {
		return false
	}
	if p.take('}') {
		return p.i == len(b)
	}
	// seen has a bit for each field read: a key given twice is left to
	// encoding/json.
	seen := 0
	for {
		key, ok := p.plainKey()
		if !ok || !p.take(':') {
			return false
		}
		var bit int
		switch string(key) {
		case "role":
			bit = 1
			l.Role, ok = p.str()
		case "content":
			bit = 2
			l.Content, ok = p.str()
		case "tool_call_id":
			bit = 4
			l.ToolCallID, ok = p.str()
		case "name":
			bit = 8
			l.Name, ok = p.str()
		case "seq":
			bit = 16
			l.Seq, ok = p.seq()
		case "tool_calls":
			bit = 32
			l.ToolCalls, ok = p.calls()
		default:
			return false
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if p.take('}') {
			return p.i == len(b)
		}
		if !p.take(',') {
			return false
		}
	}
}

// lineParser reads the plain shape of a line, byte by byte: no
// whitespace, strings, tool calls and a small whole number.
type lineParser struct {
	b []byte
	i int
}

// take consumes c when it comes next.
func (p *lineParser) take(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// plainKey is the next key, one of lower-case letters and underscores
// (encoding/json matches keys in any case; such a key is not plain).
func (p *lineParser) plainKey() ([]byte, bool) {
	if !p.take('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) && (p.b[p.i] >= 'a' && p.b[p.i] <= 'z' || p.b[p.i] == '_') {
		p.i++
	}
	key := p.b[start:p.i]
	return key, p.take('"')
}

// seq is a whole number of up to 15 digits without a leading zero.
func (p *lineParser) seq() (int, bool) {
	start, n := p.i, 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' && p.i-start < 15 {
		n = n*10 + int(p.b[p.i]-'0')
		p.i++
	}
	digits := p.i - start
	if digits == 0 || digits > 1 && p.b[start] == '0' || p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		return 0, false
	}
	return n, true
}

// calls is a non-empty array of tool calls, each an object of the
// strings id, name and arguments, each once.
func (p *lineParser) calls() ([]conversation.ToolCall, bool) {
	if !p.take('[') {
		return nil, false
	}
	var out []conversation.ToolCall
	for {
		if !p.take('{') {
			return nil, false
		}
		var c conversation.ToolCall
		seen := 0
		for {
			key, ok := p.plainKey()
			if !ok || !p.take(':') {
				return nil, false
			}
			var bit int
			var dst *string
			switch string(key) {
			case "id":
				bit, dst = 1, &c.ID
			case "name":
				bit, dst = 2, &c.Name
			case "arguments":
				bit, dst = 4, &c.Arguments
			default:
				return nil, false
			}
			if seen&bit != 0 {
				return nil, false
			}
			seen |= bit
			if *dst, ok = p.str(); !ok {
				return nil, false
			}
			if p.take('}') {
				break
			}
			if !p.take(',') {
				return nil, false
			}
		}
		out = append(out, c)
		if p.take(']') {
			return out, true
		}
		if !p.take(',') {
			return nil, false
		}
	}
}

// str is the next JSON string, unescaped as encoding/json unescapes it:
// \uXXXX pairs of surrogates joined, a lone surrogate and each byte of
// invalid UTF-8 read as U+FFFD. A control character or an escape JSON
// does not have is no string.
func (p *lineParser) str() (string, bool) {
	if !p.take('"') {
		return "", false
	}
	start := p.i
	plain := true
	for ; p.i < len(p.b); p.i++ {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if plain && utf8.Valid(s) {
				return string(s), true
			}
			return unescape(s)
		case c == '\\':
			plain = false
			p.i++ // the escaped byte is never the closing quote
		case c < ' ':
			return "", false
		}
	}
	return "", false
}

// unescape is the content of a JSON string between its quotes.
func unescape(s []byte) (string, bool) {
	out := make([]byte, 0, len(s))
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			if r+1 >= len(s) {
				return "", false
			}
			switch e := s[r+1]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				rr := hex4(s[r+2:])
				if rr < 0 {
					return "", false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					rr1 := rune(-1)
					if r+1 < len(s) && s[r] == '\\' && s[r+1] == 'u' {
						rr1 = hex4(s[r+2:])
					}
					if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
						r += 6
						out = utf8.AppendRune(out, dec)
						continue
					}
					rr = utf8.RuneError
				}
				out = utf8.AppendRune(out, rr)
				continue
			default:
				return "", false
			}
			r += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			out = utf8.AppendRune(out, rr)
			r += size
		}
	}
	return string(out), true
}

// hex4 is the rune of the four hex digits b begins with, or -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
