package load

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/redact"
)

var testKey = bytes.Repeat([]byte{7}, IDKeyBytes)

// genPAN returns a random card number redact.IsPAN accepts.
func genPAN(rng *rand.Rand) string {
	prefixes := []struct {
		p string
		n int
	}{{"4", 16}, {"4", 19}, {"53", 16}, {"2221", 16}, {"37", 15}, {"6011", 16}, {"3530", 16}, {"62", 18}, {"36", 14}, {"50", 12}, {"67", 19}, {"2201", 16}}
	for {
		x := prefixes[rng.IntN(len(prefixes))]
		d := []byte(x.p)
		for len(d) < x.n-1 {
			d = append(d, byte('0'+rng.IntN(10)))
		}
		d = append(d, redact.LuhnCheckDigit(d))
		if redact.IsPAN(string(d)) {
			return string(d)
		}
	}
}

// respell writes the digits of pan with a random separator between groups
// and, sometimes, in another script's digits.
func respell(rng *rand.Rand, pan string) string {
	seps := []string{"", " ", "-", ".", "/", "  ", " - ", "_"}
	sep := seps[rng.IntN(len(seps))]
	zero := '0'
	switch rng.IntN(5) {
	case 0:
		zero = '\u0660' // Arabic-Indic
	case 1:
		zero = '\uFF10' // fullwidth
	}
	var b strings.Builder
	group := 4 + rng.IntN(2)
	for i, c := range pan {
		if i > 0 && i%group == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(zero + (c - '0'))
	}
	return b.String()
}

// TestStoredIDGenerated: every generated card number, as a string (any
// separator, any script's digits) or a number id, is stored as a form that
// holds no card number and hides digits, is stable,
// differs for another key, and is stored again unchanged; a twin (the same
// masked form) gets another id.
func TestStoredIDGenerated(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 1))
	policy := redact.NewPolicy(nil)
	other := bytes.Repeat([]byte{9}, IDKeyBytes)
	for range 2000 {
		pan := genPAN(rng)
		id := pan
		if rng.IntN(2) == 0 {
			id = respell(rng, pan)
		}
		stored, changed, err := StoredID(policy, testKey, id)
		if err != nil || !changed {
			t.Fatalf("seed %d: StoredID(%q) = %q, %v, %v; want a pseudonym", seed, id, stored, changed, err)
		}
		masked, hash, ok := strings.Cut(stored, string(redact.CardIDSeparator))
		if !ok || len(hash) != 16 || strings.Trim(hash, "abcdefghijklmnop") != "" {
			t.Fatalf("seed %d: %q: stored %q, want masked~16 letters", seed, id, stored)
		}
		if strings.Contains(stored, pan) || redact.PANs(stored) != stored {
			t.Fatalf("seed %d: %q: stored %q holds the card number", seed, id, stored)
		}
		if _, holds := redact.HoldsCardNumber(stored); holds {
			t.Fatalf("seed %d: %q: stored %q is itself a card number", seed, id, stored)
		}
		// The masked form is the text rule's (which masks the window it
		// finds, its own way) or the first 6 and last 4 digits: digits
		// hidden, the first 6 kept.
		if digits := asciiDigits(masked); len(digits) >= len(pan) || !strings.HasPrefix(pan, digits[:6]) {
			t.Fatalf("seed %d: %q: masked %q keeps %s", seed, id, masked, digits)
		}
		again, _, _ := StoredID(policy, testKey, id)
		twice, changed2, _ := StoredID(policy, testKey, stored)
		otherKey, _, _ := StoredID(policy, other, id)
		if again != stored || twice != stored || changed2 || otherKey == stored {
			t.Fatalf("seed %d: %q: stored %q, again %q, of itself %q (changed %v), other key %q", seed, id, stored, again, twice, changed2, otherKey)
		}
		twin := []byte(pan)
		for {
			for i := 6; i < len(twin)-4; i++ {
				twin[i] = byte('0' + rng.IntN(10))
			}
			if string(twin) != pan && redact.IsPAN(string(twin)) {
				break
			}
		}
		if s2, _, _ := StoredID(policy, testKey, string(twin)); s2 == stored {
			t.Fatalf("seed %d: %s and %s share the id %q", seed, pan, twin, s2)
		}
	}
}

