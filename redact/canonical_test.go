package redact

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// shuffled returns doc (compact, decoded by encoding/json) with the members
// of every object in another order, as a second server might send it.
func shuffled(t *testing.T, doc string, r *rand.Rand) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeShuffled(&b, v, r)
	return b.String()
}

func writeShuffled(b *strings.Builder, v any, r *rand.Rand) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			writeShuffled(b, v[k], r)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeShuffled(b, e, r)
		}
		b.WriteByte(']')
	case json.Number:
		b.WriteString(string(v))
	default:
		vb, _ := json.Marshal(v)
		b.Write(vb)
	}
}

func TestJSONOrderIndependent(t *testing.T) {
	p := NewPolicy(nil)
	want, wantFields, err := p.JSON([]byte(benchCard))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		doc := shuffled(t, benchCard, r)
		got, fields, err := p.JSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("shuffle %d: JSON(%s)\n got %s\nwant %s", i, doc, got, want)
		}
		if len(fields) != len(wantFields) {
			t.Fatalf("shuffle %d: %d fields, want %d", i, len(fields), len(wantFields))
		}
		for k := range fields {
			if fields[k] != wantFields[k] {
				t.Fatalf("shuffle %d: field %d = %v, want %v", i, k, fields[k], wantFields[k])
			}
		}
	}
}

// TestJSONLastWinsLikeEncodingJSON checks that the member kept of a
// duplicate key is the one encoding/json keeps.
func TestJSONLastWinsLikeEncodingJSON(t *testing.T) {
	doc := `{"balance":"1.00","n":{"a":1,"b":2,"a":3},"balance":"2.00","l":[{"x":1,"x":[2]}]}`
	out, _, err := NewPolicy(nil).JSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(doc), &want); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if !bytes.Equal(gb, wb) {
		t.Errorf("JSON(%s) = %s, means %s; encoding/json reads %s", doc, out, gb, wb)
	}
	if string(out) != `{"balance":"2.00","l":[{"x":[2]}],"n":{"a":3,"b":2}}` {
		t.Errorf("JSON(%s) = %s", doc, out)
	}
}

// TestJSONDeepUnsorted sorts objects nested MaxDepth deep, each with its
// members out of order: the pass holds no Go stack per level.
func TestJSONDeepUnsorted(t *testing.T) {
	n := MaxDepth - 1
	doc := strings.Repeat(`{"z":1,"a":1,"y":`, n) + `[]` + strings.Repeat(`}`, n)
	want := strings.Repeat(`{"a":1,"y":`, n) + `[]` + strings.Repeat(`,"z":1}`, n)
	got, fields, err := NewPolicy(nil).JSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("JSON of %d nested unsorted objects: got %.80s..., want %.80s...", n, got, want)
	}
	if len(fields) != 3 || fields[0].Name != "a" || fields[1] != (Field{"y", "object"}) || fields[2].Name != "z" {
		t.Errorf("fields = %v", fields)
	}
}

