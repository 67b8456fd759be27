package redact

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"unicode/utf8"
)

// JSON strings: reading them, writing them in canonical form, and the
// eight-bytes-at-a-time scan that copies plain text without a look at each
// byte.

// str reads the string at w.i and writes it in canonical form, its card
// numbers masked if mask is set. It reports whether the canonical form holds
// an escape.
func (w *walker) str(mask bool) (escaped bool, err error) {
	in := w.in
	i := w.i + 1
	out := append(w.out, '"')
	start := len(out)
	digits := 0
	for {
		j := i
		// Eight bytes at a time while none needs a look: no control
		// character, quote, backslash or non-ASCII byte.
		for j+8 <= len(in) {
			x := binary.LittleEndian.Uint64(in[j:])
			if m := special8(x); m != 0 {
				k := bits.TrailingZeros64(m) >> 3 // the first special byte
				digits += digits8(x & (1<<(8*k) - 1))
				j += k
				break
			}
			digits += digits8(x)
			j += 8
		}
		for j < len(in) {
			c := in[j]
			if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				break
			}
			if isDigit(c) {
				digits++
			}
			j++
		}
		out = append(out, in[i:j]...)
		i = j
		if i >= len(in) {
			w.i, w.out = i, out
			return false, w.syntaxError("unterminated string")
		}
		switch c := in[i]; {
		case c == '"':
			i++
			// Track data first, whole (a track 1's "%B4" is no
			// percent-escape); then the layers, while JSON text still
			// parses; then the card numbers left.
			if mask && digits >= minPAN {
				if k := dropTracks(out[start:], escaped); k > 0 {
					w.scan.tracks += k
				}
			}
			if mask && (digits >= minCode || len(out) > start && mayLayer(out[start:], digits)) && !w.p.layersOff {
				out, escaped = w.layered(out, start, escaped)
			}
			if mask && digits >= minPAN {
				// maskText counts what it masks in w.scan (pans, tracks).
				n, _ := maskText(out[start:], escaped, &w.scan)
				out = out[:start+n]
			}
			w.i, w.out = i, append(out, '"')
			return escaped, nil
		case c >= 0x80:
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size == 1 {
				w.i, w.out = i, out
				return false, fmt.Errorf("%w at offset %d", ErrInvalidUTF8, i)
			}
			out = append(out, in[i:i+size]...)
			i += size
			if _, ok := digitValue(r); ok {
				digits++
			}
		case c < 0x20:
			w.i, w.out = i, out
			return false, w.syntaxError("control character in string")
		default: // backslash
			var esc bool
			var d bool
			out, i, esc, d, err = unescapeOne(in, i, out)
			if err != nil {
				w.i, w.out = i, out
				return false, w.syntaxError(err.Error())
			}
			escaped = escaped || esc
			if d {
				digits++
			}
		}
	}
}

// Byte-parallel tests on eight bytes (see "Bit Twiddling Hacks",
// haszero/hasless/countbetween).
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
	lows  = 0x7f7f7f7f7f7f7f7f
)

// special8 returns a mask with bit 7 of the first byte of x (in memory
// order) that is a control character, '"', '\' or >= 0x80 set, and maybe of
// later bytes; zero if there is none.
func special8(x uint64) uint64 {
	quote := x ^ (ones * '"')
	bslash := x ^ (ones * '\\')
	return (x | (x - ones*0x20) | (quote-ones)&^quote | (bslash-ones)&^bslash) & highs
}

// digits8 counts the ASCII digits among the eight bytes in x, which are all
// below 0x80.
func digits8(x uint64) int {
	// Per byte: bit 7 set when the byte is > '0'-1 and < '9'+1.
	gt := x + ones*(127-('0'-1)) // bit 7 set when byte > '0'-1
	lt := ones*(127+('9'+1)) - x // bit 7 set when byte < '9'+1
	return bits.OnesCount64(gt & lt & highs)
}

// Reasons for a bad escape.
var (
	errBadEscape    = errors.New("invalid escape in string")
	errBadUnicode   = errors.New("invalid \\u escape in string")
	errUnterminated = errors.New("unterminated string")
)

// unescapeOne reads the escape at in[i] (a backslash) and appends its
// canonical form to out. It returns the new output, the offset after the
// escape, whether the canonical form is itself an escape, and whether the
// character is a decimal digit (of any script).
func unescapeOne(in []byte, i int, out []byte) (_ []byte, _ int, esc, digit bool, err error) {
	if i+1 >= len(in) {
		return out, i, false, false, errUnterminated
	}
	switch in[i+1] {
	case '"', '\\':
		return append(out, '\\', in[i+1]), i + 2, true, false, nil
	case '/':
		return append(out, '/'), i + 2, false, false, nil
	case 'b', 'f', 'n', 'r', 't':
		return append(out, '\\', in[i+1]), i + 2, true, false, nil
	case 'u':
	default:
		return out, i, false, false, errBadEscape
	}
	r, ok := hex4(in, i+2)
	if !ok {
		return out, i, false, false, errBadUnicode
	}
	i += 6
	switch {
	case r >= 0xD800 && r < 0xDC00:
		if r2, ok := hex4(in, i+2); ok && in[i] == '\\' && in[i+1] == 'u' && r2 >= 0xDC00 && r2 < 0xE000 {
			r = (r-0xD800)<<10 | (r2 - 0xDC00) + 0x10000
			_, nd := digitValue(r)
			return utf8.AppendRune(out, r), i + 6, false, nd, nil
		}
		return appendU(out, r), i, true, false, nil
	case r >= 0xDC00 && r < 0xE000:
		return appendU(out, r), i, true, false, nil
	case r < 0x20 || r == '"' || r == '\\':
		return appendControl(out, byte(r)), i, true, false, nil
	}
	_, nd := digitValue(r)
	return utf8.AppendRune(out, r), i, false, r >= '0' && r <= '9' || nd, nil
}

// hex4 parses the four hex digits at in[i:i+4].
func hex4(in []byte, i int) (rune, bool) {
	if i+4 > len(in) {
		return 0, false
	}
	var r rune
	for _, c := range in[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

const hexDigits = "0123456789abcdef"

// appendU appends \uXXXX in lower-case hex.
func appendU(out []byte, r rune) []byte {
	return append(out, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
}

// appendControl appends the canonical escape of '"', '\\' or a control
// character.
func appendControl(out []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(out, '\\', c)
	case '\b':
		return append(out, '\\', 'b')
	case '\f':
		return append(out, '\\', 'f')
	case '\n':
		return append(out, '\\', 'n')
	case '\r':
		return append(out, '\\', 'r')
	case '\t':
		return append(out, '\\', 't')
	}
	return appendU(out, rune(c))
}

// unescape appends to dst the text of canonical string content s: escapes
// decoded, a lone surrogate as U+FFFD.
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		switch s[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := hex4(s, i+1)
			i += 4
			if r >= 0xD800 && r < 0xE000 {
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"' or '\\'
			dst = append(dst, s[i])
		}
	}
	return dst
}
