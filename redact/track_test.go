package redact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestTracks(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"track 1", "%B4111111111111111^DOE/JOHN^25121010000000000000?", strings.Repeat("*", 49)},
		{"track 1 in text", "swipe %B4111111111111111^DOE/JOHN^25121010000000000000? ok", "swipe " + strings.Repeat("*", 49) + " ok"},
		{"track 1 without sentinels", "B4111111111111111^DOE/JOHN Q^2512101 more", strings.Repeat("*", 36) + " more"},
		{"track 1 without format code", "4111111111111111^DOE/JOHN^2512101", strings.Repeat("*", 33)},
		{"track 2", ";4111111111111111=25121010000000000?", strings.Repeat("*", 36)},
		{"track 2 without sentinels", "x 4111111111111111=2512101 y", "x " + strings.Repeat("*", 24) + " y"},
		{"track 2 with D", "4111111111111111D25121010000000000", strings.Repeat("*", 34)},
		{"tag 57", "57134111111111111111D25121010000000000F", strings.Repeat("*", 39)},
		{"tag 57 spaced", "57 13 41 11 11 11 11 11 11 11 D2 51 21 01 00 00 00 00 00 0F", strings.Repeat("*", 59)},
		{"tag 57 lowercase", "57134111111111111111d25121010000000000f", strings.Repeat("*", 39)},
		{"tag 5A", "5A08 4111111111111111", strings.Repeat("*", 21)},
		{"tag 5A glued", "5A084111111111111111", strings.Repeat("*", 20)},
		{"tag 5A without length", "5a4111111111111111", strings.Repeat("*", 18)},
		{"tag 5A Amex F-padded spaced", "5A 08 37 82 82 24 63 10 00 5F", strings.Repeat("*", 29)},
		{"tag 5A in a TLV string", "9F02060000000010005A0841111111111111115F24032512319F", "9F0206000000001000" + strings.Repeat("*", 20) + "5F24032512319F"},
		// Not track data: the card number is masked alone.
		{"no expiry month", "4111111111111111=2513", "411111******1111=2513"},
		{"not a card number", ";4111111111111112=25121010000000000?", ";4111111111111112=25121010000000000?"},
		{"no digits before the separator", "pan=4111111111111111", "pan=411111******1111"},
		{"words", "declined 2024-01-15, code D12", "declined 2024-01-15, code D12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PANs(tt.in); got != tt.want {
				t.Errorf("PANs(%q) = %q, want %q", tt.in, got, tt.want)
			}
			var sc scan
			b := []byte(tt.in)
			maskText(b, false, &sc)
			// Every case before "no expiry month" is one track.
			want := 1
			if strings.HasSuffix(tt.in, "2513") || !strings.Contains(tt.want, "**********") {
				want = 0
			}
			if sc.tracks != want {
				t.Errorf("maskText(%q) counted %d tracks, want %d", tt.in, sc.tracks, want)
			}
		})
	}
}

// TestTracksJSONEscapes checks that a track next to or inside an escape
// leaves valid JSON: the escape it cuts into is dropped with it.
func TestTracksJSONEscapes(t *testing.T) {
	for _, doc := range []string{
		`{"v":"\b4111111111111111^DOE/JOHN^2512101?"}`,
		`{"v":"\udc5a084111111111111111"}`,
		`{"v":"\u001d4111111111111111=2512101"}`,
		`{"v":";4111111111111111=2512101\u0000"}`,
	} {
		got, _, err := NewPolicy(nil).JSON([]byte(doc))
		if err != nil {
			t.Fatalf("JSON(%s): %v", doc, err)
		}
		if again, _, err := NewPolicy(nil).JSON(got); err != nil || string(again) != string(got) {
			t.Errorf("JSON(%s) = %s: not valid canonical JSON (%v, %s)", doc, got, err, again)
		}
		if strings.Contains(string(got), "2512101") || strings.Contains(string(got), "4111111111111111") {
			t.Errorf("JSON(%s) = %s, keeps track data", doc, got)
		}
	}
}

