package money

import "testing"

func TestMinorUnits(t *testing.T) {
	for _, c := range []struct {
		code  string
		units int
		ok    bool
	}{
		{"USD", 2, true}, {"EUR", 2, true}, {"usd", 2, true}, {"JPY", 0, true}, {"KRW", 0, true},
		{"KWD", 3, true}, {"BHD", 3, true}, {"CLF", 4, true}, {"XCG", 2, true},
		{"XAU", 0, false}, {"XXX", 0, false}, {"XYZ", 0, false}, {"US", 0, false}, {"USDX", 0, false}, {"U$D", 0, false}, {"", 0, false},
	} {
		if units, ok := MinorUnits(c.code); units != c.units || ok != c.ok {
			t.Errorf("MinorUnits(%q) = %d %v, want %d %v", c.code, units, ok, c.units, c.ok)
		}
	}
}
