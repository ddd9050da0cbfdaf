package approval

import "bytes"

// tomlScan is where saveRule may edit a config file: just enough of a
// TOML lexer to find top-level keys and the first table header without
// being fooled by brackets inside strings, comments or multi-line arrays.
type tomlScan struct {
	firstTable int // offset of the first [table] or [[array]] header line, or -1
	keyValue   int // offset of the '[' opening the key's array, or -1
	arrayClose int // offset of its matching ']', or -1
}

func scanTOML(doc []byte, want string) tomlScan {
	sc := tomlScan{firstTable: -1, keyValue: -1, arrayClose: -1}
	i := 0
	for i < len(doc) {
		lineStart := i
		i = skipBlank(doc, i)
		if i >= len(doc) {
			break
		}
		switch doc[i] {
		case '\n':
			i++
			continue
		case '#':
			i = skipLine(doc, i)
			continue
		case '[':
			sc.firstTable = lineStart
			return sc
		}
		// A key = value line.
		eq := keyEnd(doc, i)
		if eq < 0 {
			i = skipLine(doc, i)
			continue
		}
		key := normalizeKey(doc[i:eq])
		v := skipBlank(doc, eq+1)
		end := skipValue(doc, v)
		if key == want && sc.keyValue < 0 {
			if v < len(doc) && doc[v] == '[' {
				sc.keyValue = v
				sc.arrayClose = end - 1
			} else {
				sc.keyValue = v
			}
		}
		i = skipLine(doc, end)
	}
	return sc
}

func skipBlank(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\r') {
		i++
	}
	return i
}

// skipLine returns the offset just after the next newline at or after i.
func skipLine(doc []byte, i int) int {
	if j := bytes.IndexByte(doc[min(i, len(doc)):], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(doc)
}

// keyEnd returns the offset of the '=' ending the key that starts at i,
// honouring quoted keys, or -1.
func keyEnd(doc []byte, i int) int {
	for i < len(doc) && doc[i] != '\n' {
		switch doc[i] {
		case '=':
			return i
		case '"', '\'':
			i = skipString(doc, i)
			continue
		}
		i++
	}
	return -1
}

// normalizeKey trims a key and removes quotes from a simple quoted key.
func normalizeKey(k []byte) string {
	k = bytes.TrimSpace(k)
	if len(k) >= 2 && (k[0] == '"' || k[0] == '\'') && k[len(k)-1] == k[0] {
		k = k[1 : len(k)-1]
	}
	return string(k)
}

// skipValue returns the offset just after the value starting at i.
func skipValue(doc []byte, i int) int {
	if i >= len(doc) {
		return i
	}
	switch doc[i] {
	case '"', '\'':
		return skipString(doc, i)
	case '[', '{':
		depth := 0
		for i < len(doc) {
			switch doc[i] {
			case '[', '{':
				depth++
			case ']', '}':
				depth--
				if depth == 0 {
					return i + 1
				}
			case '"', '\'':
				i = skipString(doc, i)
				continue
			case '#':
				i = skipLine(doc, i)
				continue
			}
			i++
		}
		return i
	}
	for i < len(doc) && doc[i] != '\n' && doc[i] != '#' {
		i++
	}
	return i
}

// skipString returns the offset just after the string starting at i: basic
// or literal, single- or multi-line.
func skipString(doc []byte, i int) int {
	q := doc[i]
	if bytes.HasPrefix(doc[i:], []byte{q, q, q}) {
		end := bytes.Index(doc[i+3:], []byte{q, q, q})
		if end < 0 {
			return len(doc)
		}
		j := i + 3 + end + 3
		// A multi-line string may end with up to two extra quotes.
		for k := 0; k < 2 && j < len(doc) && doc[j] == q; k++ {
			j++
		}
		return j
	}
	for j := i + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			if q == '"' {
				j++
			}
		case q:
			return j + 1
		case '\n':
			return j
		}
	}
	return len(doc)
}
