package extract

import (
	"errors"
	"math"
)

// errNumberRange is returned by readIntegral for a number whose integer
// part has more than maxIntegralDigits digits.
var errNumberRange = errors.New("number out of range")

// errNumberSyntax is returned by readIntegral for text that is not a
// decimal number.
var errNumberSyntax = errors.New("not a decimal number")

// maxIntegralDigits is the most digits readIntegral's integer part may
// have: every such number, and its ceiling, fits an int64.
const maxIntegralDigits = 18

// readIntegral reads s, a decimal number as JSON writes one (an optional
// "-", digits, an optional fraction, an optional exponent: "2", "2.0",
// "1e1", "20e-1", "-0.5"; leading zeros are allowed, so a string such as
// "007" reads as 7), exactly: no float64, whatever the digits or the
// exponent. It returns the number when it is an integer (2.000 and 20e-1
// are 2), else its ceiling, the next integer up (2.5 gives 3, -2.5 gives
// -2), with fractional true. The work is linear in len(s): an exponent of
// any size costs no more than its digits. A number whose integer part has
// more than 18 digits gives errNumberRange, with n the largest int64 of its
// sign (so a caller may cap it); text that is no number gives
// errNumberSyntax.
func readIntegral(s string) (n int64, fractional bool, err error) {
	i := 0
	neg := i < len(s) && s[i] == '-'
	if neg {
		i++
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intDigits := s[intStart:i]
	if intDigits == "" {
		return 0, false, errNumberSyntax
	}
	var fracDigits string
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if fracDigits = s[start:i]; fracDigits == "" {
			return 0, false, errNumberSyntax
		}
	}
	// exp is the exponent, saturated far beyond any length of s so that
	// no sum below can overflow.
	const expCap = 1 << 40
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNeg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			expNeg = s[i] == '-'
			i++
		}
		start := i
		for ; i < len(s) && isDigit(s[i]); i++ {
			if exp < expCap {
				exp = exp*10 + int64(s[i]-'0')
			}
		}
		if i == start {
			return 0, false, errNumberSyntax
		}
		exp = min(exp, expCap)
		if expNeg {
			exp = -exp
		}
	}
	if i != len(s) {
		return 0, false, errNumberSyntax
	}
	// The number is the digits d (integer and fraction together, without
	// leading or trailing zeros) times 10^e.
	d := trimLeadingZeros(intDigits + fracDigits)
	e := exp - int64(len(fracDigits))
	if d == "" {
		return 0, false, nil // 0, -0.000, 0e99999
	}
	for d[len(d)-1] == '0' {
		d = d[:len(d)-1]
		e++
	}
	// Digits of the integer part: all of d and e zeros, or the first
	// len(d)+e of d when e < 0 (none when that is not positive).
	intLen := int64(len(d)) + e
	fractional = e < 0 // d ends in a non-zero digit
	if intLen > maxIntegralDigits {
		if neg {
			return math.MinInt64, fractional, errNumberRange
		}
		return math.MaxInt64, fractional, errNumberRange
	}
	for k := int64(0); k < intLen; k++ {
		digit := int64(0)
		if k < int64(len(d)) {
			digit = int64(d[k] - '0')
		}
		n = n*10 + digit
	}
	if neg {
		n = -n
	}
	if fractional && !neg {
		n++ // the ceiling of a positive fraction; a negative one's is its integer part
	}
	return n, fractional, nil
}

func trimLeadingZeros(s string) string {
	for len(s) > 0 && s[0] == '0' {
		s = s[1:]
	}
	return s
}
