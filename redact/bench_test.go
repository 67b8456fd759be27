package redact

import (
	"strings"
	"testing"
)

// benchCard is a realistic card as the API sends it: 600 bytes, a nested
// holder, a number already masked upstream, timestamps, amounts, a URL with
// PHP's escaped slashes and a name with an escaped and a raw non-ASCII
// letter.
const benchCard = `{"id":"crd_8f3a2b1c9d","brand":"mastercard","number":"5244 53** **** 4821","exp_month":12,"exp_year":2029,"status":"active","type":"virtual","currency":"USD","balance":"1234.56","spent":98765.40,"limits":{"daily":"1000.00","monthly":"10000.00"},"holder":{"id":"hld_77c1","name":"Zo\u00eb Müller","phone":"+49 30 901820","address":{"line1":"12 Main Street","city":"Springfield","postal_code":"62701","country":"US"}},"labels":["ads","travel"],"created_at":"2024-01-15T10:00:00.123456Z","updated_ms":1705312800123,"url":"https:\/\/api.example.com\/v1\/cards\/crd_8f3a2b1c9d","notes":null,"is_locked":false}`

// BenchmarkJSON measures the redaction of one card.
func BenchmarkJSON(b *testing.B) {
	p := NewPolicy([]string{"ssn"})
	doc := []byte(benchCard)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := p.JSON(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPANs measures masking free text: an error message with one card
// number, and one without.
func BenchmarkPANs(b *testing.B) {
	for _, bc := range []struct{ name, text string }{
		{"card", "upstream said: card 4111 1111 1111 1111 declined at 2024-01-15T10:00:00Z (ref ORD-2024-000123456789)"},
		{"none", "upstream said: card crd_8f3a2b1c9d declined at 2024-01-15T10:00:00Z (ref ORD-2024-000123456789)"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			b.ReportAllocs()
			for b.Loop() {
				PANs(bc.text)
			}
		})
	}
}

// BenchmarkScrub measures scrubbing a short error message and a 4 KiB body
// with a password and a token registered.
func BenchmarkScrub(b *testing.B) {
	var s Secrets
	s.Add("correct horse battery staple")
	s.Add("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
	for _, bc := range []struct{ name, text string }{
		{"short", `POST /v1/login: 401 {"error":"invalid_credentials","message":"check email and password"}`},
		{"4KiB", strings.Repeat(`{"error":"rate_limited","retry_after":30,"request_id":"req_1705312800123"} `, 55)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			b.ReportAllocs()
			for b.Loop() {
				s.Scrub(bc.text)
			}
		})
	}
}

// BenchmarkJSONSecrets measures the redaction of one card by a policy that
// also removes a password and a token (none of them in the card).
func BenchmarkJSONSecrets(b *testing.B) {
	var s Secrets
	s.Add("correct horse battery staple")
	s.Add("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
	p := NewSecretPolicy([]string{"ssn"}, &s)
	doc := []byte(benchCard)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := p.JSON(doc); err != nil {
			b.Fatal(err)
		}
	}
}
