package load_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"

	"github.com/cardsync/cardsync/redact"
)

// FuzzCanonicalHash: a card's change hash (card_state.data_hash) and stored
// form do not depend on the order of its members, at any depth: the card
// served with every object's members shuffled prepares to the same bytes
// and the same hash.
func FuzzCanonicalHash(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"b":{"y":2,"x":[{"q":1,"p":2}]},"a":"x"}`,
		`{"id":"7","balance":"98765.40","limits":{"monthly":"10.00","daily":"1.00"},"status":"active"}`,
		`{"a":1,"a":2,"b":{"c":3,"c":4}}`,
		`{"z":null,"y":true,"x":false,"w":[],"v":{},"u":1e3,"t":-0.0}`,
		`{"é":1,"e":2,"E":3,"\u00e9x":4,"ｃｖｖ":"127","card_number":"4111 1111 1111 1111"}`,
		`[{"b":1,"a":2},{"d":3,"c":4}]`,
		`{"nested":{"deeper":{"deepest":{"b":1,"a":2}}}}`,
	} {
		f.Add([]byte(s), uint64(1))
	}
	policy := redact.NewPolicy(nil)
	f.Fuzz(func(t *testing.T, doc []byte, seed uint64) {
		first, err := load.PreparePageItems(load.NewItemRules(policy, nil, nil), load.Page{Number: 1, Cards: []load.Card{{ID: "1", Data: doc}}})
		if err != nil || len(first.Cards) != 1 {
			return
		}
		canon := first.Cards[0].Data
		if bytes.Contains(canon, []byte(`\ud`)) {
			return // a lone surrogate escape: encoding/json reads it as U+FFFD
		}
		shuffled, ok := shuffleMembers(canon, rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)))
		if !ok {
			t.Fatalf("the prepared form %s is not JSON encoding/json reads", canon)
		}
		again, err := load.PreparePageItems(load.NewItemRules(policy, nil, nil), load.Page{Number: 1, Cards: []load.Card{{ID: "1", Data: shuffled}}})
		if err != nil || len(again.Cards) != 1 {
			t.Fatalf("%s shuffled to %s: not stored (%v, %+v)", canon, shuffled, err, again.Rejected)
		}
		if !bytes.Equal(again.Cards[0].Data, canon) || !bytes.Equal(again.Cards[0].Hash, first.Cards[0].Hash) {
			t.Fatalf("member order changed the card:\n%s\n%s\nstored as\n%s", canon, shuffled, again.Cards[0].Data)
		}
	})
}

// shuffleMembers re-encodes the JSON document doc with the members of
// every object in an order drawn from rng (values, numbers' text and
// strings' meaning unchanged).
func shuffleMembers(doc []byte, rng *rand.Rand) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var out bytes.Buffer
	if !shuffleValue(dec, rng, &out) {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return out.Bytes(), true
}

func shuffleValue(dec *json.Decoder, rng *rand.Rand, out *bytes.Buffer) bool {
	tok, err := dec.Token()
	if err != nil {
		return false
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			out.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					out.WriteByte(',')
				}
				if !shuffleValue(dec, rng, out) {
					return false
				}
			}
			_, err := dec.Token()
			out.WriteByte(']')
			return err == nil
		}
		var members []string
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return false
			}
			var m bytes.Buffer
			writeString(&m, key.(string))
			m.WriteByte(':')
			if !shuffleValue(dec, rng, &m) {
				return false
			}
			members = append(members, m.String())
		}
		if _, err := dec.Token(); err != nil {
			return false
		}
		rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		out.WriteString("{" + strings.Join(members, ",") + "}")
	case string:
		writeString(out, v)
	case json.Number:
		out.WriteString(v.String())
	case bool:
		if v {
			out.WriteString("true")
		} else {
			out.WriteString("false")
		}
	case nil:
		out.WriteString("null")
	}
	return true
}

func writeString(out *bytes.Buffer, s string) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	out.Truncate(out.Len() - 1) // Encode's newline
}
