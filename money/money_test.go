package money

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
)

func TestParseJSON(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		scale     int
		wantText  string
		wantMinor int64
		wantNull  bool
		wantErr   string
	}{
		{name: "string two decimals", in: `"0.10"`, scale: 2, wantText: "0.10", wantMinor: 10},
		{name: "number one decimal", in: `98765.4`, scale: 2, wantText: "98765.40", wantMinor: 9876540},
		{name: "number two decimals", in: `98765.40`, scale: 2, wantText: "98765.40", wantMinor: 9876540},
		{name: "integer number", in: `12`, scale: 2, wantText: "12.00", wantMinor: 1200},
		{name: "negative string", in: `"-12.07"`, scale: 2, wantText: "-12.07", wantMinor: -1207},
		{name: "negative below one", in: `-0.07`, scale: 2, wantText: "-0.07", wantMinor: -7},
		{name: "zero", in: `0`, scale: 2, wantText: "0.00", wantMinor: 0},
		{name: "negative zero", in: `"-0.00"`, scale: 2, wantText: "0.00", wantMinor: 0},
		{name: "sixteen digits", in: `12345678901234.56`, scale: 2, wantText: "12345678901234.56", wantMinor: 1234567890123456},
		{name: "beyond float precision", in: `9007199254740993`, scale: 0, wantText: "9007199254740993", wantMinor: 9007199254740993},
		{name: "float trap", in: `90071992547409.93`, scale: 2, wantText: "90071992547409.93", wantMinor: 9007199254740993},
		{name: "exponent", in: `1.5e2`, scale: 2, wantText: "150.00", wantMinor: 15000},
		{name: "negative exponent", in: `125E-2`, scale: 2, wantText: "1.25", wantMinor: 125},
		{name: "exponent in string", in: `"1e3"`, scale: 2, wantText: "1000.00", wantMinor: 100000},
		{name: "trailing zeros beyond scale", in: `"1.2300"`, scale: 2, wantText: "1.23", wantMinor: 123},
		{name: "whitespace around", in: " 5.5 ", scale: 2, wantText: "5.50", wantMinor: 550},
		{name: "max int64 minor", in: `"92233720368547758.07"`, scale: 2, wantText: "92233720368547758.07", wantMinor: math.MaxInt64},
		{name: "min int64 minor", in: `"-92233720368547758.08"`, scale: 2, wantText: "-92233720368547758.08", wantMinor: math.MinInt64},
		{name: "scale four", in: `"1.2345"`, scale: 4, wantText: "1.2345", wantMinor: 12345},
		{name: "null", in: `null`, scale: 2, wantNull: true},

		{name: "locale grouping", in: `"1,234.50"`, scale: 2, wantErr: "not a plain decimal"},
		{name: "NaN", in: `"NaN"`, scale: 2, wantErr: "does not start with a digit"},
		{name: "Infinity", in: `"Infinity"`, scale: 2, wantErr: "does not start with a digit"},
		{name: "boolean", in: `true`, scale: 2, wantErr: "boolean"},
		{name: "empty string", in: `""`, scale: 2, wantErr: "empty"},
		{name: "object", in: `{"amount":"1"}`, scale: 2, wantErr: "object"},
		{name: "array", in: `[1]`, scale: 2, wantErr: "array"},
		{name: "too many decimals", in: `"12.345"`, scale: 2, wantErr: "more than 2 decimals"},
		{name: "too many decimals number", in: `0.30000000000000004`, scale: 2, wantErr: "more than 2 decimals"},
		{name: "overflow", in: `"12345678901234567890.12"`, scale: 2, wantErr: "64-bit"},
		{name: "overflow by one", in: `"92233720368547758.08"`, scale: 2, wantErr: "64-bit"},
		{name: "huge exponent", in: `1e400`, scale: 2, wantErr: "64-bit"},
		{name: "exponent overflow", in: `1e17`, scale: 2, wantErr: "64-bit"},
		{name: "tiny exponent", in: `1e-5`, scale: 2, wantErr: "decimals"},
		{name: "leading plus", in: `"+1.00"`, scale: 2, wantErr: "does not start with a digit"},
		{name: "bare dot", in: `"1."`, scale: 2, wantErr: "no digits after"},
		{name: "leading dot", in: `".5"`, scale: 2, wantErr: "does not start with a digit"},
		{name: "currency sign", in: `"$1.00"`, scale: 2, wantErr: "does not start with a digit"},
		{name: "space inside", in: `"1 000.00"`, scale: 2, wantErr: "not a plain decimal"},
		{name: "invalid JSON number", in: `01.5`, scale: 2, wantErr: "not a JSON number"},
		{name: "empty input", in: ``, scale: 2, wantErr: "no JSON value"},
		{name: "bad scale", in: `1`, scale: 19, wantErr: "scale"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseJSON([]byte(tt.in), tt.scale)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseJSON(%s) = %v, want error containing %q", tt.in, got, tt.wantErr)
				}
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("error %v does not wrap ErrInvalid", err)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %q, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseJSON(%s): %v", tt.in, err)
			}
			if tt.wantNull {
				if got != nil {
					t.Fatalf("ParseJSON(null) = %v, want nil", got)
				}
				return
			}
			if got == nil {
				t.Fatalf("ParseJSON(%s) = nil", tt.in)
			}
			if got.String() != tt.wantText || got.Minor() != tt.wantMinor || got.Scale() != tt.scale {
				t.Errorf("ParseJSON(%s) = %q (%d, scale %d), want %q (%d, scale %d)",
					tt.in, got.String(), got.Minor(), got.Scale(), tt.wantText, tt.wantMinor, tt.scale)
			}
		})
	}
}