func asciiDigits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if r >= '\u0660' && r <= '\u0669' {
			b.WriteRune('0' + r - '\u0660')
		} else if r >= '\uFF10' && r <= '\uFF19' {
			b.WriteRune('0' + r - '\uFF10')
		}
	}
	return b.String()
}

// TestStoredIDLookAlikes: ids that are not card numbers are stored as
// sent: order numbers failing Luhn (generated), timestamps, dates, UUIDs,
// small numbers, and "5" as "5".
func TestStoredIDLookAlikes(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 2))
	policy := redact.NewPolicy(nil)
	ids := []string{"5", "0", "-1", "42", "1700000000000", "1700000000000000", "1732000000123456789", "2025-03-01T12:00:00Z",
		"20250301123456", "550e8400-e29b-41d4-a716-446655440000", "card_4111", "ORD-2025-0000123", "1234567812345678"}
	for len(ids) < 1000 {
		// Order numbers and timestamps: prefix 1 belongs to no network;
		// and numbers of a network's prefix failing Luhn, kept when no
		// window of their digits is a card number either (the text rule
		// would find it).
		d := []byte("1")
		if rng.IntN(2) == 0 {
			d = []byte(genPAN(rng))
			d[len(d)-1] = '0' + (d[len(d)-1]-'0'+1+byte(rng.IntN(9)))%10
		} else {
			for n := 12 + rng.IntN(8); len(d) < n; {
				d = append(d, byte('0'+rng.IntN(10)))
			}
		}
		sp := respell(rng, string(d))
		if redact.PANs(string(d)) != string(d) || redact.PANs(sp) != sp {
			continue
		}
		ids = append(ids, sp)
	}
	for _, id := range ids {
		stored, changed, err := StoredID(policy, testKey, id)
		if err != nil || changed || stored != id {
			t.Errorf("seed %d: StoredID(%q) = %q, %v, %v; want it unchanged", seed, id, stored, changed, err)
		}
		if stored, _, err := StoredID(policy, nil, id); err != nil || stored != id {
			t.Errorf("StoredID(%q) without a key = %q, %v; want it unchanged", id, stored, err)
		}
	}
}

// TestStoredIDExamples: the shapes, and the rule without a key.
func TestStoredIDExamples(t *testing.T) {
	policy := redact.NewPolicy(nil)
	for _, tt := range []struct{ id, wantMasked string }{
		{"4111111111111111", "411111******1111"},
		{"4111 1111 1111 1111", ""},
		{"4111-1111-1111-1111", ""},
		{"4111.1111.1111.1111", "4111.11**.****.1111"},
		{"card 4111111111111111", ""},
		{"378282246310005", ""},
		{"-4111111111111111", "-411111******1111"},
	} {
		stored, changed, err := StoredID(policy, testKey, tt.id)
		if err != nil || !changed {
			t.Errorf("StoredID(%q) = %q, %v, %v", tt.id, stored, changed, err)
			continue
		}
		if masked, _, _ := strings.Cut(stored, "~"); tt.wantMasked != "" && masked != tt.wantMasked {
			t.Errorf("StoredID(%q) masked %q, want %q", tt.id, masked, tt.wantMasked)
		}
		if _, _, err := StoredID(policy, nil, tt.id); !errors.Is(err, ErrNoIDKey) {
			t.Errorf("StoredID(%q) without a key: %v, want ErrNoIDKey", tt.id, err)
		}
	}
}

