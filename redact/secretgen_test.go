package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"net/url"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// goJSON is encoding/json's spelling of the content of a string.
func goJSON(s string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// PHP's json_encode flags.
const (
	phpHexTag = 1 << iota
	phpHexAmp
	phpHexApos
	phpHexQuot
	phpUnescapedSlashes
	phpUnescapedUnicode
)

// phpJSON is PHP's json_encode of a string, without its quotes.
func phpJSON(s string, flags int) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' && flags&phpHexQuot != 0:
			b.WriteString(`\u0022`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '/' && flags&phpUnescapedSlashes == 0:
			b.WriteString(`\/`)
		case r == '<' && flags&phpHexTag != 0:
			b.WriteString(`\u003C`)
		case r == '>' && flags&phpHexTag != 0:
			b.WriteString(`\u003E`)
		case r == '&' && flags&phpHexAmp != 0:
			b.WriteString(`\u0026`)
		case r == '\'' && flags&phpHexApos != 0:
			b.WriteString(`\u0027`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r >= 0x80 && (flags&phpUnescapedUnicode == 0 || r == 0x2028 || r == 0x2029):
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04x`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// dotnetJSON is System.Text.Json's default escaping (JavaScriptEncoder.Default).
func dotnetJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r >= 0x20 && r < 0x7f && !strings.ContainsRune("\"&'+<>`", r):
			b.WriteRune(r)
		default:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04X`, u)
			}
		}
	}
	return b.String()
}

// numericRefsAll writes every character but ASCII letters and digits as an
// HTML numeric reference.
func numericRefsAll(s string, format string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf && isAlnum(byte(r)) {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, format, r)
		}
	}
	return b.String()
}

// spelled is a text holding a secret's spelling: text[off:off+n] is the part
// that depends on the secret alone.
type spelled struct {
	text   string
	off, n int
	hex    bool // a layer is hex: pieces of minHexPiece count
	layers []string
}

// textLayer applies a per-character encoding to e.
func (e spelled) textLayer(name string, enc func(string) string) spelled {
	pre := enc(e.text[:e.off])
	mid := enc(e.text[e.off : e.off+e.n])
	post := enc(e.text[e.off+e.n:])
	return spelled{pre + mid + post, len(pre), len(mid), e.hex, append(e.layers[:len(e.layers):len(e.layers)], name)}
}

// binaryLayer encodes e in base64 or hex after 0 to 2 random bytes and
// before 0 to 3: of the output, the characters whose bits all come from the
// secret's part are the new part.
func (e spelled) binaryLayer(rng *rand.Rand) spelled {
	pre := randBytes(rng, rng.IntN(3))
	post := randBytes(rng, rng.IntN(4))
	in := string(pre) + e.text + string(post)
	a, b := len(pre)+e.off, len(pre)+e.off+e.n
	encs := []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding}
	switch k := rng.IntN(6); k {
	case 4, 5:
		out := hex.EncodeToString([]byte(in))
		if k == 5 {
			out = strings.ToUpper(out)
		}
		return spelled{out, 2 * a, 2 * (b - a), true, append(e.layers[:len(e.layers):len(e.layers)], fmt.Sprintf("hex%d+%d", k, len(pre)))}
	default:
		out := encs[k].EncodeToString([]byte(in))
		from, to := (8*a+5)/6, 8*b/6
		return spelled{out, from, max(0, to-from), e.hex, append(e.layers[:len(e.layers):len(e.layers)], fmt.Sprintf("base64-%d+%d", k, len(pre)))}
	}
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for k := range b {
		b[k] = byte(rng.IntN(256))
	}
	return b
}

// textEncoders are the per-character encodings of the property test; deep
// is false for those tried one layer deep only.
var textEncoders = []struct {
	name string
	deep bool
	enc  func(rng *rand.Rand) func(string) string
}{
	{"go-json", true, func(*rand.Rand) func(string) string { return func(s string) string { return goJSON(s, true) } }},
	{"go-json-nohtml", true, func(*rand.Rand) func(string) string { return func(s string) string { return goJSON(s, false) } }},
	{"php-json-common", true, func(rng *rand.Rand) func(string) string {
		flags := []int{0, phpHexTag | phpHexAmp, phpHexTag | phpHexAmp | phpHexApos | phpHexQuot}[rng.IntN(3)]
		return func(s string) string { return phpJSON(s, flags) }
	}},
	{"php-json-any-flags", false, func(rng *rand.Rand) func(string) string {
		flags := rng.IntN(64)
		return func(s string) string { return phpJSON(s, flags) }
	}},
	{"dotnet-json", true, func(*rand.Rand) func(string) string { return dotnetJSON }},
	{"html", true, func(*rand.Rand) func(string) string { return html.EscapeString }},
	{"html-numeric", true, func(rng *rand.Rand) func(string) string {
		format := []string{"&#%d;", "&#x%x;", "&#x%X;"}[rng.IntN(3)]
		return func(s string) string { return numericRefsAll(s, format) }
	}},
	{"query", true, func(*rand.Rand) func(string) string { return url.QueryEscape }},
	{"path", true, func(*rand.Rand) func(string) string { return url.PathEscape }},
}

// randomEncoding spells secret in one or two layers (at most one of them
// base64 or hex). A pair (user:password) is spelled only as an encoding
// hides it: a Basic header, or base64 or hex, perhaps escaped once more;
// its plain text is the password (a case of its own) next to the user
// name, which is no secret.
func randomEncoding(rng *rand.Rand, secret string, pair bool) spelled {
	e := spelled{text: secret, n: len(secret)}
	if pair {
		if rng.IntN(2) == 0 {
			return e.binaryLayerStd()
		}
		e = e.binaryLayer(rng)
		for rng.IntN(2) == 0 {
			if te := textEncoders[rng.IntN(len(textEncoders))]; te.deep {
				e = e.textLayer(te.name, te.enc(rng))
				break
			}
		}
		return e
	}
	depth := 1 + rng.IntN(2)
	binary := false
	for range depth {
		if !binary && rng.IntN(3) == 0 {
			e = e.binaryLayer(rng)
			binary = true
			continue
		}
		for {
			te := textEncoders[rng.IntN(len(textEncoders))]
			if depth == 2 && !te.deep {
				continue
			}
			e = e.textLayer(te.name, te.enc(rng))
			break
		}
	}
	return e
}

// binaryLayerStd is the Authorization header of HTTP Basic.
func (e spelled) binaryLayerStd() spelled {
	const head = "Authorization: Basic "
	out := base64.StdEncoding.EncodeToString([]byte(e.text))
	return spelled{head + out, len(head), 8 * len(e.text) / 6, false, []string{"basic"}}
}

// randomSecret draws a password (4 to 40 characters from letters, digits,
// the punctuation escaping styles rewrite and non-ASCII letters) or a token
// (JWT-like, base64url, hex).
func randomPassword(rng *rand.Rand) string {
	const ascii = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	const punct = "\"\\/&<>'+=% !#$()*,:;?@[]^`{|}~-._"
	other := []rune("éßñøжΩ中文한😀\u2028")
	var b strings.Builder
	n := 4 + rng.IntN(37)
	mix := rng.IntN(3) // how much punctuation
	for b.Len() < n {
		switch k := rng.IntN(10); {
		case k < 2+2*mix:
			b.WriteByte(punct[rng.IntN(len(punct))])
		case k == 9:
			b.WriteRune(other[rng.IntN(len(other))])
		default:
			b.WriteByte(ascii[rng.IntN(len(ascii))])
		}
	}
	return b.String()
}

func randomToken(rng *rand.Rand) string {
	switch rng.IntN(3) {
	case 0:
		part := func(n int) string { return base64.RawURLEncoding.EncodeToString(randBytes(rng, n)) }
		return part(12+rng.IntN(20)) + "." + part(20+rng.IntN(60)) + "." + part(32)
	case 1:
		return base64.RawURLEncoding.EncodeToString(randBytes(rng, 15+rng.IntN(30)))
	default:
		return hex.EncodeToString(randBytes(rng, 16+rng.IntN(17)))
	}
}

// randomText is ordinary text around a secret: letters, spaces, a little
// punctuation.
func randomText(rng *rand.Rand) string {
	const chars = "abcdefghijklmnopqrstuvwxyz      ABCDEFGHIJKLM.,:;-()"
	b := make([]byte, rng.IntN(40))
	for k := range b {
		b[k] = chars[rng.IntN(len(chars))]
	}
	return string(b)
}
