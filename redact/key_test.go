package redact

import (
	"slices"
	"strings"
	"testing"
)

// secretKeyCase is a key of TestSecretKey and whether it names a secret.
type secretKeyCase struct {
	key  string
	want bool
}

func TestSecretKey(t *testing.T) {
	tests := slices.Concat(secretKeysDropped(), secretKeysFolded())
	p := NewPolicy(nil)
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got := p.SecretKey(tt.key); got != tt.want {
				t.Errorf("SecretKey(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}

// secretKeysDropped are the keys whose last word names a secret, and words near them.
func secretKeysDropped() []secretKeyCase {
	return []secretKeyCase{
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
		{"cvv2Code", true},
		{"CVV2Code", true},
		{"cvv_number", true},
		{"cvvNumber", true},
		{"cvv_value", true},
		{"cvv2_value", true},
		{"cvc_data", true},
		{"cvv_2", true},
		{"card_verification", true},
		{"cardVerification", true},
		{"card_verification_value", true},
		{"card_verification_code", true},
		{"cardVerificationValue", true},
		{"verification_value", true},
		{"cardverificationvalue", true},
		{"pin_number", true},
		{"pinNumber", true},
		{"pin_block", true},
		{"PINBlock", true},
		{"pinblock", true},
		{"pin_code", true},
		{"pin_data", true},
		{"pin2", true},
		{"cvvnumber", true},
		{"cvvcode", true},
		{"cvccode", true},
		{"cvv2code", true},
		{"cav2", true},
		{"csc", true},
		{"card_csc", true},
		{"card_cid", true},
		{"cc_cid", true},
		{"amex_cid", true},
		{"cardCID", true},
		{"cid_card", false}, // the code is not the last word
		{"card.security_code.value", true},
		{"security_code_number", true},
		{"card_cvv_", true},
		{"__pin__", true},
		{"card:cvv", true},
		{"card/pin", true},
	}
}

// secretKeysFolded are the keys read across case and separators, and those kept.
func secretKeysFolded() []secretKeyCase {
	return []secretKeyCase{
		// Mixed case: a code is secret without regard to case, read also
		// as one folded word split at separators only.
		{"cVV", true},
		{"cvV", true},
		{"CVv", true},
		{"PiN", true},
		{"pIN", true},
		{"piN", true},
		{"CvC", true},
		{"cVc", true},
		{"cSc", true},
		{"CvV2", true},
		{"cvV2", true},
		{"cvVNumber", true},
		{"CVVcode", true},
		{"CARDcvv", true},
		{"cardVERIFICATIONvalue", true},
		{"card_cVV", true},
		{"PiN_block", true},
		// Kept under both readings.
		{"PINNED", false},
		{"Pinned", false},
		{"SPIN", false},
		{"spinCount", false},
		{"pinVERIFIED", false},
		{"CVCcheck", false},
		{"cvvRESULT", false},
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
		{"cardcvv", true},
		{"cardno", false},
		{"cid", false},
		{"customer_cid", false},
		{"cid_number", false},
		{"cvv_result", false},
		{"cvvResult", false},
		{"cvc_checked", false},
		{"pin_status", false},
		{"pin_set", false},
		{"pin_count", false},
		{"pin_enabled", false},
		{"pin_required", false},
		{"cvv_present", false},
		{"cvv_match", false},
		{"cvv_provided", false},
		{"pinverified", false},
		{"pins", false},
		{"pin_hash", true}, // a hashed PIN is still a PIN: 10,000 tries find it (issue 33)
		{"verification", false},
		{"verification_code", false},
		{"email_verification_code", false},
		{"verification_status", false},
		{"card_verification_status", false},
		{"security_number", false},
		{"social_security_number", false},
		{"number", false},
		{"card_number", false},
		{"code_value", false},
		{"pinyin", false},
		{"spinCode", false},
		{"shipping", false},
		{"", false},
		{"_", false},
		{"id", false},
		{"número_pin", true},
		{"pín", false},
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

// TestSecretKeyUnicode checks that keys are compared after NFKC, case
// folding and the removal of invisible characters.
func TestSecretKeyUnicode(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"ｃｖｖ", true},
		{"ＣＶＶ", true},
		{"card_ｃｖｃ", true},
		{"ｐｉｎ_ｃｏｄｅ", true},
		{"card\u00a0cvv", true},
		{"security\u00a0code", true},
		{"card\u3000pin", true},
		{"card\u2003cvv", true},
		{"c\u200bvv", true},
		{"cv\u200cv", true},
		{"cv\u200dv", true},
		{"p\u2060in", true},
		{"\ufeffcvv", true},
		{"c\u00advv", true},
		{"pin\ufe0f", true},
		{"cvv\u200b_number", true},
		{"security\u200bcode", true},
		{"ＣＶＶ２Ｃｏｄｅ", true},
		{"ＰＩＮＣｏｄｅ", true},
		{"cvv\u2013number", true}, // an en dash separates words
		{"pin\u00a0verified", false},
		{"cvc\u200b_check", false},
		{"ｐｉｎｎｅｄ", false},
		{"sp\u200bin", false},
		{"número_pin", true},
		{"pín", false},
		{"zoëPin", true},
		{"pinЁ", false},
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

func TestNextWord(t *testing.T) {
	tests := []struct {
		key   string
		words string
	}{
		{"cardCVV", "card CVV"},
		{"PINCode", "PIN Code"},
		{"CVV2", "CVV2"},
		{"CVV2Code", "CVV2 Code"},
		{"card_cvv2", "card cvv2"},
		{"securityCode", "security Code"},
		{"HTTPServer", "HTTP Server"},
		{"cvv2Code", "cvv2 Code"},
		{"a--b__", "a b"},
		{"x", "x"},
		{"__", ""},
		{"zoëPin", "zoë Pin"},
		{"ÉtéPIN", "Été PIN"},
		{"card cvv", "card cvv"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			key := []byte(tt.key)
			var words []string
			for i := 0; ; {
				s, e := nextWord(key, i, true)
				if s == e {
					break
				}
				words = append(words, string(key[s:e]))
				i = e
			}
			if got := strings.Join(words, " "); got != tt.words {
				t.Errorf("words of %q = %q, want %q", tt.key, got, tt.words)
			}
		})
	}
}

func TestSecretKeyAllocs(t *testing.T) {
	for _, key := range []string{"created_at", "card_cvv2", "pin_verified", "cardVerificationValue", "cVV", "cardVERIFICATIONvalue", "pinVerified", "serverVersionInformationForTheCardholderAccountOfSomeone"} {
		if n := testing.AllocsPerRun(100, func() { secretKey([]byte(key)) }); n != 0 {
			t.Errorf("secretKey(%q) allocates %v times, want 0", key, n)
		}
	}
}

// BenchmarkSecretKey measures the rule over the keys of a card as the API
// sends it (most rejected by the fast test), code keys, and keys that need
// folding.
func BenchmarkSecretKey(b *testing.B) {
	for _, bc := range []struct {
		name string
		keys []string
	}{
		{"card", []string{"id", "brand", "number", "exp_month", "exp_year", "status", "type", "currency", "balance",
			"spent", "limits", "daily", "monthly", "holder", "name", "phone", "address", "line1", "city",
			"postal_code", "country", "labels", "created_at", "updated_ms", "url", "notes", "is_locked"}},
		{"codes", []string{"cvv", "card_cvv2", "pin_verified", "cardVerificationValue", "securityCode", "cardCode", "pinblock_enc"}},
		{"unicode", []string{"сvv", "código_de_seguridad", "Kartenprüfnummer", "セキュリティコード", "zoëName"}},
	} {
		keys := make([][]byte, len(bc.keys))
		for i, k := range bc.keys {
			keys[i] = []byte(k)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, k := range keys {
					secretKey(k)
				}
			}
		})
	}
}
