package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cardsync/cardsync/redact/redacttest"
)

// FuzzJSON checks Policy.JSON against encoding/json and the oracle: errors
// are the sentinels and agree with json.Valid; output is valid, canonical
// (idempotent), holds no card number outside the top-level id, and means
// what the input meant once redacted.
func FuzzJSON(f *testing.F) {
	for _, seed := range []string{
		`{"id":4111111111111111,"pan":"4111 1111 1111 1111","cvv":"123","b":[1.5e3,{"pin":null}]}`,
		`{"a":"x4111111111111111y","4111-1111-1111-1111":5500005555555559,"ssn":{"x":1}}`,
		`["\ud800\udc00\u00e9\/\u0000","\u0034111111111111111",-0,1E+2]`,
		`{"cardCVV":"1","PINCode":2,"cvc_check":"pass","has_pin":true}`,
		`{"cvv_number":"127","cvv_value":128,"card_verification_value":"129","pin_number":"4321","CVV2Code":"130"}`,
		`{"cvv":["127"],"pin":{"value":"4321"},"card_cid":"1234","cid":"cust_1","pin_block":"0412AC"}`,
		`{"card\u00a0cvv":"1","c\u200bvv":"2","\uff43\uff56\uff56":"3","security\u200bcode":4}`,
		`{"pin_verified":true,"cvc_check":"pass","has_pin":true,"pinned":false,"spin_count":3,"pin_attempts":2,"cvv_result":"M","pin":null}`,
		`{"a":"4111\t1111\t1111\t1111","b":"4111   1111    1111 1111","c":"4111\u20131111\u20141111\u20131111"}`,
		`{"a":"4111\u200b1111\u200b1111\u200b1111","b":"\uff14\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11"}`,
		`{"a":"\u0664\u0661\u0661\u0661 \u0661\u0661\u0661\u0661 \u0661\u0661\u0661\u0661 \u0661\u0661\u0661\u0661","b":"\ud835\udfdc\ud835\udfd9"}`,
		`[4111111111111111.0,4111111111111111.00,4.111111111111111e15,41111111111111110e-1,4111111111111111.5,-4111111111111111.0]`,
		`{"id":4111111111111111.0,"x":{"id":4.111111111111111e15}}`,
		`{"a":"4111     1111 1111 1111","b":"+49\u20131511\u20132345678","c":"\u2074\u00b9\u00b9\u00b9"}`,
		`{"n":-4111111111111111,"a":[-4.111111111111111e15,{"b":-378282246310005}],"p":"+4111111111111111","r":"ref+4111111111111111","t":"+378282246310005"}`,
		`{"cVV":"1","PiN":"2","CvV2":"3","cvVNumber":"4","CVVcode":"5","CARDcvv":"6","cardVERIFICATIONvalue":"7","pinVerified":"8","PINNED":"9","SPIN":"10"}`,
	} {
		f.Add([]byte(seed))
	}
	for _, s := range redacttest.PANCorpus() {
		if strings.HasSuffix(s.Name, "/plain") || !strings.HasPrefix(s.Name, "visa/4/13/") {
			continue
		}
		b, _ := json.Marshal(map[string]string{"v": s.Text, s.Text: "k"})
		f.Add(b)
	}
	p := NewPolicy([]string{"ssn"})
	// The oracle knows the rules of the fast pass: it is checked against a
	// policy without the layers; the layers' output is checked for the
	// same promises (valid, idempotent, no card number, no code key).
	fast := NewPolicy([]string{"ssn"})
	fast.layersOff = true
	f.Fuzz(func(t *testing.T, in []byte) {
		if out, _, err := p.JSON(in); err == nil {
			if again, _, err := p.JSON(out); err != nil || !bytes.Equal(again, out) {
				t.Fatalf("JSON(%q) = %q, %v; want it unchanged", out, again, err)
			}
			got := tokens(t, out)
			if err := noPANs(got); err != nil {
				t.Fatalf("JSON(%q) = %q: %v", in, out, err)
			}
			if err := noSecrets(p, got); err != nil {
				t.Fatalf("JSON(%q) = %q: %v", in, out, err)
			}
		}
		p := fast
		out, fields, err := p.JSON(in)
		if err != nil {
			switch {
			case errors.Is(err, ErrInvalidJSON):
				if json.Valid(in) {
					t.Fatalf("JSON(%q): %v, but json.Valid accepts it", in, err)
				}
			case errors.Is(err, ErrInvalidUTF8):
				if utf8.Valid(in) {
					t.Fatalf("JSON(%q): %v, but it is valid UTF-8", in, err)
				}
			case errors.Is(err, ErrTooDeep):
			default:
				t.Fatalf("JSON(%q): %v, not a sentinel", in, err)
			}
			return
		}
		if !json.Valid(in) {
			t.Fatalf("JSON(%q) accepted invalid JSON", in)
		}
		if !json.Valid(out) {
			t.Fatalf("JSON(%q) = %q, not valid JSON", in, out)
		}
		again, fields2, err := p.JSON(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("JSON(%q) = %q, %v; want it unchanged", out, again, err)
		}
		if fmt.Sprint(fields) != fmt.Sprint(fields2) {
			t.Fatalf("fields of %q = %v, then %v", in, fields, fields2)
		}
		got := tokens(t, out)
		if err := noPANs(got); err != nil {
			t.Fatalf("JSON(%q) = %q: %v", in, out, err)
		}
		if err := noSecrets(p, got); err != nil {
			t.Fatalf("JSON(%q) = %q: %v", in, out, err)
		}
		toks := tokens(t, in)
		if lossyKeys(toks) {
			return // encoding/json reads every lone surrogate as U+FFFD: keys it merges may differ
		}
		want, _ := canonicalTokens(redactTokens(p, toks), 0)
		if g, w := describe(got), describe(want); g != w {
			t.Fatalf("JSON(%q) = %q\n tokens %s\n want   %s", in, out, g, w)
		}
		checkFields(t, got, fields)
	})
}

