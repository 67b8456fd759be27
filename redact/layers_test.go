package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLayersExamples: the cases, and what is stored for each.
func TestLayersExamples(t *testing.T) {
	p := NewPolicy(nil)
	for _, c := range []struct {
		name, in, want string
		st             Stats
	}{
		{"query", `{"a":"cvv=555&pin=6666"}`, `{"a":"cvv=[REDACTED]&pin=[REDACTED]"}`, Stats{Codes: 2}},
		{"query ;", `{"a":"a=1;CVV2=987;b=2"}`, `{"a":"a=1;CVV2=[REDACTED];b=2"}`, Stats{Codes: 1}},
		{"xml", `{"a":"<cvv>777</cvv>"}`, `{"a":"<cvv>[REDACTED]</cvv>"}`, Stats{Codes: 1}},
		{"xml attribute", `{"a":"<card cvv=\"777\" brand=\"visa\"/>"}`, `{"a":"<card cvv=\"[REDACTED]\" brand=\"visa\"/>"}`, Stats{Codes: 1}},
		{"html input", `{"a":"<input name=\"cvv\" value=\"123\">"}`, `{"a":"<input name=\"cvv\" value=\"[REDACTED]\">"}`, Stats{Codes: 1}},
		{"header", `{"a":"X-Card-CVV: 321"}`, `{"a":"X-Card-CVV: [REDACTED]"}`, Stats{Codes: 1}},
		{"header lines", `{"a":"Host: api\r\nX-PIN: 4321\r\nAccept: */*"}`, `{"a":"Host: api\r\nX-PIN: [REDACTED]\r\nAccept: */*"}`, Stats{Codes: 1}},
		{"free text", `{"a":"card 4111 1111 1111 1111 exp 12/25 cvv 123"}`, `{"a":"card 4111 11** **** 1111 exp 12/25 cvv [REDACTED]"}`, Stats{CardNumbers: 1, Codes: 1}},
		{"free text is", `{"a":"the pin is 1234, security code: 987"}`, `{"a":"the pin is [REDACTED], security code: [REDACTED]"}`, Stats{Codes: 2}},
		{"pairs", `{"a":[{"name":"cvv","value":"123"},{"name":"brand","value":"visa"}]}`, `{"a":[{"name":"cvv"},{"name":"brand","value":"visa"}]}`, Stats{Codes: 1}},
		{"pairs key", `{"a":[{"Key":"card_pin","Data":4321}]}`, `{"a":[{"Key":"card_pin"}]}`, Stats{Codes: 1}},
		{"pair flag", `{"a":[{"name":"has_pin","value":true}]}`, `{"a":[{"name":"has_pin","value":true}]}`, Stats{}},
		{"pair array", `{"a":[["pin","1234"],["brand","visa"]]}`, `{"a":[["pin"],["brand","visa"]]}`, Stats{Codes: 1}},
		{"pair top level", `{"name":"cvv","value":"123"}`, `{"name":"cvv"}`, Stats{Codes: 1}},
		{"path", `{"security":{"code":"123"},"verification":{"value":"x"}}`, `{"security":{},"verification":{"value":"x"}}`, Stats{Codes: 1}},
		{"json text", `{"body":"{\"card\":{\"security\":{\"code\":\"123\"}},\"pan\":4111111111111111,\"n\":\"5500 0055 5555 5559\"}"}`,
			`{"body":"{\"card\":{\"security\":{\"code\":\"[REDACTED]\"}},\"pan\":\"411111******1111\",\"n\":\"5500 00** **** 5559\"}"}`, Stats{CardNumbers: 2, Codes: 1}},
		{"json text code number", `{"body":"{\"cvv\": 123, \"pin\": {\"v\": 1}, \"has_pin\": true}"}`, `{"body":"{\"cvv\": null, \"pin\": null, \"has_pin\": true}"}`, Stats{Codes: 2}},
		{"json text pairs", `{"body":"[{\"name\":\"cvv\",\"value\":\"123\"},[\"pin\",1234]]"}`, `{"body":"[{\"name\":\"cvv\",\"value\":\"[REDACTED]\"},[\"pin\",null]]"}`, Stats{Codes: 2}},
		{"json text escaped", `{"body":"{\"q\":\"cvv\\u003d555\\u0026x=1\"}"}`, `{"body":"{\"q\":\"cvv\\u003d[REDACTED]\\u0026x=1\"}"}`, Stats{Codes: 1}},
		{"percent", `{"a":"pan=4111%201111%201111%201111"}`, `{"a":"pan=4111%2011**%20****%201111"}`, Stats{CardNumbers: 1}},
		{"percent digits", `{"a":"q=%34%31%31%31%31%31%31%31%31%31%31%31%31%31%31%31"}`, `{"a":"q=%34%31%31%31%31%31******%31%31%31%31"}`, Stats{CardNumbers: 1}},
		{"plus", `{"a":"pan=4111+1111+1111+1111&cvv=12%33"}`, `{"a":"pan=4111+11**+****+1111&cvv=[REDACTED]"}`, Stats{CardNumbers: 1, Codes: 1}},
		{"form json", `{"a":"body=%7B%22cvv%22%3A%22123%22%7D"}`, `{"a":"body=%7B%22cvv%22%3A%22[REDACTED]%22%7D"}`, Stats{Codes: 1}},
		{"html", `{"a":"&lt;cvv&gt;123&lt;/cvv&gt; &#52;111&#x31;11111111111"}`, `{"a":"&lt;cvv&gt;[REDACTED]&lt;/cvv&gt; &#52;111&#x31;1******1111"}`, Stats{CardNumbers: 1, Codes: 1}},
		{"backslash u", `{"a":"pan\\u003d4111\\u00201111\\u00201111\\u00201111"}`, `{"a":"pan\\u003d4111\\u002011**\\u0020****\\u00201111"}`, Stats{CardNumbers: 1}},
		{"json number in text", `{"a":"{\"n\":-4111111111111111}"}`, `{"a":"{\"n\":\"-411111******1111\"}"}`, Stats{CardNumbers: 1}},
		{"key", `{"cvv=123":1}`, `{"cvv=[REDACTED]":1}`, Stats{Codes: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, _, st, err := p.JSONStats([]byte(c.in))
			if err != nil || string(out) != c.want {
				t.Fatalf("JSON(%s)\n = %s, %v\nwant %s", c.in, out, err, c.want)
			}
			if st != c.st {
				t.Errorf("stats of %s = %+v, want %+v", c.in, st, c.st)
			}
			if again, _, err := p.JSON(out); err != nil || !bytes.Equal(again, out) {
				t.Errorf("JSON(%s) = %s, %v; want it unchanged", out, again, err)
			}
			if again, _, st, _ := p.JSONStats(out); st != (Stats{}) {
				t.Errorf("stats of %s = %+v, want none", again, st)
			}
		})
	}
}

