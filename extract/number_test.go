package extract

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestReadIntegral(t *testing.T) {
	tests := []struct {
		in         string
		n          int64
		fractional bool
		err        error
	}{
		{"2", 2, false, nil},
		{"2.0", 2, false, nil},
		{"2.000", 2, false, nil},
		{"1e1", 10, false, nil},
		{"1E+1", 10, false, nil},
		{"20e-1", 2, false, nil},
		{"0.02e2", 2, false, nil},
		{"1000e-3", 1, false, nil},
		{"007", 7, false, nil},
		{"0", 0, false, nil},
		{"-0", 0, false, nil},
		{"-0.000", 0, false, nil},
		{"0e999999999999999999999999", 0, false, nil},
		{"-15.0", -15, false, nil},
		{"2.5", 3, true, nil},
		{"2.533333333333333", 3, true, nil},
		{"1e-1", 1, true, nil},
		{"0.5", 1, true, nil},
		{"-0.5", 0, true, nil},
		{"-2.5", -2, true, nil},
		{"25e-1", 3, true, nil},
		{"1e-999999999999999999999999", 1, true, nil},
		{"999999999999999999", 999999999999999999, false, nil},
		{"999999999999999998.5", 999999999999999999, true, nil},
		{"1e18", math.MaxInt64, false, errNumberRange},
		{"1e999999999999999999999999", math.MaxInt64, false, errNumberRange},
		{"-1e999999999999999999999999", math.MinInt64, false, errNumberRange},
		{"4294967296", 4294967296, false, nil},
		{"", 0, false, errNumberSyntax},
		{"-", 0, false, errNumberSyntax},
		{"1.", 0, false, errNumberSyntax},
		{".5", 0, false, errNumberSyntax},
		{"1e", 0, false, errNumberSyntax},
		{"1e+", 0, false, errNumberSyntax},
		{"+1", 0, false, errNumberSyntax},
		{"0x10", 0, false, errNumberSyntax},
		{" 1", 0, false, errNumberSyntax},
		{"1 ", 0, false, errNumberSyntax},
		{"1.5.5", 0, false, errNumberSyntax},
		{"NaN", 0, false, errNumberSyntax},
		{"Infinity", 0, false, errNumberSyntax},
		{"--1", 0, false, errNumberSyntax},
	}
	for _, tt := range tests {
		n, frac, err := readIntegral(tt.in)
		if n != tt.n || frac != tt.fractional || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("readIntegral(%q) = %d, %v, %v; want %d, %v, %v", tt.in, n, frac, err, tt.n, tt.fractional, tt.err)
		}
	}
}

// TestReadIntegralHugeExponents: an exponent or a run of digits of any
// length costs time linear in the text, never a big number.
func TestReadIntegralHugeExponents(t *testing.T) {
	const size = 1 << 20
	huge := strings.Repeat("9", size)
	zeros := strings.Repeat("0", size)
	for _, tt := range []struct {
		in   string
		want integralWant
	}{
		{"1e" + huge, integralWant{math.MaxInt64, false, errNumberRange}},
		{"-1e" + huge, integralWant{math.MinInt64, false, errNumberRange}},
		{"1e-" + huge, integralWant{1, true, nil}},
		{"-1e-" + huge, integralWant{0, true, nil}},
		{"0e" + huge, integralWant{}},
		{"1" + zeros + "e-" + strconv.Itoa(size), integralWant{1, false, nil}},
		{"2." + zeros, integralWant{2, false, nil}},
		{"0." + zeros + "1", integralWant{1, true, nil}},
		{"1" + zeros, integralWant{math.MaxInt64, false, errNumberRange}},
		{"0" + zeros + "7", integralWant{7, false, nil}},
	} {
		start := time.Now()
		n, frac, err := readIntegral(tt.in)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("readIntegral of %d bytes took %v", len(tt.in), d)
		}
		if n != tt.want.n || frac != tt.want.fractional || !errors.Is(err, tt.want.err) || (tt.want.err == nil) != (err == nil) {
			t.Errorf("readIntegral(%.20q… %d bytes) = %d, %v, %v; want %+v", tt.in, len(tt.in), n, frac, err, tt.want)
		}
	}
}

// integralWant is what readIntegral should return for a number.
type integralWant struct {
	n          int64
	fractional bool
	err        error
}

// expectIntegral computes readIntegral's answer for a well-formed number
// with math/big, by value: the exponent is reduced first, so the huge ones
// of TestReadIntegralHugeExponents cost nothing either.
func expectIntegral(t *testing.T, s string) integralWant {
	t.Helper()
	mant, expText, _ := strings.Cut(strings.ToLower(s), "e")
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	intPart, fracPart, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+fracPart, "0")
	if digits == "" {
		return integralWant{}
	}
	// value = digits * 10^exp
	exp := big.NewInt(-int64(len(fracPart)))
	if expText != "" {
		e, ok := new(big.Int).SetString(strings.TrimPrefix(expText, "+"), 10)
		if !ok {
			t.Fatalf("bad exponent in %.40q", s)
		}
		exp.Add(exp, e)
	}
	trimmed := strings.TrimRight(digits, "0")
	exp.Add(exp, big.NewInt(int64(len(digits)-len(trimmed))))
	digits = trimmed
	intLen := new(big.Int).Add(exp, big.NewInt(int64(len(digits))))
	fractional := exp.Sign() < 0
	switch {
	case intLen.Cmp(big.NewInt(maxIntegralDigits)) > 0:
		if neg {
			return integralWant{math.MinInt64, fractional, errNumberRange}
		}
		return integralWant{math.MaxInt64, fractional, errNumberRange}
	case intLen.Sign() <= 0: // between -1 and 1, not 0
		if neg {
			return integralWant{0, true, nil}
		}
		return integralWant{1, true, nil}
	}
	// The exponent is now between -len(digits) and 18: compute exactly.
	r, ok := new(big.Rat).SetString(digits + "e" + exp.String())
	if !ok {
		t.Fatalf("big.Rat cannot read %s", digits+"e"+exp.String())
	}
	if neg {
		r.Neg(r)
	}
	q := new(big.Int).Quo(r.Num(), r.Denom()) // truncated toward zero
	if !r.IsInt() && r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return integralWant{q.Int64(), !r.IsInt(), nil}
}