func TestJSONSecrets(t *testing.T) {
	const password = "correct horse battery staple"
	const token = "tok_4f9a8b7c6d5e4f3a2b1c"
	var s Secrets
	s.Add(password)
	p := NewSecretPolicy(nil, &s)
	tests := []struct {
		name, in, want string
		n              int
	}{
		{"none", `{"a":"x","b":1}`, `{"a":"x","b":1}`, 0},
		{"value", `{"a":"correct horse battery staple"}`, `{"a":"[REDACTED]"}`, 1},
		{"inside a value", `{"a":"pw=correct horse battery staple;"}`, `{"a":"pw=[REDACTED];"}`, 1},
		{"a piece", `{"a":"horse battery"}`, `{"a":"[REDACTED]"}`, 1},
		{"key", `{"correct horse battery staple":1}`, `{"[REDACTED]":1}`, 1},
		{"nested", `{"x":[{"y":{"z":"correct horse battery staple"}}]}`, `{"x":[{"y":{"z":"[REDACTED]"}}]}`, 1},
		{"escaped", `{"a":"correct horse\u0020battery staple"}`, `{"a":"[REDACTED]"}`, 1},
		{"bearer", `{"h":"Authorization: Bearer abc.def-ghi"}`, `{"h":"Authorization: Bearer [REDACTED]"}`, 1},
		{"colliding keys: the last wins", `{"correct horse battery staple":1,"horse battery staple":2}`, `{"[REDACTED]":2}`, 2},
		{"top-level id", `{"id":"correct horse battery staple"}`, `{"id":"[REDACTED]"}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, n, err := p.JSONCount([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want || n != tt.n {
				t.Errorf("JSONCount(%s) = %s, %d; want %s, %d", tt.in, got, n, tt.want, tt.n)
			}
			again, _, n, err := p.JSONCount(got)
			if err != nil || string(again) != string(got) || n != 0 {
				t.Errorf("JSONCount(%s) = %s, %d, %v; want it unchanged", got, again, n, err)
			}
		})
	}
	t.Run("a value added later", func(t *testing.T) {
		doc := `{"t":"` + token + `","n":12345678901234}`
		if got, _, _ := p.JSON([]byte(doc)); string(got) != `{"n":12345678901234,"t":"`+token+`"}` {
			t.Fatalf("JSON before Add = %s", got)
		}
		s.Add(token)
		s.Add("12345678901234")
		got, _, n, err := p.JSONCount([]byte(doc))
		if err != nil || string(got) != `{"n":"[REDACTED]","t":"[REDACTED]"}` || n != 2 {
			t.Errorf("JSONCount after Add = %s, %d, %v", got, n, err)
		}
	})
	t.Run("no secrets policy", func(t *testing.T) {
		got, _, n, _ := NewPolicy(nil).JSONCount([]byte(`{"a":"correct horse battery staple"}`))
		if n != 0 || !strings.Contains(string(got), password) {
			t.Errorf("NewPolicy JSONCount = %s, %d", got, n)
		}
	})
}

// TestJSONShortSecrets: a password shorter than 8 bytes is removed from
// data only where a whole value or key is that password: "demo" in
// "demo@example.com" or "2028" in a date or an amount is ordinary data,
// and rewriting it would corrupt the card; Scrub, for logs, keeps
// matching it anywhere.
func TestJSONShortSecrets(t *testing.T) {
	for _, pw := range []string{"demo", "2028"} {
		var s Secrets
		s.Add(pw)
		p := NewSecretPolicy(nil, &s)
		for in, want := range map[string]string{
			`{"email":"demo@example.com","created_at":"2028-01-01T00:00:00Z","balance":"2028.50","n":20280}`: `{"balance":"2028.50","created_at":"2028-01-01T00:00:00Z","email":"demo@example.com","n":20280}`,
			`{"a":"` + pw + `"}`:         `{"a":"[REDACTED]"}`,
			`{"a":" ` + pw + ` "}`:       `{"a":"[REDACTED]"}`,
			`{"` + pw + `":1}`:           `{"[REDACTED]":1}`,
			`{"a":[{"b":"` + pw + `"}]}`: `{"a":[{"b":"[REDACTED]"}]}`,
		} {
			got, _, _, err := p.JSONCount([]byte(in))
			if err != nil || string(got) != want {
				t.Errorf("password %q: JSONCount(%s) = %s, %v; want %s", pw, in, got, err, want)
			}
		}
	}
	var s Secrets
	s.Add("2028")
	if got := s.Scrub("paid 2028 units"); got != "paid [REDACTED] units" {
		t.Errorf("Scrub of a log line = %q: logs still lose a short password anywhere", got)
	}
	var n Secrets
	n.Add("2028")
	if got, _, _, _ := NewSecretPolicy(nil, &n).JSONCount([]byte(`{"year":2028}`)); string(got) != `{"year":"[REDACTED]"}` {
		t.Errorf("a number that is the password: %s", got)
	}
}

func TestJSONSecretsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	var s Secrets
	s.Add("correct horse battery staple")
	s.Add("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
	p := NewSecretPolicy(nil, &s)
	doc := []byte(benchCard)
	p.JSON(doc) // fill the pool
	if n := testing.AllocsPerRun(100, func() { p.JSON(doc) }); n > 3 {
		t.Errorf("JSON of a card with secrets set allocates %v times, want at most 3 (output, fields, names)", n)
	}
}