// token is one JSON token with its place in the document.
type token struct {
	tok   json.Token
	key   bool // an object key
	depth int  // containers open around it
	topID bool // the scalar value of the top-level "id"
}

// tokens returns the tokens of doc, read by encoding/json.
func tokens(t *testing.T, doc []byte) []token {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	type frame struct{ object, wantKey bool }
	var stack []frame
	var out []token
	lastTopKey := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("decode %q: %v", doc, err)
		}
		tk := token{tok: tok, depth: len(stack)}
		var parent *frame
		if len(stack) > 0 {
			parent = &stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			tk.depth = len(stack)
			out = append(out, tk)
			continue
		}
		if parent != nil && parent.object {
			if parent.wantKey {
				tk.key = true
				if len(stack) == 1 {
					lastTopKey = tok.(string)
				}
			} else if len(stack) == 1 && lastTopKey == "id" {
				_, delim := tok.(json.Delim)
				tk.topID = !delim
			}
			parent.wantKey = !parent.wantKey
		}
		out = append(out, tk)
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, frame{object: d == '{', wantKey: d == '{'})
		}
	}
}

// describe prints tokens: type, value, and whether it is a key.
func describe(toks []token) string {
	var b strings.Builder
	for _, tk := range toks {
		fmt.Fprintf(&b, "%T:%q", tk.tok, fmt.Sprint(tk.tok))
		if tk.key {
			b.WriteString("(key)")
		}
		b.WriteByte(' ')
	}
	return b.String()
}

// noPANs checks that no string, key or integer token holds a card number,
// but for the top-level id.
func noPANs(toks []token) error {
	for _, tk := range toks {
		if tk.topID {
			continue
		}
		switch v := tk.tok.(type) {
		case string:
			if left := remainingPANs(v); len(left) > 0 {
				return fmt.Errorf("%q holds %v", v, left)
			}
		case json.Number:
			if _, ok := numberPAN(string(v)); ok {
				return fmt.Errorf("number %s is a card number", v)
			}
		}
	}
	return nil
}

