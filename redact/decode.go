package redact

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// The encodings the layers decode, each with an offset map back to the
// source, and the writing of a replacement in each (see layers.go).

// encBackslash writes s as JSON string content.
func encBackslash(s string) string {
	b := make([]byte, 0, len(s)+4)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			b = appendControl(b, c)
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}

// encEntity writes s as HTML text.
func encEntity(s string) string {
	r := strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}

// encPercent writes s percent-encoded, but for letters, digits and
// "*[]-._".
func encPercent(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if wordByte(c) && c != '_' || strings.IndexByte("*[]-._", c) >= 0 {
			b = append(b, c)
			continue
		}
		b = append(b, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
	}
	return string(b)
}

// decodeBackslash decodes the JSON escapes of t (\" \\ \/ \b \f \n \r \t
// \uXXXX, a surrogate pair as its character and a lone surrogate as
// U+FFFD); a backslash that starts no valid escape stays. ok is false
// when t holds no escape.
func decodeBackslash(t []byte) (u []byte, m omap, ok bool) {
	if !hasEscape(t) {
		return nil, m, false
	}
	u = make([]byte, 0, len(t))
	for i := 0; i < len(t); {
		c := t[i]
		if c != '\\' || i+1 >= len(t) {
			u = append(u, c)
			m.add(i, i+1, 1)
			i++
			continue
		}
		var r rune
		n := 2
		switch t[i+1] {
		case '"', '\\', '/':
			r = rune(t[i+1])
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			v, hok := hex4(t, i+2)
			if !hok {
				r = -1
				break
			}
			n = 6
			r = v
			if v >= 0xD800 && v < 0xDC00 {
				if v2, ok2 := hex4(t, i+8); ok2 && i+7 < len(t) && t[i+6] == '\\' && t[i+7] == 'u' && v2 >= 0xDC00 && v2 < 0xE000 {
					r = (v-0xD800)<<10 | (v2 - 0xDC00) + 0x10000
					n = 12
				} else {
					r = utf8.RuneError
				}
			} else if v >= 0xDC00 && v < 0xE000 {
				r = utf8.RuneError
			}
		default:
			r = -1
		}
		if r < 0 {
			u = append(u, c)
			m.add(i, i+1, 1)
			i++
			continue
		}
		ok = true
		k := len(u)
		u = utf8.AppendRune(u, r)
		m.add(i, i+n, len(u)-k)
		i += n
	}
	return u, m, ok
}

