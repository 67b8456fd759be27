package redact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/redact/redacttest"
)

// quote returns s as canonical JSON string text.
func quote(s string) string {
	var b []byte
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			b = appendControl(b, c)
		} else {
			b = append(b, c)
		}
	}
	return string(append(b, '"'))
}

// quoteEscaped returns s as a JSON string with every character a \u escape,
// the way some encoders send it.
func quoteEscaped(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r > 0xffff {
			r1, r2 := (r-0x10000)>>10+0xD800, (r-0x10000)&0x3ff+0xDC00
			fmt.Fprintf(&b, `\u%04X\u%04X`, r1, r2)
			continue
		}
		fmt.Fprintf(&b, `\u%04X`, r)
	}
	b.WriteByte('"')
	return b.String()
}

func TestCorpusPANs(t *testing.T) {
	for _, s := range redacttest.PANCorpus() {
		t.Run(s.Name, func(t *testing.T) {
			if !IsPAN(s.Digits) {
				t.Fatalf("IsPAN(%s) = false, want true", s.Digits)
			}
			got := PANs(s.Text)
			if holds(got, s.Digits) {
				t.Errorf("PANs(%q) = %q, still holds %s", s.Text, got, s.Digits)
			}
			if left := remainingPANs(got); len(left) > 0 {
				t.Errorf("PANs(%q) = %q, still holds %v", s.Text, got, left)
			}
			if !onlyStars(s.Text, got) {
				t.Errorf("PANs(%q) = %q, changed more than digits", s.Text, got)
			}
			if again := PANs(got); again != got {
				t.Errorf("PANs(%q) = %q, want it unchanged", got, again)
			}
		})
	}
}

// keyName returns a deterministic key name for sample k: never "id", never
// secret.
func keyName(k int) string {
	names := []string{"number", "n", "ref", "created_ms", "value", "x", "card", "pan", "account", "amount", "ts", "cardNumber"}
	return fmt.Sprintf("%s%d", names[k%len(names)], k/len(names))
}

func TestCorpusJSON(t *testing.T) {
	p := NewPolicy(nil)
	deep := func(v string) string {
		return strings.Repeat(`{"a":[`, 250) + v + strings.Repeat(`]}`, 250)
	}
	for k, s := range redacttest.PANCorpus() {
		t.Run(s.Name, func(t *testing.T) {
			docs := map[string]string{
				"value":         `{"id":1,"v":` + quote(s.Text) + `}`,
				"escaped value": `{"v":` + quoteEscaped(s.Text) + `}`,
				"key":           `{` + quote(s.Text) + `:1}`,
				"escaped key":   `{` + quoteEscaped(s.Text) + `:{"a":1}}`,
				"array element": `[1,` + quote(s.Text) + `,true]`,
				"top level":     quote(s.Text),
				"nested 500":    deep(quote(s.Text)),
				"nested id":     `{"x":{"id":` + quote(s.Text) + `}}`,
			}
			if redacttest.JSONInt(s.Text) || redacttest.JSONNumber(s.Text) {
				docs["number"] = `{"` + keyName(k) + `":` + s.Text + `}`
				docs["number in array"] = `[` + s.Text + `]`
				docs["nested number"] = deep(s.Text)
			}
			for name, doc := range docs {
				out, _, err := p.JSON([]byte(doc))
				if err != nil {
					t.Fatalf("%s: JSON(%s): %v", name, doc, err)
				}
				for _, tk := range tokens(t, out) {
					v, ok := tk.tok.(string)
					if !ok {
						if n, isNum := tk.tok.(json.Number); isNum {
							v = string(n)
						}
					}
					if holds(v, s.Digits) {
						t.Errorf("%s: JSON(%s) = %s, still holds %s", name, doc, out, s.Digits)
					}
					if left := remainingPANs(v); len(left) > 0 {
						t.Errorf("%s: JSON(%s) = %s, still holds %v", name, doc, out, left)
					}
				}
				if again, _, err := p.JSON(out); err != nil || string(again) != string(out) {
					t.Errorf("%s: JSON(%s) = %s, %v; want it unchanged", name, out, again, err)
				}
			}
		})
	}
}

