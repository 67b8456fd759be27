// Package jsonscan reads the members of a card's stored JSON object
// without decoding it: each member's key and raw value in order
// (EachMember), a key's escapes undone (UnquoteKey) and a raw value's
// surrounding space trimmed (TrimSpace). Package load (amounts,
// quarantine) and load/internal/cardfield (a card's typed values) scan
// with it.
package jsonscan

import (
	"encoding/json"
	"strings"
)

// EachMember calls fn with the key (as written, between its quotes) and
// the value (as written) of each member of the JSON object doc, in order.
// doc is valid JSON (a card's stored data); anything else ends the walk.
func EachMember(doc []byte, fn func(key, value []byte)) {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return
	}
	i++
	for {
		i = skipSpace(doc, i)
		if i >= len(doc) || doc[i] != '"' {
			return
		}
		kEnd := skipString(doc, i)
		key := doc[i+1 : kEnd-1]
		i = skipSpace(doc, kEnd)
		if i >= len(doc) || doc[i] != ':' {
			return
		}
		i = skipSpace(doc, i+1)
		end := skipValue(doc, i)
		fn(key, doc[i:end])
		i = skipSpace(doc, end)
		if i >= len(doc) || doc[i] != ',' {
			return
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the offset after the string that starts at b[i].
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipValue returns the offset after the value that starts at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && !strings.ContainsRune(",}] \t\n\r", rune(b[j])) {
		j++
	}
	return j
}

// TrimSpace is b without the JSON white space around it.
func TrimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// UnquoteKey is a member's key (as written, between its quotes) with its
// escapes undone; a key that does not decode is returned as written.
func UnquoteKey(k string) string {
	if !strings.Contains(k, `\`) {
		return k
	}
	var s string
	if err := json.Unmarshal([]byte(`"`+k+`"`), &s); err == nil {
		return s
	}
	return k
}
