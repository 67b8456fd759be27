package money

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxScale is the largest number of decimals an Amount can carry.
const MaxScale = 18

// ErrInvalid is wrapped by every error that rejects an amount's text.
var ErrInvalid = errors.New("invalid amount")

// Amount is an exact decimal held as an integer count of minor units
// (for scale 2, cents). The zero value is 0 at scale 0.
type Amount struct {
	minor int64
	scale int
}

// FromMinor returns the amount minor / 10^scale.
func FromMinor(minor int64, scale int) Amount {
	return Amount{minor: minor, scale: scale}
}

// Minor returns the amount in integer minor units.
func (a Amount) Minor() int64 { return a.minor }

// Scale returns the number of decimals of the amount.
func (a Amount) Scale() int { return a.scale }

// String returns the canonical decimal text: an optional minus sign, at least
// one integer digit and exactly Scale decimals ("98765.40", "-0.07", "0.00").
func (a Amount) String() string {
	neg := a.minor < 0
	var digits string
	if neg {
		// Negate through uint64 so math.MinInt64 has a representation.
		digits = strconv.FormatUint(uint64(-(a.minor+1))+1, 10)
	} else {
		digits = strconv.FormatInt(a.minor, 10)
	}
	if a.scale > 0 {
		if len(digits) <= a.scale {
			digits = strings.Repeat("0", a.scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-a.scale] + "." + digits[len(digits)-a.scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// Parse reads decimal text exactly at the given scale. It accepts an optional
// leading minus, digits with an optional fraction, and an optional exponent
// ("1.5e2"), as JSON numbers are written. Decimals beyond the scale are
// accepted only when they are zeros, since dropping them loses nothing. It
// rejects empty text, signs other than a single leading minus, grouping
// separators, NaN and infinities, and values whose minor units overflow int64.
func Parse(s string, scale int) (Amount, error) {
	a, _, err := parse(s, scale, false)
	return a, err
}

// ParseRound is Parse, except that decimals beyond the scale are rounded
// half to even instead of refused: "1234.5600000000002" at scale 2 is
// 1234.56, "0.125" is 0.12 and "0.135" is 0.14. rounded reports whether the
// value changed. It is for servers that send binary floating-point noise
// (PHP's json_encode of a float); the caller keeps the exact text elsewhere.
func ParseRound(s string, scale int) (a Amount, rounded bool, err error) {
	return parse(s, scale, true)
}

func parse(s string, scale int, round bool) (Amount, bool, error) {
	if scale < 0 || scale > MaxScale {
		return Amount{}, false, fmt.Errorf("%w: scale %d out of range 0..%d", ErrInvalid, scale, MaxScale)
	}
	if s == "" {
		return Amount{}, false, fmt.Errorf("%w: empty text", ErrInvalid)
	}
	if len(s) > 64 {
		return Amount{}, false, fmt.Errorf("%w: %d characters is too long for an amount", ErrInvalid, len(s))
	}
	rest := s
	neg := false
	if rest[0] == '-' {
		neg = true
		rest = rest[1:]
	}
	intPart, rest := takeDigits(rest)
	var fracPart string
	if rest != "" && rest[0] == '.' {
		fracPart, rest = takeDigits(rest[1:])
		if fracPart == "" {
			return Amount{}, false, fmt.Errorf("%w: %q has no digits after the decimal point", ErrInvalid, s)
		}
	}
	if intPart == "" {
		return Amount{}, false, fmt.Errorf("%w: %q does not start with a digit", ErrInvalid, s)
	}
	exp := 0
	if rest != "" && (rest[0] == 'e' || rest[0] == 'E') {
		e := rest[1:]
		eneg := false
		if e != "" && (e[0] == '+' || e[0] == '-') {
			eneg = e[0] == '-'
			e = e[1:]
		}
		digits, after := takeDigits(e)
		if digits == "" || after != "" || len(digits) > 4 {
			return Amount{}, false, fmt.Errorf("%w: %q has a malformed exponent", ErrInvalid, s)
		}
		exp, _ = strconv.Atoi(digits)
		if eneg {
			exp = -exp
		}
		rest = after
	}
	if rest != "" {
		return Amount{}, false, fmt.Errorf("%w: %q is not a plain decimal number", ErrInvalid, s)
	}
	// Value = mantissa digits m with (len(frac) - exp) decimals. Bring it to
	// exactly `scale` decimals.
	mant := strings.TrimLeft(intPart+fracPart, "0")
	decimals := len(fracPart) - exp
	shift := scale - decimals // multiply mantissa by 10^shift
	rounded := false
	if shift < 0 {
		drop := -shift
		var tail string
		if drop >= len(mant) {
			tail = strings.Repeat("0", drop-len(mant)) + mant
			mant = ""
		} else {
			tail = mant[len(mant)-drop:]
			mant = mant[:len(mant)-drop]
		}
		if strings.Trim(tail, "0") != "" {
			if !round {
				return Amount{}, false, fmt.Errorf("%w: %q has more than %d decimals", ErrInvalid, s, scale)
			}
			rounded = true
			if roundsUp(mant, tail) {
				mant = incrementDigits(mant)
			}
		}
		shift = 0
	}
	mant = strings.TrimLeft(mant, "0")
	if mant == "" {
		return Amount{minor: 0, scale: scale}, rounded, nil
	}
	if len(mant)+shift > 19 {
		return Amount{}, false, fmt.Errorf("%w: %q does not fit in 64-bit minor units", ErrInvalid, s)
	}
	u, err := strconv.ParseUint(mant+strings.Repeat("0", shift), 10, 64)
	if err != nil {
		return Amount{}, false, fmt.Errorf("%w: %q does not fit in 64-bit minor units", ErrInvalid, s)
	}
	switch {
	case !neg && u > math.MaxInt64, neg && u > uint64(math.MaxInt64)+1:
		return Amount{}, false, fmt.Errorf("%w: %q does not fit in 64-bit minor units", ErrInvalid, s)
	}
	var minor int64
	if neg {
		minor = int64(-u) // two's complement: exact for u <= 2^63
	} else {
		minor = int64(u)
	}
	return Amount{minor: minor, scale: scale}, rounded, nil
}

// roundsUp decides half-to-even rounding of kept digits followed by the
// dropped tail (not all zeros): up above one half, down below it, and at
// exactly one half up only when the last kept digit is odd.
func roundsUp(kept, tail string) bool {
	switch {
	case tail[0] > '5':
		return true
	case tail[0] < '5':
		return false
	case strings.Trim(tail[1:], "0") != "":
		return true
	}
	return kept != "" && (kept[len(kept)-1]-'0')%2 == 1
}

// incrementDigits adds one to a decimal digit string ("" is 0).
func incrementDigits(d string) string {
	b := []byte(d)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < '9' {
			b[i]++
			return string(b)
		}
		b[i] = '0'
	}
	return "1" + string(b)
}

// ParseJSON reads an amount from a JSON value: a string holding decimal text,
// or a number. A JSON null gives (nil, nil): an unknown amount is never zero.
// Booleans, objects, arrays and empty strings are rejected.
func ParseJSON(raw []byte, scale int) (*Amount, error) {
	a, _, err := parseJSON(raw, scale, false)
	return a, err
}

// ParseJSONRound is ParseJSON with ParseRound's half-to-even rounding of
// decimals beyond the scale; rounded reports whether the value changed.
func ParseJSONRound(raw []byte, scale int) (a *Amount, rounded bool, err error) {
	return parseJSON(raw, scale, true)
}

func parseJSON(raw []byte, scale int, round bool) (*Amount, bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false, fmt.Errorf("%w: no JSON value", ErrInvalid)
	}
	switch raw[0] {
	case 'n':
		if string(raw) == "null" {
			return nil, false, nil
		}
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		a, rounded, err := parse(s, scale, round)
		if err != nil {
			return nil, false, err
		}
		return &a, rounded, nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if !json.Valid(raw) {
			return nil, false, fmt.Errorf("%w: %q is not a JSON number", ErrInvalid, raw)
		}
		a, rounded, err := parse(string(raw), scale, round)
		if err != nil {
			return nil, false, err
		}
		return &a, rounded, nil
	}
	kind := "value"
	switch raw[0] {
	case 't', 'f':
		kind = "boolean"
	case '{':
		kind = "object"
	case '[':
		kind = "array"
	}
	return nil, false, fmt.Errorf("%w: a JSON %s is not an amount", ErrInvalid, kind)
}

func takeDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}
