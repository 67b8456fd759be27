package redacttest

import (
	"strings"
	"testing"
)

func TestPANCorpus(t *testing.T) {
	corpus := PANCorpus()
	names := map[string]bool{}
	for _, s := range corpus {
		if names[s.Name] {
			t.Errorf("duplicate sample name %s", s.Name)
		}
		names[s.Name] = true
		if !Luhn(s.Digits) {
			t.Errorf("%s: %s fails Luhn", s.Name, s.Digits)
		}
		if !strings.Contains(Fold(s.Text), s.Digits) {
			t.Errorf("%s: %q does not hold %s", s.Name, s.Text, s.Digits)
		}
	}
	// Every network, at every prefix and length it issues.
	for _, nw := range Networks() {
		for _, p := range nw.Prefixes {
			for _, n := range nw.Lengths {
				d := Number(p, n)
				if len(d) != n || !strings.HasPrefix(d, p) {
					t.Errorf("Number(%s, %d) = %s", p, n, d)
				}
				if !names[nw.Name+"/"+p+"/"+itoa(n)+"/plain"] {
					t.Errorf("no plain sample for %s %s at %d digits", nw.Name, p, n)
				}
			}
		}
	}
}

func itoa(n int) string { return string(rune('0'+n/10)) + string(rune('0'+n%10)) }

func TestPANCorpusDeterministic(t *testing.T) {
	a, b := PANCorpus(), PANCorpus()
	for k := range a {
		if a[k] != b[k] {
			t.Fatalf("sample %d differs between calls: %v, %v", k, a[k], b[k])
		}
	}
}

func TestLookAlikes(t *testing.T) {
	seen := map[string]bool{}
	for _, l := range LookAlikes() {
		if seen[l] {
			t.Errorf("duplicate look-alike %q", l)
		}
		seen[l] = true
	}
	if len(seen) < 60 {
		t.Errorf("%d look-alikes, want at least 60", len(seen))
	}
}

func TestLuhn(t *testing.T) {
	tests := []struct {
		digits string
		want   bool
	}{
		{"4111111111111111", true},
		{"4111111111111112", false},
		{"378282246310005", true},
		{"79927398713", true},
		{"0", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.digits, func(t *testing.T) {
			if got := Luhn(tt.digits); got != tt.want {
				t.Errorf("Luhn(%q) = %v, want %v", tt.digits, got, tt.want)
			}
		})
	}
}

func TestJSONInt(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"0", true},
		{"4111111111111111", true},
		{"01", false},
		{"-1", true},
		{"-4111111111111111", true},
		{"-", false},
		{"--1", false},
		{"-01", false},
		{"1.0", false},
		{"1e3", false},
		{"", false},
		{"4111 1111", false},
	}
	for _, tt := range tests {
		t.Run(tt.s, func(t *testing.T) {
			if got := JSONInt(tt.s); got != tt.want {
				t.Errorf("JSONInt(%q) = %v, want %v", tt.s, got, tt.want)
			}
		})
	}
}

func TestGroups(t *testing.T) {
	tests := []struct{ digits, want string }{
		{"4222222222222", "4222 222 222 222"},
		{"30000000000004", "3000 000000 0004"},
		{"378282246310005", "3782 822463 10005"},
		{"4111111111111111", "4111 1111 1111 1111"},
		{"4111111111111111111", "4111 1111 1111 1111 111"},
	}
	for _, tt := range tests {
		t.Run(tt.digits, func(t *testing.T) {
			if got := strings.Join(Groups(tt.digits), " "); got != tt.want {
				t.Errorf("Groups(%s) = %q, want %q", tt.digits, got, tt.want)
			}
		})
	}
}

func TestFold(t *testing.T) {
	tests := []struct{ s, want string }{
		{"4111 1111-1111.1111", "4111111111111111"},
		{"\uff14\uff11 \u0664\u0661\u2013\u096a\u0967\u200b\U0001d7dc\U0001d7d9", "41414141"},
		{"\u0669\u06f9\u096f\uff19\U0001d7ff", "99999"},
		{"x4111*+\u00b2", "x4111*+\u00b2"},
	}
	for _, tt := range tests {
		t.Run(tt.s, func(t *testing.T) {
			if got := Fold(tt.s); got != tt.want {
				t.Errorf("Fold(%q) = %q, want %q", tt.s, got, tt.want)
			}
		})
	}
}

func TestInScript(t *testing.T) {
	if got, want := InScript("41-1", '\u0660'), "\u0664\u0661-\u0661"; got != want {
		t.Errorf("InScript = %q, want %q", got, want)
	}
}

func TestJSONNumber(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"4111111111111111.0", true},
		{"4111111111111111.00", true},
		{"4.111111111111111e15", true},
		{"4.111111111111111E+15", true},
		{"41111111111111110e-1", true},
		{"4111111111111111", false},
		{"-4111111111111111.0", true},
		{"-4.111111111111111e15", true},
		{"--4111111111111111.0", false},
		{"4111111111111111.", false},
		{".5", false},
		{"1e", false},
		{"01.0", false},
		{"4111 1111.0", false},
	}
	for _, tt := range tests {
		t.Run(tt.s, func(t *testing.T) {
			if got := JSONNumber(tt.s); got != tt.want {
				t.Errorf("JSONNumber(%q) = %v, want %v", tt.s, got, tt.want)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range append(SecretKeys(), LookAlikeKeys()...) {
		if seen[k] {
			t.Errorf("key %q listed twice", k)
		}
		seen[k] = true
	}
}