// TestReadIntegralProperties: generated numbers in every spelling JSON and
// PHP use (signs, leading zeros in strings, fractions of any length,
// exponents either way) read as math/big reads them: integral ones as that
// integer, the others as their ceiling and fractional; and every spelling
// of one integer reads as it.
func TestReadIntegralProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 2))
	digits := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		return b.String()
	}
	for range 20000 {
		var b strings.Builder
		if rng.IntN(3) == 0 {
			b.WriteByte('-')
		}
		b.WriteString(digits(1 + rng.IntN(20)))
		if rng.IntN(2) == 0 {
			b.WriteString("." + digits(1+rng.IntN(20)))
		}
		if rng.IntN(2) == 0 {
			b.WriteString([]string{"e", "E"}[rng.IntN(2)] + []string{"", "+", "-"}[rng.IntN(3)] + strconv.Itoa(rng.IntN(40)))
		}
		s := b.String()
		n, frac, err := readIntegral(s)
		want := expectIntegral(t, s)
		if n != want.n || frac != want.fractional || !errors.Is(err, want.err) || (want.err == nil) != (err == nil) {
			t.Fatalf("readIntegral(%q) = %d, %v, %v; want %+v", s, n, frac, err, want)
		}
	}
	// Every spelling of an integer is that integer, and adding a non-zero
	// digit after its last one makes it fractional, rounded up.
	for range 20000 {
		k := rng.Int64N(1_000_000_000_000_000) * int64(1-2*rng.IntN(2))
		text := strconv.FormatInt(k, 10)
		sign, abs := "", strings.TrimPrefix(text, "-")
		if k < 0 {
			sign = "-"
		}
		shift := rng.IntN(25)
		var spelling string
		switch rng.IntN(4) {
		case 0: // trailing zeros of a fraction: 2.000
			spelling = text + "." + strings.Repeat("0", 1+shift)
		case 1: // digits times a negative exponent: 20e-1
			spelling = text + strings.Repeat("0", shift) + "e-" + strconv.Itoa(shift)
		case 2: // a decimal point moved left, the exponent moving it back: 0.02e2
			padded := strings.Repeat("0", shift+1) + abs
			cut := len(padded) - shift
			spelling = fmt.Sprintf("%s%s.%se%d", sign, padded[:cut], padded[cut:]+"0", shift)
			if shift == 0 {
				spelling = fmt.Sprintf("%s%s.0e0", sign, padded)
			}
		default: // exponent form of the integer with its zeros: 1e1
			trimmed := strings.TrimRight(abs, "0")
			if trimmed == "" {
				trimmed = "0"
			}
			spelling = fmt.Sprintf("%s%se%d", sign, trimmed, len(abs)-len(trimmed))
		}
		n, frac, err := readIntegral(spelling)
		if n != k || frac || err != nil {
			t.Fatalf("readIntegral(%q) = %d, %v, %v; want the integer %d", spelling, n, frac, err, k)
		}
		withFraction := text + "." + strings.Repeat("0", shift) + strconv.Itoa(1+rng.IntN(9))
		want := k + 1
		if k < 0 {
			want = k
		}
		if n, frac, err := readIntegral(withFraction); n != want || !frac || err != nil {
			t.Fatalf("readIntegral(%q) = %d, %v, %v; want %d and fractional", withFraction, n, frac, err, want)
		}
	}
}

// FuzzReadIntegral: readIntegral never panics, agrees with math/big on
// every well-formed number and refuses everything else.
//
//	go test -run '^$' -fuzz '^FuzzReadIntegral$' -fuzztime 30s ./extract/
func FuzzReadIntegral(f *testing.F) {
	for _, s := range []string{"2", "2.0", "1e1", "20e-1", "2.5", "1e-1", "-0.5", "007", "1e999999999999999999", "", ".5", "1e", "+1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, frac, err := readIntegral(s)
		if !numberText(s) {
			if !errors.Is(err, errNumberSyntax) {
				t.Fatalf("readIntegral(%q) = %d, %v, %v; want errNumberSyntax", s, n, frac, err)
			}
			return
		}
		want := expectIntegral(t, s)
		if n != want.n || frac != want.fractional || !errors.Is(err, want.err) || (want.err == nil) != (err == nil) {
			t.Fatalf("readIntegral(%q) = %d, %v, %v; want %+v", s, n, frac, err, want)
		}
	})
}

// numberText reports whether s is -?digits(.digits)?([eE][+-]?digits)?,
// by another route than readIntegral's.
func numberText(s string) bool {
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		exp = strings.TrimLeft(exp[:min(1, len(exp))], "+-") + exp[min(1, len(exp)):]
		if exp == "" || strings.Trim(exp, "0123456789") != "" {
			return false
		}
	}
	mant = strings.TrimPrefix(mant, "-")
	intPart, fracPart, hasFrac := strings.Cut(mant, ".")
	if intPart == "" || strings.Trim(intPart, "0123456789") != "" {
		return false
	}
	return !hasFrac || fracPart != "" && strings.Trim(fracPart, "0123456789") == ""
}
