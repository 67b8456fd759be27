package sim

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"
)

// The body faults that rewrite data: FaultShuffleMembers and
// FaultSecretsInData.

// shuffleMembers returns item with the members of each of its objects in
// an order drawn from rng; members with the same key (as sent) keep their
// order among themselves, so the item means what it meant to a reader that
// keeps the last of duplicate keys. An item that is not valid JSON is
// returned as it is.
func shuffleMembers(item []byte, rng *rand.Rand) []byte {
	if !json.Valid(item) {
		return item
	}
	out, _ := shuffleValue(item, 0, rng, make([]byte, 0, len(item)))
	return out
}

// shuffleValue appends the value at raw[i:] to out, shuffled, and returns
// the offset after it. raw is valid JSON.
func shuffleValue(raw []byte, i int, rng *rand.Rand, out []byte) ([]byte, int) {
	i = skipSpace(raw, i)
	switch raw[i] {
	case '{':
		type member struct {
			key  string
			text []byte
		}
		var ms []member
		i = skipSpace(raw, i+1)
		for raw[i] != '}' {
			ks := skipSpace(raw, i)
			ke := stringEnd(raw, ks)
			i = skipSpace(raw, ke) + 1 // the colon
			text := append(append([]byte(nil), raw[ks:ke]...), ':')
			text, i = shuffleValue(raw, i, rng, text)
			ms = append(ms, member{string(raw[ks:ke]), text})
			if i = skipSpace(raw, i); raw[i] == ',' {
				i++
			}
		}
		same := map[string][]member{}
		for _, m := range ms {
			same[m.key] = append(same[m.key], m)
		}
		out = append(out, '{')
		for k, p := range rng.Perm(len(ms)) {
			key := ms[p].key
			if k > 0 {
				out = append(out, ',')
			}
			out = append(out, same[key][0].text...)
			same[key] = same[key][1:]
		}
		return append(out, '}'), i + 1
	case '[':
		out = append(out, '[')
		i = skipSpace(raw, i+1)
		for n := 0; raw[i] != ']'; n++ {
			if n > 0 {
				out = append(out, ',')
			}
			out, i = shuffleValue(raw, i, rng, out)
			if i = skipSpace(raw, i); raw[i] == ',' {
				i++
			}
		}
		return append(out, ']'), i + 1
	case '"':
		j := stringEnd(raw, i)
		return append(out, raw[i:j]...), j
	}
	j := i
	for j < len(raw) && !bytes.ContainsRune([]byte(",]} \t\r\n"), rune(raw[j])) {
		j++
	}
	return append(out, raw[i:j]...), j
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r' || raw[i] == '\n') {
		i++
	}
	return i
}

// stringEnd returns the offset after the JSON string that starts at raw[i].
func stringEnd(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(raw)
}

// bearer returns the token of the request's Authorization header ("" when
// it has none).
func bearer(r *http.Request) string {
	_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	return strings.TrimSpace(tok)
}

// secretItems returns items with the password and the token put into the
// first card that is an object with an id (a value, a key, a nested value
// and an Authorization header's text) and, after them, one more item with
// that card's id (which a client must reject: the id is used twice) that
// holds both.
func secretItems(items [][]byte, password, token string, php bool) [][]byte {
	for k, it := range items {
		var card struct {
			ID json.RawMessage `json:"id"`
		}
		if len(it) < 2 || it[0] != '{' || json.Unmarshal(it, &card) != nil || card.ID == nil {
			continue
		}
		b := append([]byte(nil), `{"note":`...)
		b = appendString(b, "paid by "+password+", sent with Authorization: Bearer "+token, php)
		b = appendString(append(b, ','), token, php)
		b = append(b, `:"a token as a key","meta":{"deep":[{"value":`...)
		b = appendString(b, password, php)
		b = append(b, `}]}`...)
		if rest := bytes.TrimSpace(it[1:]); len(rest) > 0 && rest[0] != '}' {
			b = append(b, ',')
		}
		b = append(b, it[1:]...)
		extra := append([]byte(`{"id":`), card.ID...)
		extra = appendString(append(extra, `,"copy":`...), password+" "+token, php)
		extra = append(extra, '}')
		out := append([][]byte(nil), items...)
		out[k] = b
		return append(out, extra)
	}
	return items
}

// secretAccount returns a with the password and the token in its name.
func secretAccount(a Account, password, token string) Account {
	name := "Acme " + password + " " + token
	a.Name = &name
	return a
}

// secretAccountNotes adds to an account body (`{"data":{...}}`) a member
// "notes" that holds the token in an Authorization header's text.
func secretAccountNotes(body []byte, token string, php bool) []byte {
	const head = `{"data":{`
	if !bytes.HasPrefix(body, []byte(head)) {
		return body
	}
	b := append([]byte(head), `"notes":`...)
	b = appendString(b, "Authorization: Bearer "+token, php)
	if body[len(head)] != '}' {
		b = append(b, ',')
	}
	return append(b, body[len(head):]...)
}