// TestLayersLookAlikes: text that looks like a code or a card number in
// some layer, and is not, is stored exactly.
func TestLayersLookAlikes(t *testing.T) {
	p := NewPolicy(nil)
	for _, s := range []string{
		"pin_verified=true&has_pin=true&cvv_checked=Y&cvc_check=pass",
		"has_pin: true\nX-Request-Id: 123456\nDate: 2024-01-15",
		"<pin_verified>true</pin_verified><has_pin>false</has_pin><order>123456</order>",
		"order 1234567890123 on 2024-01-15T10:00:00.123Z, amount 1234.56",
		"cvv 12/25", "cvv 2024-01-15", "cvv 12.50", "pin 1", "cvv ok", "cvv checked 123",
		"spin 1234", "pinned 1234", "postal code 62701", "verification code 123456",
		"+49 1511 2345678", "tel=+4915112345678", "ref 4111111111111112",
		"a&b=1&c=%zz&d=&#xZZ;&unknown;", "1705312800123 1705312800123456",
		`{"pin_attempts":3,"cvv_result":"M","id":"crd_8f3a2b1c9d"}`,
		`[{"name":"brand","value":"visa"},["limit","1000"]]`,
		"{not json cvv}", "[1,2,3]", "<b>1234</b>",
	} {
		doc := marshal(map[string]string{"v": s})
		out, _, st, err := p.JSONStats(doc)
		if err != nil || !bytes.Equal(out, doc) || st != (Stats{}) {
			t.Errorf("JSON(%s) = %s, %+v, %v; want it unchanged", doc, out, st, err)
		}
	}
	// Documents: flags and look-alike pairs stay.
	for _, doc := range []string{
		`{"a":[{"name":"pin_verified","value":"yes"}],"b":[["cvv_checked","Y"]],"c":["pin","1","2"]}`,
		`{"limits":{"code":"x"},"postal":{"code":"62701"},"verification":{"code":"123"}}`,
	} {
		out, _, err := p.JSON([]byte(doc))
		if err != nil || string(out) != doc {
			t.Errorf("JSON(%s) = %s, %v; want it unchanged", doc, out, err)
		}
	}
}

