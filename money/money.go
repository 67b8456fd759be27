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
	if scale < 0 || scale > MaxScale {
		return Amount{}, fmt.Errorf("%w: scale %d out of range 0..%d", ErrInvalid, scale, MaxScale)
	}
	if s == "" {
		return Amount{}, fmt.Errorf("%w: empty text", ErrInvalid)
	}
	if len(s) > 64 {
		return Amount{}, fmt.Errorf("%w: %d characters is too long for an amount", ErrInvalid, len(s))
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
			return Amount{}, fmt.Errorf("%w: %q has no digits after the decimal point", ErrInvalid, s)
		}
	}
	if intPart == "" {
		return Amount{}, fmt.Errorf("%w: %q does not start with a digit", ErrInvalid, s)
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
			return Amount{}, fmt.Errorf("%w: %q has a malformed exponent", ErrInvalid, s)
		}
		exp, _ = strconv.Atoi(digits)
		if eneg {
			exp = -exp
		}
		rest = after
	}
	if rest != "" {
		return Amount{}, fmt.Errorf("%w: %q is not a plain decimal number", ErrInvalid, s)
	}
	// Value = 0.intPart fracPart digits shifted: mantissa digits m with
	// (len(frac) - exp) decimals. Bring to exactly `scale` decimals.
	mant := strings.TrimLeft(intPart+fracPart, "0")
	decimals := len(fracPart) - exp
	shift := scale - decimals // multiply mantissa by 10^shift
	if shift < 0 {
		drop := -shift
		if drop > len(mant) {
			drop = len(mant)
		}
		tail := mant[len(mant)-drop:]
		if strings.Trim(tail, "0") != "" {
			return Amount{}, fmt.Errorf("%w: %q has more than %d decimals", ErrInvalid, s, scale)
		}
		mant = mant[:len(mant)-drop]
		shift = 0
	}
	if mant == "" {
		return Amount{minor: 0, scale: scale}, nil
	}
	if len(mant)+shift > 19 {
		return Amount{}, fmt.Errorf("%w: %q does not fit in 64-bit minor units", ErrInvalid, s)
	}
	u, err := strconv.ParseUint(mant+strings.Repeat("0", shift), 10, 64)
	if err != nil {
		return Amount{}, fmt.Errorf("%w: %q does not fit in 64-bit minor units", ErrInvalid, s)
	}
	switch {
	case !neg && u > math.MaxInt64, neg && u > uint64(math.MaxInt64)+1:
		return Amount{}, fmt.Errorf("%w: %q does not fit in 64-bit minor units", ErrInvalid, s)
	}
	var minor int64
	if neg {
		minor = int64(-u) // two's complement: exact for u <= 2^63
	} else {
		minor = int64(u)
	}
	return Amount{minor: minor, scale: scale}, nil
}

// ParseJSON reads an amount from a JSON value: a string holding decimal text,
// or a number. A JSON null gives (nil, nil): an unknown amount is never zero.
// Booleans, objects, arrays and empty strings are rejected.
func ParseJSON(raw []byte, scale int) (*Amount, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: no JSON value", ErrInvalid)
	}
	switch raw[0] {
	case 'n':
		if string(raw) == "null" {
			return nil, nil
		}
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		a, err := Parse(s, scale)
		if err != nil {
			return nil, err
		}
		return &a, nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if !json.Valid(raw) {
			return nil, fmt.Errorf("%w: %q is not a JSON number", ErrInvalid, raw)
		}
		a, err := Parse(string(raw), scale)
		if err != nil {
			return nil, err
		}
		return &a, nil
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
	return nil, fmt.Errorf("%w: a JSON %s is not an amount", ErrInvalid, kind)
}

func takeDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}