func TestStringRoundTrip(t *testing.T) {
	for _, minor := range []int64{0, 1, -1, 9, 10, 99, 100, -100, 123456, math.MaxInt64, math.MinInt64} {
		for _, scale := range []int{0, 2, 4} {
			a := FromMinor(minor, scale)
			b, err := Parse(a.String(), scale)
			if err != nil {
				t.Fatalf("Parse(%q): %v", a.String(), err)
			}
			if b != a {
				t.Errorf("round trip of %d at scale %d: got %v, want %v", minor, scale, b, a)
			}
		}
	}
}

// FuzzParseJSON checks that whatever is accepted equals the exact rational
// value of the input (computed with math/big), and prints back canonically.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`"0.10"`, `98765.4`, `-0.07`, `1.5e2`, `"1,234.50"`, `null`, `true`, `"NaN"`,
		`1e400`, `9007199254740993`, `"92233720368547758.07"`, `0.30000000000000004`, `""`, `"-0"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		a, err := ParseJSON([]byte(in), 2)
		if err != nil || a == nil {
			return
		}
		text := strings.TrimSpace(in)
		text = strings.Trim(text, `"`)
		want, ok := new(big.Rat).SetString(text)
		if !ok {
			t.Fatalf("accepted %q that big.Rat cannot read", in)
		}
		got := new(big.Rat).SetFrac(big.NewInt(a.Minor()), big.NewInt(100))
		if got.Cmp(want) != 0 {
			t.Fatalf("ParseJSON(%q) = %s, exact value %s", in, a, want.FloatString(4))
		}
		again, err := Parse(a.String(), 2)
		if err != nil || again != *a {
			t.Fatalf("canonical text %q does not parse back: %v %v", a.String(), again, err)
		}
	})
}

func TestParseRound(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		scale       int
		wantText    string
		wantRounded bool
		wantErr     string
	}{
		{name: "PHP float noise up", in: `1234.5600000000002`, scale: 2, wantText: "1234.56", wantRounded: true},
		{name: "PHP float noise down", in: `0.30000000000000004`, scale: 2, wantText: "0.30", wantRounded: true},
		{name: "noise below", in: `1234.5599999999999`, scale: 2, wantText: "1234.56", wantRounded: true},
		{name: "exact needs no rounding", in: `"12.30"`, scale: 2, wantText: "12.30"},
		{name: "zeros beyond scale are exact", in: `"12.3000"`, scale: 2, wantText: "12.30"},
		{name: "half to even stays down", in: `"0.125"`, scale: 2, wantText: "0.12", wantRounded: true},
		{name: "half to even goes up", in: `"0.135"`, scale: 2, wantText: "0.14", wantRounded: true},
		{name: "above half", in: `"0.1251"`, scale: 2, wantText: "0.13", wantRounded: true},
		{name: "negative half to even", in: `"-0.125"`, scale: 2, wantText: "-0.12", wantRounded: true},
		{name: "negative up in magnitude", in: `"-2.675"`, scale: 2, wantText: "-2.68", wantRounded: true},
		{name: "carry through nines", in: `"9.999"`, scale: 2, wantText: "10.00", wantRounded: true},
		{name: "tiny rounds to zero", in: `1e-5`, scale: 2, wantText: "0.00", wantRounded: true},
		{name: "half of the last unit to even zero", in: `"0.005"`, scale: 2, wantText: "0.00", wantRounded: true},
		{name: "just over half of the last unit", in: `"0.0051"`, scale: 2, wantText: "0.01", wantRounded: true},
		{name: "scale zero", in: `"2.5"`, scale: 0, wantText: "2", wantRounded: true},
		{name: "scale zero odd", in: `"3.5"`, scale: 0, wantText: "4", wantRounded: true},
		{name: "exponent with noise", in: `1.23456e2`, scale: 2, wantText: "123.46", wantRounded: true},
		{name: "rounding into overflow", in: `"92233720368547758.079"`, scale: 2, wantText: "92233720368547758.08", wantErr: "64-bit"},
		{name: "garbage still refused", in: `"1,5"`, scale: 2, wantErr: "not a plain decimal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, rounded, err := ParseJSONRound([]byte(tt.in), tt.scale)
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want ErrInvalid containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := a.String(); got != tt.wantText || rounded != tt.wantRounded {
				t.Errorf("got %s rounded=%v, want %s rounded=%v", got, rounded, tt.wantText, tt.wantRounded)
			}
			// Parse (exact) agrees whenever no rounding was needed.
			exact, err := ParseJSON([]byte(tt.in), tt.scale)
			if rounded != (err != nil) || (err == nil && *exact != *a) {
				t.Errorf("ParseJSON = %v, %v; inconsistent with rounded=%v", exact, err, rounded)
			}
		})
	}
}

// TestParseRoundMatchesBigRat checks half-to-even rounding against math/big
// on many generated decimals.
func TestParseRoundMatchesBigRat(t *testing.T) {
	for i := range 20000 {
		// Deterministic texts with 0..6 decimals, both signs.
		n := int64(i)*7919 - 60000000
		dec := i % 7
		s := big.NewRat(n, int64(math.Pow10(dec))).FloatString(dec)
		got, _, err := ParseRound(s, 2)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		// Reference: round n / 10^dec to cents, half to even.
		r := new(big.Rat).Mul(big.NewRat(n, int64(math.Pow10(dec))), big.NewRat(100, 1))
		q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
		twice := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2))
		switch c := twice.Cmp(r.Denom()); {
		case c > 0, c == 0 && q.Bit(0) == 1:
			if r.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
		if got.Minor() != q.Int64() {
			t.Fatalf("%s: got %d minor units, want %d", s, got.Minor(), q.Int64())
		}
	}
}
