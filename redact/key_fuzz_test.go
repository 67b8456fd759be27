package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSecretKey checks that SecretKey reads a key the same way whatever its
// spelling: with invisible characters inserted, in full-width letters, or
// with its separators spelled as no-break or ideographic spaces.
func FuzzSecretKey(f *testing.F) {
	for _, seed := range []string{
		"cvv", "card_cvv2", "CVV2Code", "cvv_number", "cvv_value", "card_verification_value",
		"pin_number", "pinBlock", "securityCode", "card_cid", "cid", "pin_verified", "cvc_check",
		"cvv_result", "has_pin", "spin_count", "pinned", "pin_attempts", "postal_code",
		"verification_code", "cardcvv", "PINCode", "pin2", "ｃｖｖ", "card\u00a0cvv", "c\u200bvv",
		"cVV", "PiN", "CvV2", "cvVNumber", "CVVcode", "CARDcvv", "cardVERIFICATIONvalue", "pinVerified",
		"PINNED", "SPIN", "spinCount",
	} {
		f.Add(seed, uint8(1))
	}
	p := NewPolicy(nil)
	f.Fuzz(func(t *testing.T, key string, at uint8) {
		want := p.SecretKey(key)
		if !utf8.ValidString(key) {
			return
		}
		// An invisible character inside the key.
		k := int(at) % (len(key) + 1)
		for k > 0 && !utf8.RuneStart(key[k%len(key)]) {
			k--
		}
		for _, inv := range []string{"\u200b", "\u200d", "\u2060", "\ufeff", "\u00ad"} {
			if got := p.SecretKey(key[:k] + inv + key[k:]); got != want {
				t.Fatalf("SecretKey(%q) = %v, but with %q inserted at %d: %v", key, want, inv, k, got)
			}
		}
		// ASCII keys in other spellings.
		for i := 0; i < len(key); i++ {
			if key[i] >= utf8.RuneSelf {
				return
			}
		}
		full := strings.Map(func(r rune) rune {
			if r > ' ' && r < 0x7f {
				return r - '!' + '\uff01'
			}
			return r
		}, key)
		if got := p.SecretKey(full); got != want {
			t.Fatalf("SecretKey(%q) = %v, but SecretKey(%q) = %v", key, want, full, got)
		}
		for _, space := range []string{"\u00a0", "\u3000", "\u2003"} {
			spaced := strings.ReplaceAll(key, " ", space)
			if got := p.SecretKey(spaced); got != want {
				t.Fatalf("SecretKey(%q) = %v, but SecretKey(%q) = %v", key, want, spaced, got)
			}
		}
	})
}

// lossyKeys reports whether a key holds U+FFFD, which encoding/json also
// reads a lone surrogate escape as.
func lossyKeys(toks []token) bool {
	for _, tk := range toks {
		if s, ok := tk.tok.(string); ok && tk.key && strings.ContainsRune(s, utf8.RuneError) {
			return true
		}
	}
	return false
}
