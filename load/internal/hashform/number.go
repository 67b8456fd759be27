package hashform

import (
	"math/big"
	"strconv"
)

// plainCanonical is a quick yes for the usual numbers already in their
// canonical form: an integer not starting with 0 and with at most
// plainZeros trailing zeros (-7, 1003), or a decimal whose integer part
// does not start with 0 and whose fraction does not end in 0 (12.5). Any
// other number is left to canonicalNumber.
func plainCanonical(t []byte) bool {
	i := 0
	if i < len(t) && t[i] == '-' {
		i++
	}
	if i >= len(t) || t[i] < '1' || t[i] > '9' {
		return false
	}
	zeros := 0
	for ; i < len(t) && t[i] >= '0' && t[i] <= '9'; i++ {
		if t[i] == '0' {
			zeros++
		} else {
			zeros = 0
		}
	}
	if i == len(t) {
		return zeros <= plainZeros
	}
	if t[i] != '.' {
		return false
	}
	i++
	fs := i
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i == len(t) && i > fs && t[i-1] != '0'
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// numberParts is a JSON number cut at its sign, decimal point and
// exponent: -intPart.frac e(-)exp, each part as written.
type numberParts struct {
	neg     bool
	intPart []byte
	frac    []byte // empty when there is no decimal point
	expNeg  bool
	exp     []byte // empty when there is no exponent
}

// splitNumber cuts the JSON number t into its parts; ok is false when t
// is not a JSON number.
func splitNumber(t []byte) (p numberParts, ok bool) {
	i := 0
	p.neg = i < len(t) && t[i] == '-'
	if p.neg {
		i++
	}
	is := i
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	p.intPart = t[is:i]
	if len(p.intPart) == 0 || len(p.intPart) > 1 && p.intPart[0] == '0' {
		return p, false
	}
	if i < len(t) && t[i] == '.' {
		i++
		fs := i
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if p.frac = t[fs:i]; len(p.frac) == 0 {
			return p, false
		}
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			p.expNeg = t[i] == '-'
			i++
		}
		es := i
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if p.exp = t[es:i]; len(p.exp) == 0 {
			return p, false
		}
	}
	return p, i == len(t)
}

// canonicalNumber appends to dst the hash form of the JSON number t, a
// function of its exact value ±D×10^E (D the significant digits, without
// leading or trailing zeros): 0 for any zero (-0, 0.0, 0e5); D and E zeros
// for an integer with at most plainZeros trailing zeros (100, 1e2 and
// 100.0 are 100); D with a decimal point for a fraction with at most
// plainZeros zeros after the point before its digits (1.5, 0.005); and
// D, 'e' and E otherwise (1e33, 15e39, 1e-40), the exponent computed
// exactly however many digits it has. ok is false when t is not a JSON
// number.
func canonicalNumber(dst, t []byte) (_ []byte, ok bool) {
	p, ok := splitNumber(t)
	if !ok {
		return dst, false
	}
	neg, intPart, frac, exp, expNeg := p.neg, p.intPart, p.frac, p.exp, p.expNeg
	// The significant digits: intPart then frac, without leading zeros
	// (lead counts them) or trailing ones (trail).
	n := len(intPart) + len(frac)
	at := func(k int) byte {
		if k < len(intPart) {
			return intPart[k]
		}
		return frac[k-len(intPart)]
	}
	lead := 0
	for lead < n && at(lead) == '0' {
		lead++
	}
	if lead == n {
		return append(dst, '0'), true
	}
	trail := 0
	for at(n-1-trail) == '0' {
		trail++
	}
	digits := n - lead - trail
	if neg {
		dst = append(dst, '-')
	}
	appendDigits := func(dst []byte) []byte {
		for k := lead; k < n-trail; k++ {
			dst = append(dst, at(k))
		}
		return dst
	}
	// E = exp - len(frac) + trail, in an int64 while exp has at most 15
	// digits (after its leading zeros), else exactly in a big.Int.
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:]
	}
	shift := int64(trail) - int64(len(frac))
	if len(exp) > 15 {
		e := new(big.Int)
		e.SetString(string(exp), 10)
		if expNeg {
			e.Neg(e)
		}
		e.Add(e, big.NewInt(shift))
		dst = appendDigits(dst)
		dst = append(dst, 'e')
		return e.Append(dst, 10), true
	}
	var e int64 // 0 for no exponent
	for _, c := range exp {
		e = e*10 + int64(c-'0')
	}
	if expNeg {
		e = -e
	}
	e += shift
	switch {
	case e >= 0 && e <= plainZeros:
		dst = appendDigits(dst)
		for range e {
			dst = append(dst, '0')
		}
	case e < 0 && -e < int64(digits):
		point := n - trail + int(e)
		for k := lead; k < n-trail; k++ {
			if k == point {
				dst = append(dst, '.')
			}
			dst = append(dst, at(k))
		}
	case e < 0 && -e-int64(digits) <= plainZeros:
		dst = append(dst, '0', '.')
		for range -e - int64(digits) {
			dst = append(dst, '0')
		}
		dst = appendDigits(dst)
	default:
		dst = appendDigits(dst)
		dst = append(dst, 'e')
		dst = strconv.AppendInt(dst, e, 10)
	}
	return dst, true
}

// formParser writes the hash form of any JSON document (whitespace,
