package redact

import (
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
)

// codeWords are words secretKey knows today, each a key for a code.
var codeWords = []string{"cvv", "cvc", "cvv2", "CVC2", "pin", "PIN", "security_code", "card_verification_value",
	"cardCvv", "pin_block", "card_cid", "X-Card-CVV", "securityCode"}

// lookAlikes are pieces of text near a code that must be kept: flags,
// order numbers, dates, timestamps. Each is a key and a value.
var lookAlikes = [][2]string{
	{"pin_verified", "true"}, {"has_pin", "true"}, {"cvv_checked", "Y"}, {"order", "ORD-2024-00123"},
	{"date", "2024-01-15"}, {"ts", "1705312800123"}, {"ref", "4111111111111112"}, {"amount", "1234.56"},
}

// pans are card numbers a generated document hides in a layer.
var pans = []string{"4111111111111111", "5500005555555559", "378282246310005", "6011111111111117", "3530111333300000"}

// layerGen builds random documents for TestLayersProperty.
type layerGen struct {
	r *rand.Rand
}

func (g *layerGen) pick(s []string) string { return s[g.r.IntN(len(s))] }

// inner returns text that holds code under a code word, with a look-alike
// beside it, in one of the forms upstream text takes.
func (g *layerGen) inner(code string) string {
	w := g.pick(codeWords)
	la := lookAlikes[g.r.IntN(len(lookAlikes))]
	switch g.r.IntN(9) {
	case 0:
		return w + "=" + code + "&" + la[0] + "=" + la[1]
	case 1:
		return la[0] + ": " + la[1] + "\r\n" + w + ": " + code + "\r\n"
	case 2:
		return "<r><" + la[0] + ">" + la[1] + "</" + la[0] + "><" + w + ">" + code + "</" + w + "></r>"
	case 3:
		sep := []string{" ", ": ", "=", " is ", " # ", " = "}[g.r.IntN(6)]
		return "note " + la[0] + " " + la[1] + ", " + w + sep + code + " thanks"
	case 4:
		b, _ := json.Marshal(map[string]any{w: g.maybeNumber(code), la[0]: la[1]})
		return string(b)
	case 5:
		b, _ := json.Marshal([]any{map[string]string{"name": w, "value": code}, map[string]string{"name": la[0], "value": la[1]}})
		return string(b)
	case 6:
		b, _ := json.Marshal([]any{[]any{w, g.maybeNumber(code)}, []string{la[0], la[1]}})
		return string(b)
	case 7:
		b, _ := json.Marshal(map[string]any{"card": map[string]any{"security": map[string]any{"code": g.maybeNumber(code)}}, la[0]: la[1]})
		return string(b)
	}
	return `<input name="` + w + `" value="` + code + `"><i>` + la[0] + " " + la[1] + "</i>"
}

func (g *layerGen) maybeNumber(code string) any {
	if g.r.IntN(2) == 0 && code[0] != '0' {
		n, _ := strconv.Atoi(code)
		return n
	}
	return code
}

// panText returns text that holds pan in one of its written forms.
func (g *layerGen) panText(pan string) string {
	switch g.r.IntN(5) {
	case 0:
		return "card " + pan + " exp 12/25"
	case 1:
		return "pan=" + groups(pan, " ")
	case 2:
		return groups(pan, "-")
	case 3:
		b, _ := json.Marshal(map[string]any{"pan": json.Number(pan), "brand": "visa"})
		return string(b)
	}
	b, _ := json.Marshal(map[string]string{"number": groups(pan, " ")})
	return string(b)
}

func groups(pan, sep string) string {
	var b strings.Builder
	for i := 0; i < len(pan); i += 4 {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(pan[i:min(i+4, len(pan))])
	}
	return b.String()
}

// wrap encodes text in one random layer.
func (g *layerGen) wrap(text string) (string, string) {
	switch g.r.IntN(8) {
	case 0:
		return url.QueryEscape(text), "percent"
	case 1:
		return "data=" + url.QueryEscape(text) + "&ok=1", "query"
	case 2:
		return html.EscapeString(text), "html"
	case 3:
		// A source of its own, so that the choices after this one do
		// not depend on the text's length.
		return numericRefs(rand.New(rand.NewPCG(g.r.Uint64(), 0)), text), "numeric refs"
	case 4:
		return uEscape(rand.New(rand.NewPCG(g.r.Uint64(), 0)), text), "\\u"
	case 5:
		b, _ := json.Marshal(map[string]string{"body": text})
		return string(b), "json text"
	case 6:
		if !strings.ContainsAny(text, "\r\n") {
			return "X-Data: " + text, "header"
		}
	}
	return "<data>" + html.EscapeString(text) + "</data>", "xml"
}

// numericRefs writes some characters of s as &#ddd; or &#xhh;.
func numericRefs(r *rand.Rand, s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c == '&':
			b.WriteString("&amp;")
		case r.IntN(3) == 0 && c < 0x80:
			if r.IntN(2) == 0 {
				fmt.Fprintf(&b, "&#%d;", c)
			} else {
				fmt.Fprintf(&b, "&#x%x;", c)
			}
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// uEscape writes some characters of s as \uXXXX, and its backslashes and
// quotes escaped, as a JSON encoder that escapes more than it must does.
func uEscape(r *rand.Rand, s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteRune(c)
		case strings.ContainsRune("&<>='=:", c) || r.IntN(4) == 0 && c < 0x80:
			fmt.Fprintf(&b, "\\u%04x", c)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// doc places values in a random card document: in objects and arrays at
// random depths.
func (g *layerGen) doc(values []any) []byte {
	root := map[string]any{"id": "crd_" + strconv.Itoa(g.r.IntN(1e6)), "status": "active", "pin_verified": true}
	for k, v := range values {
		var holder any = v
		for d := g.r.IntN(4); d > 0; d-- {
			if g.r.IntN(2) == 0 {
				holder = []any{"x", holder}
			} else {
				holder = map[string]any{"n" + strconv.Itoa(d): holder, "m": 1}
			}
		}
		root["f"+strconv.Itoa(k)] = holder
	}
	b, _ := json.Marshal(root)
	return b
}

// peel returns s and every text it decodes to through the layers, read by
// the standard library: JSON text (every string and number in it), HTML
// references, percent and form encoding, query values, \u escapes.
func peel(s string, depth int, out map[string]bool) {
	if out[s] || depth > 6 {
		return
	}
	out[s] = true
	if t := strings.TrimSpace(s); json.Valid([]byte(t)) && (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) {
		dec := json.NewDecoder(strings.NewReader(t))
		dec.UseNumber()
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			switch v := tok.(type) {
			case string:
				peel(v, depth+1, out)
			case json.Number:
				out[string(v)] = true
			}
		}
	}
	if h := html.UnescapeString(s); h != s {
		peel(h, depth+1, out)
	}
	// '+' is a space in a form body only, text without spaces (as the
	// layers read it: a '+' in prose, "+49 30 1234", stays).
	unescape := url.QueryUnescape
	if strings.Contains(s, " ") {
		unescape = url.PathUnescape
	}
	if q, err := unescape(s); err == nil && q != s {
		peel(q, depth+1, out)
	}
	if vs, err := url.ParseQuery(s); err == nil && !strings.Contains(s, " ") {
		for _, v := range vs {
			for _, x := range v {
				peel(x, depth+1, out)
			}
		}
	}
	if strings.Contains(s, `\`) {
		var u string
		if json.Unmarshal([]byte(`"`+s+`"`), &u) == nil && u != s {
			peel(u, depth+1, out)
		}
	}
}