// TestPreparePageItemsIDs: a card whose id is a card number is stored by
// its pseudonym, its data's "id" saying the same (a string, whatever was
// sent), and counted; without a key it is rejected without its id; a
// rejected item's id and data show the same pseudonym.
func TestPreparePageItemsIDs(t *testing.T) {
	policy := redact.NewPolicy(nil)
	want, _, _ := StoredID(policy, testKey, "4111111111111111")
	p := Page{Number: 1, Cards: []Card{
		{ID: "4111111111111111", Data: []byte(`{"status":"a","id":4111111111111111}`)},
		{ID: "7", Data: []byte(`{"id":7}`)},
	}, Rejected: []Rejection{{Index: 2, CardID: "4111111111111111", Reason: "r", Data: []byte(`{"id":4.111111111111111e15,"x":1}`)}}}
	it, err := PreparePageItems(NewItemRules(policy, testKey, nil), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(it.Cards) != 2 || it.Cards[0].ID != want || it.Cards[1].ID != "7" {
		t.Fatalf("cards %+v, want ids %q and 7", it.Cards, want)
	}
	if got, wantData := string(it.Cards[0].Data), fmt.Sprintf(`{"id":%q,"status":"a"}`, want); got != wantData {
		t.Errorf("data %s, want %s", got, wantData)
	}
	if it.Cards[0].Fields[0] != (redact.Field{Name: "id", Type: "string"}) {
		t.Errorf("fields %+v, want id a string", it.Cards[0].Fields)
	}
	if it.Rejected[0].CardID != want {
		t.Errorf("rejected id %q, want %q", it.Rejected[0].CardID, want)
	}
	if got := QuarantineData(NewItemRules(policy, testKey, nil), p.Rejected[0].Data); got != fmt.Sprintf(`{"id":%q,"x":1}`, want) {
		t.Errorf("quarantined %s, want the pseudonym", got)
	}
	if it.Counts.CardNumbers != 3 {
		t.Errorf("CardNumbers = %d, want 3 (card id, rejected id, rejected data)", it.Counts.CardNumbers)
	}
	it, err = PreparePageItems(NewItemRules(policy, nil, nil), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(it.Cards) != 1 || it.Rejected[0].CardID != "" || it.Rejected[1].CardID != "" {
		t.Errorf("without a key: cards %d, rejected %+v; want the card rejected without its id", len(it.Cards), it.Rejected)
	}
}

// TestKeepSet: only the named fields and id stay, counted; a card that has
// only kept fields is returned as it is.
func TestKeepSet(t *testing.T) {
	policy := redact.NewPolicy(nil)
	data, fields, err := policy.JSON([]byte(`{"z":{"a":[1,2]},"status":"a\"b","id":"x","b":null,"balance":"1.00"}`))
	if err != nil {
		t.Fatal(err)
	}
	k := newKeepSet([]string{"status", "balance", "absent"})
	out, kept, dropped := k.apply(data, fields)
	if string(out) != `{"balance":"1.00","id":"x","status":"a\"b"}` || dropped != 2 || len(kept) != 3 {
		t.Errorf("apply = %s, %+v, %d", out, kept, dropped)
	}
	if out2, _, d := k.apply(out, kept); !bytes.Equal(out2, out) || d != 0 {
		t.Errorf("apply of a kept card = %s, %d", out2, d)
	}
	if out3, _, d := newKeepSet(nil).apply(data, fields); !bytes.Equal(out3, data) || d != 0 {
		t.Errorf("nil set changed the card")
	}
}

// FuzzStoredID: whatever the id, what is stored holds no card number the
// text rule finds, and storing it again changes nothing.
func FuzzStoredID(f *testing.F) {
	for _, s := range []string{"4111111111111111", "4111 1111 1111 1111", "5", "١٢٣", "abc", "4111.1111.1111.1111"} {
		f.Add(s)
	}
	policy := redact.NewPolicy(nil)
	f.Fuzz(func(t *testing.T, id string) {
		stored, changed, err := StoredID(policy, testKey, id)
		if err != nil {
			t.Fatal(err)
		}
		if !changed {
			return
		}
		if redact.PANs(stored) != stored {
			t.Fatalf("StoredID(%q) = %q holds a card number", id, stored)
		}
		if again, ch, _ := StoredID(policy, testKey, stored); ch || again != stored {
			t.Fatalf("StoredID(%q) = %q, then %q", id, stored, again)
		}
	})
}

// TestPrepareAccountID: an account whose top-level id is a card number is
// stored with it masked, and counted.
func TestPrepareAccountID(t *testing.T) {
	row, err := PrepareAccount(redact.NewPolicy(nil), Account{Raw: []byte(`{"id":"4111111111111111","name":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if row.Raw == nil || strings.Contains(*row.Raw, "4111111111111111") || row.Counts.CardNumbers != 1 {
		t.Errorf("raw %v, counts %+v; want the id masked and counted", *row.Raw, row.Counts)
	}
}
