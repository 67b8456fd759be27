package postgres

import (
	"fmt"
	"strconv"
)

// PostgreSQL's numeric, which holds every JSON number of a jsonb document,
// keeps at most numericMaxIntDigits digits before the decimal point and
// numericMaxScale after it (its display scale: the digits after the point
// as written, trailing zeros included, less the exponent); an exponent
// of numericMaxExponent or more (in either direction) is refused before
// anything else, even for zero.
const (
	numericMaxIntDigits = 131072
	numericMaxScale     = 16383
	numericMaxExponent  = 1<<30 - 1 // INT_MAX/2
)

// jsonbUnstorable says why PostgreSQL's jsonb refuses data, a valid JSON
// document (a card as load prepared it), or "": a \u0000 escape (text
// cannot hold NUL), a UTF-16 surrogate escape not in a pair (a lone
// "\ud800" or "\udc00", in a key or a value, at any depth) or a number
// beyond numeric's range. It scans the text (no number is converted), so
// one such card is quarantined alone instead of failing its page. SQLite
// stores these documents as they are.
func jsonbUnstorable(data []byte) string {
	for i := 0; i < len(data); {
		switch c := data[i]; {
		case c == '"':
			n, why := scanJSONString(data[i:])
			if why != "" {
				return "cannot be stored: " + why + ", which PostgreSQL jsonb refuses"
			}
			i += n
		case c == '-' || c >= '0' && c <= '9':
			n, why := scanJSONNumber(data[i:])
			if why != "" {
				return "cannot be stored: " + why + ", beyond PostgreSQL numeric's range (jsonb)"
			}
			i += n
		default:
			i++
		}
	}
	return ""
}

// scanJSONString reads the string at the start of s (s[0] is its quote)
// and returns its length in bytes and what jsonb refuses in it, if any.
func scanJSONString(s []byte) (int, string) {
	pendingHigh := false // the previous escape was a high surrogate
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '"':
			if pendingHigh {
				return i + 1, `a string holds a lone UTF-16 surrogate escape (\ud800–\udbff not followed by \udc00–\udfff)`
			}
			return i + 1, ""
		case '\\':
			if i+1 >= len(s) {
				return len(s), ""
			}
			if s[i+1] != 'u' || i+5 >= len(s) {
				if pendingHigh {
					return i, `a string holds a lone UTF-16 surrogate escape (\ud800–\udbff not followed by \udc00–\udfff)`
				}
				i++
				continue
			}
			r, err := strconv.ParseUint(string(s[i+2:i+6]), 16, 16)
			if err != nil {
				i += 5
				continue
			}
			switch {
			case r == 0:
				return i, `a string holds \u0000`
			case r >= 0xD800 && r <= 0xDBFF:
				if pendingHigh {
					return i, `a string holds a lone UTF-16 surrogate escape (\ud800–\udbff not followed by \udc00–\udfff)`
				}
				pendingHigh = true
			case r >= 0xDC00 && r <= 0xDFFF:
				if !pendingHigh {
					return i, `a string holds a lone UTF-16 surrogate escape (\udc00–\udfff without \ud800–\udbff before it)`
				}
				pendingHigh = false
			default:
				if pendingHigh {
					return i, `a string holds a lone UTF-16 surrogate escape (\ud800–\udbff not followed by \udc00–\udfff)`
				}
			}
			i += 5
		default:
			if pendingHigh {
				return i, `a string holds a lone UTF-16 surrogate escape (\ud800–\udbff not followed by \udc00–\udfff)`
			}
		}
	}
	return len(s), ""
}

// scanJSONNumber reads the number at the start of s and returns its length
// and, when numeric cannot hold it, what it is.
func scanJSONNumber(s []byte) (int, string) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intDigits := s[intStart:i]
	var fracDigits []byte
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		fracDigits = s[start:i]
	}
	exp, expTooBig := int64(0), false
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		neg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			neg = s[i] == '-'
			i++
		}
		for ; i < len(s) && isDigit(s[i]); i++ {
			if exp < numericMaxExponent {
				exp = exp*10 + int64(s[i]-'0')
			}
		}
		if exp >= numericMaxExponent {
			expTooBig = true
		}
		if neg {
			exp = -exp
		}
	}
	text := s[:i]
	if expTooBig {
		return i, fmt.Sprintf("a number (%s) has an exponent beyond ±%d", shortNumber(text), numericMaxExponent-1)
	}
	if scale := int64(len(fracDigits)) - exp; scale > numericMaxScale {
		return i, fmt.Sprintf("a number (%s) has %d digits after the decimal point, more than %d", shortNumber(text), scale, numericMaxScale)
	}
	lead, ok := leadingPower(intDigits, fracDigits)
	if ok && lead+exp >= numericMaxIntDigits {
		return i, fmt.Sprintf("a number (%s) has %d digits before the decimal point, more than %d", shortNumber(text), lead+exp+1, numericMaxIntDigits)
	}
	return i, ""
}

// leadingPower is the power of ten of the first non-zero digit of
// intDigits.fracDigits, and false when every digit is zero.
func leadingPower(intDigits, fracDigits []byte) (int64, bool) {
	for k, d := range intDigits {
		if d != '0' {
			return int64(len(intDigits) - 1 - k), true
		}
	}
	for k, d := range fracDigits {
		if d != '0' {
			return -int64(k + 1), true
		}
	}
	return 0, false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// shortNumber is a number's text for a message: cut to 40 bytes.
func shortNumber(b []byte) string {
	if len(b) > 40 {
		return string(b[:20]) + "…" + string(b[len(b)-12:])
	}
	return string(b)
}
