package redact

import "testing"

func TestSecretKey(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		// Dropped: the last word names the secret.
		{"cvv", true},
		{"CVV", true},
		{"cvc", true},
		{"cvv2", true},
		{"CVV2", true},
		{"cvc2", true},
		{"cvn", true},
		{"pin", true},
		{"PIN", true},
		{"card_cvv", true},
		{"card_cvv2", true},
		{"cardCVV", true},
		{"cardCvv", true},
		{"card-cvc", true},
		{"card.cvc2", true},
		{"card cvn", true},
		{"cardPIN", true},
		{"card_pin", true},
		{"new-pin", true},
		{"security_code", true},
		{"securityCode", true},
		{"SecurityCode", true},
		{"security-code", true},
		{"security code", true},
		{"card.security.code", true},
		{"securitycode", true},
		{"pin_code", true},
		{"PINCode", true},
		{"pinCode", true},
		{"pincode", true},
		{"cvv_code", true},
		{"cvvCode", true},
		{"CVVCode", true},
		{"cvc_code", true},
		{"cvv2Code", false}, // last two words: cvv2 code
		{"card_cvv_", true},
		{"__pin__", true},
		{"card:cvv", true},
		{"card/pin", true},
		// Kept: flags, counters and words that merely contain one.
		{"cvc_check", false},
		{"cvcCheck", false},
		{"cvc_status", false},
		{"pin_verified", false},
		{"pinVerified", false},
		{"has_pin", true}, // the rule alone; JSON keeps it when the value is a boolean
		{"spin_count", false},
		{"spin", false},
		{"pinned", false},
		{"pin_attempts", false},
		{"pinAttempts", false},
		{"PINs", false},
		{"code", false},
		{"security", false},
		{"postal_code", false},
		{"zip_code", false},
		{"country_code", false},
		{"cardcvv", false},
		{"cvv_number", false},
		{"pinyin", false},
		{"spinCode", false},
		{"shipping", false},
		{"", false},
		{"_", false},
		{"id", false},
		{"número_pin", true},
		{"pín", false},
	}
	p := NewPolicy(nil)
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got := p.SecretKey(tt.key); got != tt.want {
				t.Errorf("SecretKey(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}

func TestSecretKeyExtra(t *testing.T) {
	p := NewPolicy([]string{" Account_Number ", "", "SSN", "ﬃ"})
	tests := []struct {
		key  string
		want bool
	}{
		{"account_number", true},
		{"ACCOUNT_NUMBER", true},
		{"ssn", true},
		{"Ssn", true},
		{"ﬃ", true},
		{"FFI", false}, // exact case-insensitive match, not Unicode case folding into more letters
		{"account_number2", false},
		{"holder_ssn", false},
		{" ssn", false},
		{"", false},
		{"cvv", true}, // the built-in rule still applies
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got := p.SecretKey(tt.key); got != tt.want {
				t.Errorf("SecretKey(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}

func TestLastWord(t *testing.T) {
	tests := []struct{ key, last, prev string }{
		{"cardCVV", "CVV", "card"},
		{"PINCode", "Code", "PIN"},
		{"CVV2", "CVV2", ""},
		{"card_cvv2", "cvv2", "card"},
		{"securityCode", "Code", "security"},
		{"HTTPServer", "Server", "HTTP"},
		{"cvv2Code", "Code", "cvv2"},
		{"a--b__", "b", "a"},
		{"x", "x", ""},
		{"__", "", ""},
		{"zoëPin", "Pin", "zoë"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			key := []byte(tt.key)
			s, e := lastWord(key, len(key))
			ps, pe := lastWord(key, s)
			if got, gotPrev := string(key[s:e]), string(key[ps:pe]); got != tt.last || gotPrev != tt.prev {
				t.Errorf("last words of %q = %q, %q; want %q, %q", tt.key, gotPrev, got, tt.prev, tt.last)
			}
		})
	}
}