// TestLayersProperty builds random card documents that hide a code under
// a code word and a card number, each in a random stack of layers, and
// checks that no layer of the stored document, read by the standard
// library, holds the code or a card number, that the look-alikes beside
// them are kept, and that the document is kept and stored idempotently.
func TestLayersProperty(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	n := 2000
	if testing.Short() {
		n = 300
	}
	r := rand.New(rand.NewPCG(seed, 0))
	p := NewPolicy(nil)
	fast := NewPolicy(nil)
	fast.layersOff = true
	for k := 0; k < n; k++ {
		code := randomCode(r)
		doc, stack := layerDoc(rand.New(rand.NewPCG(seed, uint64(k)+1)), code)
		// The code must not occur by chance elsewhere (in the id, the
		// card number's kept digits, a look-alike, an escape): the same
		// document with another code must not hold it in any layer.
		other := code // of the same length: the same choices follow
		for other == code {
			other = strconv.Itoa(1 + r.IntN(9))
			for len(other) < len(code) {
				other += strconv.Itoa(r.IntN(10))
			}
		}
		twin, _ := layerDoc(rand.New(rand.NewPCG(seed, uint64(k)+1)), other)
		twinOut, _, _ := p.JSON(twin)
		chance := false
		for v := range peelAll(string(twin), string(twinOut)) {
			chance = chance || strings.Contains(v, code)
		}
		if chance {
			continue
		}
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d, case %d, code %s in %v: %s\ndoc %s", seed, k, code, stack, fmt.Sprintf(format, args...), doc)
		}
		out, _, st, err := p.JSONStats(doc)
		if err != nil {
			fail("JSON: %v", err)
		}
		if again, _, err := p.JSON(out); err != nil || !bytes.Equal(again, out) {
			fail("not idempotent:\n%s\n%s", out, again)
		}
		if st.Codes == 0 || st.CardNumbers == 0 {
			fail("stats %+v, want a code and a card number", st)
		}
		layers := peelAll(string(out))
		for v := range layers {
			if strings.Contains(v, code) {
				fail("stored %s\nlayer %q holds the code", out, v)
			}
			if !leaf(v) {
				continue
			}
			if left := remainingPANs(v); len(left) > 0 {
				fail("stored %s\nlayer %q holds card number %v", out, v, left)
			}
			if d, ok := numberPAN(v); ok {
				fail("stored %s\nlayer holds card number %s", out, d)
			}
		}
		// Look-alikes are kept, but where the fast pass alone loses them
		// (digits of an escape next to them read as a card number's).
		fastOut, _, _ := fast.JSON(doc)
		fastLayers := peelAll(string(fastOut))
		for _, la := range lookAlikes {
			if !strings.Contains(string(doc), la[0]) || !holdsAny(fastLayers, la[1]) {
				continue
			}
			if !holdsAny(layers, la[1]) {
				fail("stored %s: look-alike %s=%s lost", out, la[0], la[1])
			}
		}
	}
}

// randomCode returns a code of 3 to 6 digits.
func randomCode(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return strconv.Itoa(1e5 + r.IntN(9e5))
	}
	return strconv.Itoa(100 + r.IntN(9900))
}

// layerDoc builds a random card document that holds code under a code
// word in a random stack of layers (named in stack) and a card number in
// another, using r for every choice.
func layerDoc(r *rand.Rand, code string) (doc []byte, stack []string) {
	g := &layerGen{r: r}
	text := g.inner(code)
	for d := r.IntN(3); d > 0; d-- {
		var name string
		text, name = g.wrap(text)
		stack = append(stack, name)
	}
	panText := g.panText(g.pick(pans))
	for d := r.IntN(3); d > 0; d-- {
		panText, _ = g.wrap(panText)
	}
	values := []any{text, panText}
	switch r.IntN(4) {
	case 0: // a pair in the document itself
		values = append(values, []any{map[string]string{"name": g.pick(codeWords), "value": code}})
	case 1:
		values = append(values, []any{g.pick(codeWords), code})
	}
	return g.doc(values), stack
}

// peelAll returns every layer of the texts.
func peelAll(texts ...string) map[string]bool {
	out := map[string]bool{}
	for _, s := range texts {
		peel(s, 0, out)
	}
	return out
}

func holdsAny(layers map[string]bool, s string) bool {
	for v := range layers {
		if strings.Contains(v, s) {
			return true
		}
	}
	return false
}

