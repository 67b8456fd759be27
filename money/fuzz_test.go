package money

import (
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// corpusStrings reads the string values of a go-fuzz corpus directory
// (testdata/fuzz/NAME), so one target's corpus seeds another.
func corpusStrings(f *testing.F, name string) []string {
	f.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", name, "*"))
	if err != nil {
		f.Fatal(err)
	}
	var out []string
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if q, ok := strings.CutPrefix(line, "string("); ok {
				if s, err := strconv.Unquote(strings.TrimSuffix(q, ")")); err == nil {
					out = append(out, s, strings.Trim(s, `"`))
				}
			}
		}
	}
	return out
}

// FuzzParse: decimal text at any scale is either refused with ErrInvalid or
// read exactly (the value equals the text's exact rational value, computed
// with math/big: no float64 anywhere), and then canonical text and parse
// round-trip: Parse(a.String()) == a and its text is a.String() again.
// ParseRound agrees with Parse whenever Parse accepts, and otherwise rounds
// to the nearest amount, half to even. Seeds: testdata/fuzz/FuzzParseJSON
// and the amounts PHP sends.
//
//	go test -run '^$' -fuzz '^FuzzParse$' -fuzztime 30s ./money/
func FuzzParse(f *testing.F) {
	for _, s := range corpusStrings(f, "FuzzParseJSON") {
		f.Add(s, 2)
	}
	for _, s := range []string{"0", "-0", "-0.00", "12.30", "1234.5600000000002", "0.30000000000000004", "1.5e2", "1e-5",
		"92233720368547758.07", "-92233720368547758.08", "92233720368547758.08", "0.125", "0.135", "-2.675", "9.999",
		"1,234.50", "+1", "NaN", "Infinity", "1e400", "00.1", ".5", "5.", "1E+2", "-"} {
		for _, scale := range []int{0, 2, 4} {
			f.Add(s, scale)
		}
	}
	f.Fuzz(func(t *testing.T, s string, scale int) {
		if scale < 0 || scale > MaxScale {
			return
		}
		unit := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
		value := func(a Amount) *big.Rat {
			return new(big.Rat).Quo(new(big.Rat).SetInt64(a.Minor()), unit)
		}
		a, err := Parse(s, scale)
		r, rounded, rerr := ParseRound(s, scale)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q, %d) error %v does not wrap ErrInvalid", s, scale, err)
			}
		} else {
			exact, ok := new(big.Rat).SetString(s)
			if !ok {
				t.Fatalf("Parse accepted %q, which math/big cannot read", s)
			}
			if value(a).Cmp(exact) != 0 || a.Scale() != scale {
				t.Fatalf("Parse(%q, %d) = %s, exact value %s", s, scale, a, exact.FloatString(scale+2))
			}
			text := a.String()
			back, err := Parse(text, scale)
			if err != nil || back != a || back.String() != text {
				t.Fatalf("canonical text %q of %q does not round-trip: %v, %v", text, s, back, err)
			}
			if rerr != nil || r != a || rounded {
				t.Fatalf("ParseRound(%q, %d) = %v, %v, %v; Parse gave %v", s, scale, r, rounded, rerr, a)
			}
			return
		}
		if rerr != nil {
			if !errors.Is(rerr, ErrInvalid) {
				t.Fatalf("ParseRound(%q, %d) error %v does not wrap ErrInvalid", s, scale, rerr)
			}
			return
		}
		// Parse refused, ParseRound accepted: only decimals beyond the
		// scale justify that, and the result is the nearest amount.
		exact, ok := new(big.Rat).SetString(s)
		if !ok || !rounded {
			t.Fatalf("ParseRound(%q, %d) = %v (rounded %v) where Parse refused: %v", s, scale, r, rounded, err)
		}
		diff := new(big.Rat).Sub(exact, value(r))
		half := new(big.Rat).Quo(big.NewRat(1, 2), unit)
		if new(big.Rat).Abs(diff).Cmp(half) > 0 {
			t.Fatalf("ParseRound(%q, %d) = %s, more than half a unit from %s", s, scale, r, exact.FloatString(scale+2))
		}
		text := r.String()
		if back, err := Parse(text, scale); err != nil || back != r {
			t.Fatalf("canonical text %q does not round-trip: %v, %v", text, back, err)
		}
	})
}
