package sim_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

// meaning is what a JSON value means to encoding/json (the last of
// duplicate keys, numbers as their text).
func meaning(t *testing.T, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %.200s: %v", raw, err)
	}
	return v
}

// TestShuffleMembersFault: every card means what it meant, and two reads
// of a page send its cards in different member orders.
func TestShuffleMembersFault(t *testing.T) {
	plain := start(t, sim.Options{Cards: 15, Seed: 3})
	want := decodePage(t, plain.get("/cards", plain.token()))
	e := start(t, sim.Options{Cards: 15, Seed: 3, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultShuffleMembers}}})
	first := decodePage(t, e.get("/cards", e.token()))
	second := decodePage(t, e.get("/cards", e.token()))
	if len(first.Data) != len(want.Data) {
		t.Fatalf("%d cards, want %d", len(first.Data), len(want.Data))
	}
	differ := 0
	for i := range want.Data {
		for _, got := range [][]byte{first.Data[i], second.Data[i]} {
			if !reflect.DeepEqual(meaning(t, got), meaning(t, want.Data[i])) {
				t.Errorf("card %d: %s\nmeans something else than %s", i, got, want.Data[i])
			}
		}
		if !bytes.Equal(first.Data[i], second.Data[i]) {
			differ++
		}
	}
	if differ < len(want.Data)/2 {
		t.Errorf("only %d of %d cards came in another member order on the second read", differ, len(want.Data))
	}
	// Duplicate keys keep their order: the last stays the last.
	f, _ := sim.ParseFault("shuffle-members")
	odd := start(t, sim.Options{Cards: 15, OddData: true, Seed: 3, Faults: []sim.Fault{f}})
	plainOdd := start(t, sim.Options{Cards: 15, OddData: true, Seed: 3})
	for p := 1; p <= 3; p++ {
		path := "/cards?page=" + string(rune('0'+p))
		got, orig := decodePage(t, odd.get(path, odd.token())), decodePage(t, plainOdd.get(path, plainOdd.token()))
		for i := range orig.Data {
			if !json.Valid(orig.Data[i]) {
				continue
			}
			if !reflect.DeepEqual(meaning(t, got.Data[i]), meaning(t, orig.Data[i])) {
				t.Errorf("odd item %d of page %d: %.200s\nmeans something else than %.200s", i, p, got.Data[i], orig.Data[i])
			}
		}
	}
}

// TestSecretsInDataFault: the password and the request's token appear in
// the first card, in one more item with that card's id, and in the
// account's name and raw body.
func TestSecretsInDataFault(t *testing.T) {
	e := start(t, sim.Options{Cards: 15, PHPEscaping: true, Faults: []sim.Fault{{Kind: sim.FaultSecretsInData}}})
	tok := e.token()
	p := decodePage(t, e.get("/cards", tok))
	if len(p.Data) != 16 || p.Meta.Pagination.Count != 16 {
		t.Fatalf("%d items (count %d), want the 15 cards and one more", len(p.Data), p.Meta.Pagination.Count)
	}
	var first, last struct {
		ID   json.RawMessage `json:"id"`
		Note string          `json:"note"`
		Meta struct {
			Deep []struct{ Value string }
		}
		Copy string `json:"copy"`
	}
	if err := json.Unmarshal(p.Data[0], &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(p.Data[15], &last); err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	_ = json.Unmarshal(p.Data[0], &keys)
	pw := e.opts.Password
	if !strings.Contains(first.Note, pw) || !strings.Contains(first.Note, "Bearer "+tok) ||
		len(first.Meta.Deep) != 1 || first.Meta.Deep[0].Value != pw || keys[tok] == nil {
		t.Errorf("first card %s: want the password and the token in a value, a key and a nested value", p.Data[0])
	}
	if !bytes.Equal(last.ID, first.ID) || last.Copy != pw+" "+tok {
		t.Errorf("extra item %s: want the first card's id, the password and the token", p.Data[15])
	}
	var a struct {
		Data struct{ Name, Notes string }
	}
	if err := json.Unmarshal(e.get("/account", tok).body, &a); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Data.Name, pw) || !strings.Contains(a.Data.Name, tok) || a.Data.Notes != "Authorization: Bearer "+tok {
		t.Errorf("account %+v: want the password and the token in its name and notes", a.Data)
	}
}
