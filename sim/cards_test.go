package sim_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

var (
	maskedRe = regexp.MustCompile(`^\d{6}\*{6}\d{4}$`)
	stampRe  = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
	amountRe = regexp.MustCompile(`^-?\d+\.\d\d$`)
)

func luhnValid(s string) bool {
	sum, double := 0, false
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i] - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

func TestCardRecords(t *testing.T) {
	tests := []struct {
		name string
		opts sim.Options
	}{
		{"default", sim.Options{Cards: 200, Seed: 7}},
		{"string ids", sim.Options{Cards: 200, Seed: 7, StringIDs: true}},
		{"pan", sim.Options{Cards: 200, Seed: 7, IncludePAN: true}},
		{"extra fields", sim.Options{Cards: 200, Seed: 7, ExtraFields: true}},
		{"php escaping", sim.Options{Cards: 200, Seed: 7, PHPEscaping: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sim.New(tt.opts)
			cards := s.Cards()
			if len(cards) != 200 {
				t.Fatalf("%d cards", len(cards))
			}
			var gaps, nullLabels int
			for i, c := range cards {
				var m map[string]any
				dec := json.NewDecoder(bytes.NewReader(c.JSON()))
				dec.UseNumber()
				if err := dec.Decode(&m); err != nil {
					t.Fatalf("card %s: %v", c.ID, err)
				}
				switch id := m["id"].(type) {
				case json.Number:
					if tt.opts.StringIDs || id.String() != c.ID {
						t.Errorf("id %v, want %s as a %s", id, c.ID, map[bool]string{true: "string", false: "number"}[tt.opts.StringIDs])
					}
				case string:
					if !tt.opts.StringIDs || id != c.ID {
						t.Errorf("id %q, want number %s", id, c.ID)
					}
				default:
					t.Errorf("id %v of type %T", id, id)
				}
				if i > 0 && c.Number > cards[i-1].Number+1 {
					gaps++
				}
				if i > 0 && c.Number <= cards[i-1].Number {
					t.Errorf("ids not increasing: %d after %d", c.Number, cards[i-1].Number)
				}
				if mn, _ := m["masked_number"].(string); !maskedRe.MatchString(mn) || mn[:6] != c.PAN[:6] || mn[12:] != c.PAN[12:] {
					t.Errorf("masked_number %q", mn)
				}
				if bal, _ := m["balance"].(string); !amountRe.MatchString(bal) || bal != c.Balance {
					t.Errorf("balance %v", m["balance"])
				}
				for _, k := range []string{"created_at", "updated_at"} {
					if s, _ := m[k].(string); !stampRe.MatchString(s) {
						t.Errorf("%s = %v", k, m[k])
					}
				}
				if h, ok := m["holder"].(map[string]any); !ok || h["name"] == "" {
					t.Errorf("holder %v", m["holder"])
				}
				if _, ok := m["label"]; !ok {
					t.Error("label omitted")
				} else if m["label"] == nil {
					nullLabels++
				}
				for _, k := range []string{"status", "currency"} {
					if s, _ := m[k].(string); s == "" {
						t.Errorf("%s = %v", k, m[k])
					}
				}
				pan, hasPAN := m["card_number"].(string)
				_, hasCVV := m["cvv"]
				if hasPAN != tt.opts.IncludePAN || hasCVV != tt.opts.IncludePAN {
					t.Errorf("card_number/cvv present = %v/%v, want %v", hasPAN, hasCVV, tt.opts.IncludePAN)
				}
				if hasPAN && (len(pan) != 16 || !luhnValid(pan) || pan != c.PAN) {
					t.Errorf("card_number %q is not a Luhn-valid 16-digit PAN", pan)
				}
				_, hasExtra := m["spend_controls"].(map[string]any)
				if hasExtra != tt.opts.ExtraFields {
					t.Errorf("extra fields present = %v, want %v", hasExtra, tt.opts.ExtraFields)
				}
				if tt.opts.PHPEscaping && bytes.ContainsAny(c.JSON(), "/é") {
					for _, r := range string(c.JSON()) {
						if r > 127 {
							t.Errorf("PHP escaping left %q in %s", r, c.JSON())
							break
						}
					}
				}
			}
			if gaps == 0 || nullLabels == 0 || nullLabels == len(cards) {
				t.Errorf("gaps %d, null labels %d: want a mix", gaps, nullLabels)
			}
		})
	}
}

func TestDeterminism(t *testing.T) {
	a := sim.New(sim.Options{Seed: 42, Cards: 60})
	b := sim.New(sim.Options{Seed: 42, Cards: 60})
	c := sim.New(sim.Options{Seed: 43, Cards: 60})
	short := sim.New(sim.Options{Seed: 42, Cards: 30})
	ca, cb, cc, cs := a.Cards(), b.Cards(), c.Cards(), short.Cards()
	same := 0
	for i := range ca {
		if !bytes.Equal(ca[i].JSON(), cb[i].JSON()) {
			t.Fatalf("card %d differs between equal seeds", i)
		}
		if i < len(cs) && !bytes.Equal(ca[i].JSON(), cs[i].JSON()) {
			t.Fatalf("card %d depends on the card count", i)
		}
		if bytes.Equal(ca[i].JSON(), cc[i].JSON()) {
			same++
		}
	}
	if same > 0 {
		t.Errorf("%d cards equal across different seeds", same)
	}
	// Mutations are deterministic too.
	clk := sim.NewClock()
	x := sim.New(sim.Options{Seed: 42, Cards: 60, Now: clk.Now})
	y := sim.New(sim.Options{Seed: 42, Cards: 60, Now: clk.Now})
	for _, s := range []*sim.Server{x, y} {
		s.AddCard()
		s.UpdateCard(ca[3].ID)
		s.RemoveCard(ca[5].ID)
	}
	cx, cy := x.Cards(), y.Cards()
	for i := range cx {
		if !bytes.Equal(cx[i].JSON(), cy[i].JSON()) {
			t.Fatalf("card %d differs after equal mutations", i)
		}
	}
}