// noSecrets checks that no key that SecretKey says is secret is left, but
// for a built-in one whose value is a boolean or null.
func noSecrets(p *Policy, toks []token) error {
	for k, tk := range toks {
		key, ok := tk.tok.(string)
		if !tk.key || !ok || !p.SecretKey(key) {
			continue
		}
		switch toks[k+1].tok.(type) {
		case bool, nil:
			if !p.extraKey([]byte(key)) {
				continue
			}
		}
		return fmt.Errorf("secret key %q is left", key)
	}
	return nil
}

// redactTokens applies the redaction rules to the tokens of a document, one
// at a time: the oracle for Policy.JSON.
func redactTokens(p *Policy, in []token) []token {
	var out []token
	for k := 0; k < len(in); k++ {
		tk := in[k]
		switch v := tk.tok.(type) {
		case string:
			if tk.key {
				tk.tok = PANs(v)
				key := tk.tok.(string)
				literal := false
				switch in[k+1].tok.(type) {
				case bool, nil:
					literal = true
				}
				if p.extraKey([]byte(key)) || !literal && p.SecretKey(key) {
					k = skipValue(in, k+1)
					continue
				}
			} else if !tk.topID {
				tk.tok = PANs(v)
			}
		case json.Number:
			if d, ok := numberPAN(string(v)); ok && !tk.topID {
				tk.tok = PANs(d)
			}
		}
		out = append(out, tk)
	}
	return out
}

// skipValue returns the index of the last token of the value at in[k].
func skipValue(in []token, k int) int {
	d, ok := in[k].tok.(json.Delim)
	if !ok || d == '}' || d == ']' {
		return k
	}
	depth := 0
	for ; ; k++ {
		if d, ok := in[k].tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else if depth--; depth == 0 {
				return k
			}
		}
	}
}

// checkFields checks fields against the top-level keys of the output.
func checkFields(t *testing.T, toks []token, fields []Field) {
	t.Helper()
	if len(toks) == 0 || toks[0].tok != json.Delim('{') {
		if fields != nil {
			t.Fatalf("fields %v for a document that is not an object", fields)
		}
		return
	}
	var want []Field
	for k, tk := range toks {
		if !tk.key || tk.depth != 1 {
			continue
		}
		typ := "number"
		switch v := toks[k+1].tok.(type) {
		case json.Delim:
			typ = map[json.Delim]string{'{': "object", '[': "array"}[v]
		case string:
			typ = "string"
		case bool:
			typ = "boolean"
		case nil:
			typ = "null"
		}
		want = append(want, Field{Name: tk.tok.(string), Type: typ})
	}
	if fmt.Sprintf("%q", fields) != fmt.Sprintf("%q", want) {
		t.Fatalf("fields = %q, want %q", fields, want)
	}
}

// FuzzPANs checks that PANs leaves no card number, only writes '*' over
// digits, changes nothing when there is no card number, and is idempotent.
func FuzzPANs(f *testing.F) {
	for _, seed := range []string{
		"4111 1111 1111 1111 2024",
		"x4111111111111111y 5500-0055-5555-5559",
		"4111\u00a01111\u00a01111\u00a01111",
		"411111******1111 4111 11** **** 1111",
		"2024-01-15T10:00:00.123456789Z +86 138 0013 8000",
		"4111\t1111\t1111\t1111 4111   1111    1111 1111",
		"4111\u20131111\u20141111\u20131111 4111\u200b1111\u200b1111\u200b1111",
		"\uff14\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11",
		"\u0664\u0661\u0661\u0661 \u0661\u0661\u0661\u0661 \u0661\u0661\u0661\u0661 \u0661\u0661\u0661\u0661",
		"4111111111111111.0 4.111111111111111e15",
		"4111     1111 1111 1111 +49\u20131511\u20132345678",
		"4111\xff1111\xfe1111 1111",
		"+4111111111111111 ref+4111111111111111 +378282246310005 +4111 1111 1111 1111",
		"+1234 5678 4111111111111111 +49 1511 2345678",
	} {
		f.Add(seed)
	}
	for _, s := range redacttest.PANCorpus() {
		if strings.HasPrefix(s.Name, "visa/4/16/") {
			f.Add(s.Text)
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := PANs(in)
		// Track data is dropped whole: more than digits change.
		tracks, _ := nextTrack(in, 0)
		if tracks < 0 && !onlyStars(in, out) {
			t.Fatalf("PANs(%q) = %q, changed more than digits", in, out)
		}
		if left := remainingPANs(out); len(left) > 0 {
			t.Fatalf("PANs(%q) = %q, still holds %v", in, out, left)
		}
		if tracks < 0 && len(remainingPANs(in)) == 0 && out != in {
			t.Fatalf("PANs(%q) = %q, but it holds no card number", in, out)
		}
		if again := PANs(out); again != out {
			t.Fatalf("PANs(%q) = %q, want it unchanged", out, again)
		}
	})
}