// FuzzLayers checks the layers on any string value: the output is valid
// JSON, idempotent, and no layer of it, read by the standard library,
// holds a card number.
func FuzzLayers(f *testing.F) {
	for _, s := range []string{
		"cvv=555&pin=6666", "<cvv>777</cvv>", "X-Card-CVV: 321", "card 4111 1111 1111 1111 exp 12/25 cvv 123",
		`{"security":{"code":"123"},"pan":4111111111111111}`, `[{"name":"cvv","value":"123"}]`, `[["pin","1234"]]`,
		"pan=4111+1111+1111+1111", "q=%34%31%31%31%31%31%31%31%31%31%31%31%31%31%31%31", "&#52;111&#x31;111111111111",
		`pan\u003d4111\u00201111\u00201111\u00201111`, `body=%7B%22cvv%22%3A%22123%22%7D`, `<input name="cvv" value="123">`,
		`{"a":"{\"b\":\"cvv\\u003d1\\u00262\\u00263\"}"}`, "%", "&#;", `\u`, "<a", "cvv", "=", `{"x":1e5,"y":[-4111111111111111]}`,
	} {
		f.Add(s)
	}
	p := NewPolicy(nil)
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range namedRefRE.FindAllStringSubmatch(s, -1) {
			if _, ok := entities[m[1]]; !ok && html.UnescapeString(m[0]) != m[0] {
				return // a named reference the layers do not decode (documented)
			}
		}
		doc, err := json.Marshal(map[string]string{"v": s, s: "k"})
		if err != nil {
			return
		}
		out, _, err := p.JSON(doc)
		if err != nil {
			t.Fatalf("JSON(%s): %v", doc, err)
		}
		if !json.Valid(out) {
			t.Fatalf("JSON(%s) = %s, not valid", doc, out)
		}
		if again, _, err := p.JSON(out); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("JSON(%s) = %s, %v; want it unchanged", out, again, err)
		}
		layers := map[string]bool{}
		peel(string(out), 0, layers)
		for v := range layers {
			if !leaf(v) {
				continue
			}
			if left := remainingPANs(v); len(left) > 0 {
				t.Fatalf("JSON(%s) = %s: layer %q holds %v", doc, out, v, left)
			}
		}
	})
}

// namedRefRE matches a named character reference.
var namedRefRE = regexp.MustCompile(`&([A-Za-z][A-Za-z0-9]*;?)`)

// escapeRE matches a JSON escape.
var escapeRE = regexp.MustCompile(`\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])`)

// leaf reports whether s is a layer with nothing left to decode: card
// numbers are judged in such text, as the digits of an escape ("&#34;",
// "%20") are not digits of the text. JSON text is judged by its strings
// and numbers: digits of two strings are no one number.
func leaf(s string) bool {
	if html.UnescapeString(s) != s || escapeRE.MatchString(s) {
		return false
	}
	if t := strings.TrimSpace(s); json.Valid([]byte(t)) && (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) {
		return false
	}
	unescape := url.QueryUnescape
	if strings.Contains(s, " ") {
		unescape = url.PathUnescape
	}
	q, err := unescape(s)
	return err != nil || q == s
}

// marshal is json.Marshal without the escapes of '&', '<' and '>', which
// the canonical form does not keep.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// TestLayersSecrets: a secret of the policy's set is found in a decoded
// layer, replaced in the source bytes and counted.
func TestLayersSecrets(t *testing.T) {
	var s Secrets
	s.Add("S3cureLongPassword")
	p := NewSecretPolicy(nil, &s)
	for _, c := range []struct{ in, want string }{
		{`{"a":"pw=S3cure%4CongPassword&n=1"}`, `{"a":"pw=[REDACTED]&n=1"}`},
		{`{"a":"&#83;3cureLongPassword 123"}`, `{"a":"[REDACTED] 123"}`},
	} {
		out, _, st, err := p.JSONStats([]byte(c.in))
		if err != nil || string(out) != c.want || st.Secrets != 1 {
			t.Errorf("JSONStats(%s) = %s, %+v, %v; want %s and 1 secret", c.in, out, st, err, c.want)
		}
		if again, _, _ := p.JSON(out); !bytes.Equal(again, out) {
			t.Errorf("JSON(%s) = %s, want it unchanged", out, again)
		}
	}
}

// TestTextReadsLayers: text stored beside documents (error messages,
// reasons) is judged as a string value is, its codes included.
func TestTextReadsLayers(t *testing.T) {
	p := NewPolicy(nil)
	for in, want := range map[string]string{
		"upstream said: bad card cvv=987&pin=4821":   "upstream said: bad card cvv=[REDACTED]&pin=[REDACTED]",
		"card 4111 1111 1111 1111 exp 12/25 cvv 123": "card 4111 11** **** 1111 exp 12/25 cvv [REDACTED]",
		"no such card: 1042":                         "no such card: 1042",
	} {
		if got, _ := p.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}