// randName returns a random cardholder name as track 1 writes it.
func randName(r *rand.Rand) string {
	up := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('A' + r.IntN(26))
		}
		return string(b)
	}
	switch r.IntN(3) {
	case 0:
		return up(2+r.IntN(10)) + "/" + up(2+r.IntN(8))
	case 1:
		return up(2+r.IntN(10)) + "/" + up(2+r.IntN(8)) + " " + up(1) + "."
	}
	return up(3 + r.IntN(20))
}

// hexBytes writes the hex string h in upper or lower case, with or without
// a space between bytes.
func hexBytes(r *rand.Rand, h string) string {
	if r.IntN(2) == 0 {
		h = strings.ToLower(h)
	}
	if r.IntN(2) == 0 {
		return h
	}
	var b strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(h[i:min(i+2, len(h))])
	}
	return b.String()
}

// randTrack returns a random track or EMV tag of pan and the parts of it
// that must not survive: its name, and what follows the card number.
func randTrack(r *rand.Rand, pan string) (text string, parts []string) {
	exp := randExpiry(r)
	rest := exp + randDigits(r, 3) + randDigits(r, r.IntN(20))
	opt := func(s string) string {
		if r.IntN(2) == 0 {
			return s
		}
		return ""
	}
	switch r.IntN(4) {
	case 0:
		name := randName(r)
		end := opt("?")
		if end == "" {
			// Without the end sentinel the data ends where letters
			// and digits do.
			return opt("%") + "B" + pan + "^" + name + "^" + rest, []string{name, rest}
		}
		return opt("%") + opt("B") + pan + "^" + name + "^" + rest + end, []string{name, rest}
	case 1:
		sep := "="
		if r.IntN(3) == 0 {
			sep = "D"
		}
		return opt(";") + pan + sep + rest + opt("?"), []string{rest}
	case 2:
		v := pan + "D" + rest
		if len(v)%2 == 1 {
			v += "F"
		}
		tag := "57"
		if r.IntN(2) == 0 {
			tag += fmt.Sprintf("%02X", len(v)/2)
		}
		return hexBytes(r, tag+v), []string{rest}
	}
	v := pan
	if len(v)%2 == 1 {
		v += "F"
	}
	tag := "5A"
	if r.IntN(2) == 0 {
		tag += fmt.Sprintf("%02X", len(v)/2)
	}
	return hexBytes(r, tag+v), nil
}

// TestTracksProperty writes random card numbers as random tracks and EMV
// tags in random text and checks that nothing of them survives: not the
// card number's digits, not the name, not the expiry and what follows it.
func TestTracksProperty(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 57))
	for i := 0; i < 2000; i++ {
		pan := randPAN(r)
		tr, parts := randTrack(r, pan)
		in := randWords(r, r.IntN(4)) + " " + tr + " " + randWords(r, r.IntN(4))
		var sc scan
		b := []byte(in)
		n, _ := maskText(b, false, &sc)
		out := string(b[:n])
		if sc.tracks != 1 {
			t.Errorf("seed %d: maskText(%q) = %q, counted %d tracks, want 1", seed, in, out, sc.tracks)
		}
		if leaks(out, pan) {
			t.Fatalf("seed %d: maskText(%q) = %q, shows %s", seed, in, out, pan)
		}
		for _, p := range parts {
			if strings.Contains(out, p) {
				t.Fatalf("seed %d: maskText(%q) = %q, keeps %q", seed, in, out, p)
			}
		}
		if got := PANs(in); got != out {
			t.Fatalf("seed %d: PANs(%q) = %q, maskText says %q", seed, in, got, out)
		}
		if again := PANs(out); again != out {
			t.Fatalf("seed %d: PANs(%q) = %q, want it unchanged", seed, out, again)
		}
		doc := fmt.Sprintf(`{"v":%q}`, in)
		got, _, err := NewPolicy(nil).JSON([]byte(doc))
		if err != nil || leaks(string(got), pan) {
			t.Fatalf("seed %d: JSON(%s) = %s, %v; shows %s", seed, doc, got, err, pan)
		}
		for _, p := range parts {
			if strings.Contains(string(got), p) {
				t.Fatalf("seed %d: JSON(%s) = %s, keeps %q", seed, doc, got, p)
			}
		}
	}
}