// bearerRE matches a bearer token left in text.
var bearerRE = regexp.MustCompile(`(?i)bearer[ \t\n\r\v\f]+[A-Za-z0-9\-._~+/]`)

// FuzzScrub checks that Scrub leaves no 8-byte piece of a secret, no bearer
// token and no card number, and is idempotent.
func FuzzScrub(f *testing.F) {
	f.Add("hunter2-Passw0rd", "login hunter2-Passw0rd failed, Bearer abc.def== card 4111111111111111")
	f.Add("abc", "abc abcd [REDACTED]abc")
	f.Add("REDACTED", "[REDACTED] REDACTED")
	f.Fuzz(func(t *testing.T, secret, text string) {
		var s Secrets
		s.Add(secret)
		out := s.Scrub(text)
		if again := s.Scrub(out); again != out {
			t.Fatalf("Scrub(%q) = %q, want it unchanged", out, again)
		}
		if len(secret) >= minPiece {
			for k := 0; k+minPiece <= len(secret); k++ {
				if outsideMarkers(out, secret[k:k+minPiece]) {
					t.Fatalf("Scrub(%q) = %q, holds %q of the secret", text, out, secret[k:k+minPiece])
				}
			}
		} else if len(secret) >= minAnywhere && outsideMarkers(out, secret) {
			t.Fatalf("Scrub(%q) = %q, holds the secret", text, out)
		}
		if bearerRE.MatchString(out) {
			t.Fatalf("Scrub(%q) = %q, holds a bearer token", text, out)
		}
		if left := remainingPANs(out); len(left) > 0 {
			t.Fatalf("Scrub(%q) = %q, holds %v", text, out, left)
		}
	})
}

// outsideMarkers reports whether piece occurs in text other than across a
// "[REDACTED]" marker.
func outsideMarkers(text, piece string) bool {
	for from := 0; ; {
		k := strings.Index(text[from:], piece)
		if k < 0 {
			return false
		}
		a, b := from+k, from+k+len(piece)
		overlaps := false
		for m := 0; ; {
			j := strings.Index(text[m:], Redacted)
			if j < 0 {
				break
			}
			ms, me := m+j, m+j+len(Redacted)
			if ms < b && a < me {
				overlaps = true
				break
			}
			m = me
		}
		if !overlaps {
			return true
		}
		from = a + 1
	}
}

// canonicalTokens returns the value at toks[k] in canonical order (every
// object's members sorted by the canonical text of their key, the last of
// each key kept) and the index after it: the oracle for the canonical pass.
func canonicalTokens(toks []token, k int) ([]token, int) {
	d, ok := toks[k].tok.(json.Delim)
	if !ok {
		return toks[k : k+1], k + 1
	}
	out := []token{toks[k]}
	k++
	if d == '[' {
		for toks[k].tok != json.Delim(']') {
			var v []token
			v, k = canonicalTokens(toks, k)
			out = append(out, v...)
		}
		return append(out, toks[k]), k + 1
	}
	type member struct {
		key  string
		toks []token
	}
	var ms []member
	for toks[k].tok != json.Delim('}') {
		key := toks[k]
		v, next := canonicalTokens(toks, k+1)
		ms = append(ms, member{canonicalText(key.tok.(string)), append([]token{key}, v...)})
		k = next
	}
	slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].key == m.key {
			continue
		}
		out = append(out, m.toks...)
	}
	return append(out, toks[k]), k + 1
}

// canonicalText is s as the canonical form writes it between quotes.
func canonicalText(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			b = appendControl(b, c)
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}
