package extract

import (
	"testing"
	"time"
)

// TestSharedPacer: clients given one Pacer pace together; a client whose
// configured rates differ from the pacer's is refused.
func TestSharedPacer(t *testing.T) {
	rate, auth := Rate{N: 60, Per: time.Minute}, Rate{N: 5, Per: time.Minute}
	p := NewPacer(rate, auth, nil)
	cfg := Config{BaseURL: "http://127.0.0.1:1", Email: "a@example.com", Password: testPassword, RateLimit: rate, AuthRateLimit: auth, Pacer: p}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a.general != b.general || a.authP != b.authP {
		t.Error("two clients of one Pacer have pacers of their own")
	}
	own, err := New(Config{BaseURL: cfg.BaseURL, Email: cfg.Email, Password: cfg.Password, RateLimit: rate, AuthRateLimit: auth})
	if err != nil {
		t.Fatal(err)
	}
	if own.general == a.general {
		t.Error("a client without a Pacer shares one")
	}
	cfg.RateLimit = Rate{N: 30, Per: time.Minute}
	if _, err := New(cfg); err == nil {
		t.Error("a client whose rate differs from its shared pacer's was accepted")
	}
}