// TestCorpusTopLevelID checks the card's identity is kept even when it is a
// card number.
func TestCorpusTopLevelID(t *testing.T) {
	p := NewPolicy(nil)
	for _, s := range redacttest.PANCorpus() {
		t.Run(s.Name, func(t *testing.T) {
			docs := []string{`{"id":` + quote(s.Text) + `,"x":1}`}
			if redacttest.JSONInt(s.Text) || redacttest.JSONNumber(s.Text) {
				docs = append(docs, `{"a":null,"id":`+s.Text+`}`)
			}
			for _, doc := range docs {
				out, _, err := p.JSON([]byte(doc))
				if err != nil || string(out) != doc {
					t.Errorf("JSON(%s) = %s, %v; want it unchanged", doc, out, err)
				}
			}
		})
	}
}

func TestLookAlikes(t *testing.T) {
	p := NewPolicy(nil)
	all := redacttest.LookAlikes()
	if len(all) < 60 {
		t.Errorf("%d look-alikes, want at least 60", len(all))
	}
	for _, l := range all {
		t.Run(l, func(t *testing.T) {
			if got := PANs(l); got != l {
				t.Errorf("PANs(%q) = %q, want it unchanged", l, got)
			}
			docs := []string{`{"v":` + quote(l) + `}`, `{` + quote(l) + `:` + quote(l) + `}`, `[` + quote(l) + `]`}
			if redacttest.JSONInt(l) {
				docs = append(docs, `{"n":`+l+`}`, `[`+l+`]`, l)
			}
			for _, doc := range docs {
				out, _, err := p.JSON([]byte(doc))
				if err != nil || string(out) != doc {
					t.Errorf("JSON(%s) = %s, %v; want it unchanged", doc, out, err)
				}
			}
		})
	}
}

// TestCorpusKeys drops every secret key of the corpus with its value, of
// every type but boolean and null, at any depth, and keeps every look-alike.
func TestCorpusKeys(t *testing.T) {
	p := NewPolicy(nil)
	values := []string{`"127"`, `127`, `["127"]`, `{"value":"4321"}`, `[]`, `{}`, `[[1],{"a":"2"}]`, `-1.5e3`}
	for _, key := range redacttest.SecretKeys() {
		t.Run(key, func(t *testing.T) {
			if !p.SecretKey(key) {
				t.Errorf("SecretKey(%q) = false, want true", key)
			}
			for _, v := range values {
				for _, c := range []struct{ doc, want string }{
					{`{` + quote(key) + `:` + v + `,"keep":1}`, `{"keep":1}`},
					{`{"a":[{"b":{` + quote(key) + `:` + v + `}}]}`, `{"a":[{"b":{}}]}`},
					{`{` + quoteEscaped(key) + `:` + v + `}`, `{}`},
				} {
					out, _, err := p.JSON([]byte(c.doc))
					if err != nil || string(out) != c.want {
						t.Errorf("JSON(%s) = %s, %v; want %s", c.doc, out, err, c.want)
					}
				}
			}
			for _, v := range []string{`true`, `false`, `null`} {
				doc := `{` + quote(key) + `:` + v + `}`
				if out, _, err := p.JSON([]byte(doc)); err != nil || string(out) != doc {
					t.Errorf("JSON(%s) = %s, %v; want it unchanged", doc, out, err)
				}
			}
		})
	}
	for _, key := range redacttest.LookAlikeKeys() {
		t.Run(key, func(t *testing.T) {
			if p.SecretKey(key) {
				t.Errorf("SecretKey(%q) = true, want false", key)
			}
			for _, v := range values {
				doc := `{` + quote(key) + `:` + v + `}`
				if out, _, err := p.JSON([]byte(doc)); err != nil || string(out) != doc {
					t.Errorf("JSON(%s) = %s, %v; want it unchanged", doc, out, err)
				}
			}
		})
	}
}