// entities maps the named character references decoded (HTML5 names of
// the characters that matter to the layers, and the common ones).
var entities = map[string]string{
	"amp": "&", "lt": "<", "gt": ">", "quot": `"`, "apos": "'", "nbsp": "\u00a0",
	"colon": ":", "equals": "=", "num": "#", "plus": "+", "percnt": "%", "sol": "/",
	"bsol": `\`, "lsqb": "[", "rsqb": "]", "lbrack": "[", "rbrack": "]", "lcub": "{", "rcub": "}",
	"lbrace": "{", "rbrace": "}", "comma": ",", "period": ".", "semi": ";", "quest": "?",
	"excl": "!", "commat": "@", "ast": "*", "lowbar": "_", "hyphen": "\u2010", "dash": "\u2010",
	"ndash": "\u2013", "mdash": "\u2014", "ensp": "\u2002", "emsp": "\u2003", "thinsp": "\u2009",
	"Tab": "\t", "NewLine": "\n", "shy": "\u00ad", "zwsp": "\u200b", "ZeroWidthSpace": "\u200b",
}

// decodeEntities decodes the character references of t: &name; for the
// names in entities, &#ddd; and &#xhh;. ok is false when there is none.
func decodeEntities(t []byte) (u []byte, m omap, ok bool) {
	for i := 0; ; i++ {
		if i == len(t) {
			return nil, m, false
		}
		if t[i] == '&' {
			if _, n := entityAt(t[i:]); n > 0 {
				break
			}
		}
	}
	u = make([]byte, 0, len(t))
	for i := 0; i < len(t); {
		c := t[i]
		if c == '&' {
			if rep, n := entityAt(t[i:]); n > 0 {
				ok = true
				k := len(u)
				u = append(u, rep...)
				m.add(i, i+n, len(u)-k)
				i += n
				continue
			}
		}
		u = append(u, c)
		m.add(i, i+1, 1)
		i++
	}
	return u, m, ok
}

// entityAt returns the text of the character reference at the start of t
// (a '&') and its length, or 0. As HTML5 reads them, a numeric reference
// needs no ';', nor do the legacy names amp, lt, gt, quot and nbsp.
func entityAt(t []byte) (string, int) {
	if len(t) < 3 {
		return "", 0
	}
	if t[1] != '#' {
		if end := bytes.IndexByte(t[:min(len(t), 34)], ';'); end >= 2 {
			if rep, found := entities[string(t[1:end])]; found {
				return rep, end + 1
			}
		}
		for _, n := range [...]string{"amp", "lt", "gt", "quot", "nbsp", "AMP", "LT", "GT", "QUOT"} {
			if bytes.HasPrefix(t[1:], []byte(n)) {
				return entities[strings.ToLower(n)], 1 + len(n)
			}
		}
		return "", 0
	}
	i, base := 2, rune(10)
	if i < len(t) && t[i]|0x20 == 'x' {
		i, base = 3, 16
	}
	start := i
	var r rune
	for i < len(t) && (isDigit(t[i]) || base == 16 && isHex(t[i])) {
		if r < 0x110000 {
			r = r*base + rune(unhex(t[i]))
		}
		i++
	}
	if i == start {
		return "", 0
	}
	if i < len(t) && t[i] == ';' {
		i++
	}
	if r > utf8.MaxRune || r >= 0xD800 && r < 0xE000 || r == 0 {
		r = utf8.RuneError
	}
	return string(r), i
}

// decodePercent decodes %XX escapes and, in text that holds no space,
// '+' as a space (a form body), except a '+' before a digit at the start of
// the text or of a value, the international phone number form. ok is
// false when nothing was decoded.
func decodePercent(t []byte) (u []byte, m omap, ok bool) {
	plus := bytes.IndexByte(t, ' ') < 0
	for i := 0; ; i++ {
		if i == len(t) {
			return nil, m, false
		}
		if pctAt(t, i) || t[i] == '+' && plus && plusSpace(t, i) {
			break
		}
	}
	u = make([]byte, 0, len(t))
	for i := 0; i < len(t); {
		c := t[i]
		switch {
		case pctAt(t, i):
			u = append(u, unhex(t[i+1])<<4|unhex(t[i+2]))
			m.add(i, i+3, 1)
			ok = true
			i += 3
			continue
		case c == '+' && plus && plusSpace(t, i):
			u = append(u, ' ')
			m.add(i, i+1, 1)
			ok = true
			i++
			continue
		}
		u = append(u, c)
		m.add(i, i+1, 1)
		i++
	}
	return u, m, ok
}

func unhex(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// pctAt reports whether a %XX escape starts at t[i].
func pctAt(t []byte, i int) bool {
	return t[i] == '%' && i+2 < len(t) && isHex(t[i+1]) && isHex(t[i+2])
}

// plusSpace reports whether the '+' at t[i] of a form body stands for a
// space: it does but before a digit at the start of the text or of a
// value (the international phone number form).
func plusSpace(t []byte, i int) bool {
	return !(i+1 < len(t) && isDigit(t[i+1]) && (i == 0 || strings.IndexByte("=&;?:", t[i-1]) >= 0))
}

// hasEscape reports whether t holds a JSON escape decodeBackslash decodes.
func hasEscape(t []byte) bool {
	for i := 0; i+1 < len(t); i++ {
		if t[i] != '\\' {
			continue
		}
		switch t[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			return true
		case 'u':
			if _, ok := hex4(t, i+2); ok {
				return true
			}
		}
	}
	return false
}

// encoded reports whether t holds an escape a layer decodes.
func encoded(t []byte) bool {
	if hasEscape(t) {
		return true
	}
	plus := bytes.IndexByte(t, ' ') < 0
	for i, c := range t {
		switch {
		case c == '&':
			if _, n := entityAt(t[i:]); n > 0 {
				return true
			}
		case c == '%':
			if pctAt(t, i) {
				return true
			}
		case c == '+':
			if plus && plusSpace(t, i) {
				return true
			}
		}
	}
	return false
}

// hasEntity reports whether t holds a character reference decodeEntities
// decodes.
func hasEntity(t []byte) bool {
	for i, c := range t {
		if c == '&' {
			if _, n := entityAt(t[i:]); n > 0 {
				return true
			}
		}
	}
	return false
}

// hasUEscape reports whether t holds a \uXXXX escape.
func hasUEscape(t []byte) bool {
	for i := 0; i+1 < len(t); i++ {
		if t[i] == '\\' && t[i+1] == 'u' {
			if _, ok := hex4(t, i+2); ok {
				return true
			}
		}
	}
	return false
}
