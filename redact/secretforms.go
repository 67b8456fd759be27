package redact

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A secret is searched for in every spelling a library gives it. The
// spellings are generated from the value by rule: each escaping style below
// is a set of characters it rewrites and how it writes them, applied to the
// value (one layer), to each one-layer text spelling (two layers: a URL
// query holding JSON, JSON holding HTML), and under base64 and hex.

// form is one spelling of a secret and the shortest part of it that is
// removed on its own.
type form struct {
	text string
	min  int
}

// minHexPiece is the shortest piece of a hex spelling removed on its own:
// 16 hex digits are 8 bytes of the secret, as minPiece is for the others (8
// hex digits would be 4 bytes, which ordinary hex data holds by chance).
const minHexPiece = 2 * minPiece

// minSegment is the shortest segment of a secret, between two characters
// that some style rewrites, that is removed on its own wherever it appears
// (see segments).
const minSegment = 6

// JSON escaping: the classes of characters a style writes as \uXXXX.
const (
	jsTag        = 1 << iota // < > (Go; PHP JSON_HEX_TAG)
	jsAmp                    // & (Go; PHP JSON_HEX_AMP)
	jsApos                   // ' (PHP JSON_HEX_APOS, .NET)
	jsQuote                  // " as \u0022 rather than \" (PHP JSON_HEX_QUOT, .NET)
	jsLineSep                // U+2028 U+2029 (Go, PHP)
	jsPlus                   // + ` (.NET)
	jsNonASCII               // every non-ASCII character (Python, PHP, .NET)
	jsPunct                  // every ASCII character but letters and digits
	jsSlash                  // / as \/ (PHP)
	jsUpperASCII             // upper-case hex digits for ASCII characters (PHP, .NET)
	jsUpperOther             // upper-case hex digits for the others (.NET)
)

// jsGo is the style of Go's encoding/json.
const jsGo = jsTag | jsAmp | jsLineSep

// commonJSONStyles are the escaping styles of the JSON encoders in use:
// Go's (with and without SetEscapeHTML), JavaScript's, Python's, PHP's (no
// JSON_HEX_* flag, TAG|AMP, all four), .NET's, and one that escapes every
// character but letters and digits, in both cases. Two layers deep, these
// are the styles tried.
var commonJSONStyles = [...]int{
	0,                    // JSON.stringify, serde, Jackson
	jsLineSep,            // Go SetEscapeHTML(false)
	jsGo,                 // Go encoding/json
	jsNonASCII,           // Python ensure_ascii
	jsNonASCII | jsSlash, // PHP default
	jsLineSep | jsSlash,  // PHP JSON_UNESCAPED_UNICODE
	jsTag | jsAmp | jsLineSep | jsNonASCII | jsSlash | jsUpperASCII,                      // PHP JSON_HEX_TAG|JSON_HEX_AMP
	jsTag | jsAmp | jsApos | jsQuote | jsLineSep | jsNonASCII | jsSlash | jsUpperASCII,   // PHP JSON_HEX_*
	jsTag | jsAmp | jsApos | jsQuote | jsPlus | jsNonASCII | jsUpperASCII | jsUpperOther, // .NET JavaScriptEncoder.Default
	jsGo | jsNonASCII | jsUpperASCII | jsUpperOther,
	jsPunct | jsNonASCII,
	jsPunct | jsNonASCII | jsUpperASCII | jsUpperOther,
}

// jsonStyles returns, one layer deep, the common styles and every
// combination of PHP's flags: JSON_HEX_TAG, _AMP, _APOS, _QUOT,
// JSON_UNESCAPED_SLASHES and JSON_UNESCAPED_UNICODE.
func jsonStyles(deep bool) []int {
	styles := commonJSONStyles[:]
	if deep {
		return styles
	}
	styles = slices.Clone(styles)
	for flags := range 16 {
		st := flags | jsLineSep | jsUpperASCII // the four flags are the first four classes
		for _, more := range []int{0, jsSlash, jsNonASCII, jsSlash | jsNonASCII} {
			styles = append(styles, st|more)
		}
	}
	return styles
}

// jsonEscape writes v as the content of a JSON string in style.
func jsonEscape(v string, style int) string {
	var b strings.Builder
	b.Grow(2 * len(v))
	for i := 0; i < len(v); {
		r, n := utf8.DecodeRuneInString(v[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteByte(v[i]) // not UTF-8: kept as it is
			i++
			continue
		}
		i += n
		ascii := r < utf8.RuneSelf
		esc := r < 0x20 || r == 0x7f && style&jsNonASCII != 0 ||
			style&jsPunct != 0 && ascii && !isAlnum(byte(r)) ||
			style&jsTag != 0 && (r == '<' || r == '>') || style&jsAmp != 0 && r == '&' ||
			style&jsLineSep != 0 && (r == 0x2028 || r == 0x2029) ||
			style&jsApos != 0 && r == '\'' ||
			style&jsQuote != 0 && r == '"' ||
			style&jsPlus != 0 && (r == '+' || r == '`') ||
			style&jsNonASCII != 0 && !ascii
		switch {
		case r == '"' && !esc, r == '\\' && style&jsPunct == 0:
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '/' && style&jsSlash != 0 && !esc:
			b.WriteString(`\/`)
		case r < 0x20 && style&jsPunct == 0 && shortEscape(byte(r)) != 0:
			b.WriteByte('\\')
			b.WriteByte(shortEscape(byte(r)))
		case esc:
			upper := style&jsUpperOther != 0
			if ascii {
				upper = style&jsUpperASCII != 0
			}
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				writeU(&b, r1, upper)
				writeU(&b, r2, upper)
			} else {
				writeU(&b, r, upper)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// shortEscape returns the letter of JSON's two-character escape of c, or 0.
func shortEscape(c byte) byte {
	switch c {
	case '\b':
		return 'b'
	case '\f':
		return 'f'
	case '\n':
		return 'n'
	case '\r':
		return 'r'
	case '\t':
		return 't'
	}
	return 0
}

func writeU(b *strings.Builder, r rune, upper bool) {
	b.WriteString(`\u`)
	writeHex(b, uint64(r), 4, upper)
}

// writeHex writes x in at least width hex digits.
func writeHex(b *strings.Builder, x uint64, width int, upper bool) {
	digits := "0123456789abcdef"
	if upper {
		digits = "0123456789ABCDEF"
	}
	var buf [16]byte
	i := len(buf)
	for x > 0 || len(buf)-i < width {
		i--
		buf[i] = digits[x&15]
		x >>= 4
	}
	b.Write(buf[i:])
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// HTML and XML escaping: which characters a style rewrites, and how.
const (
	htAll    = 1 << iota // every character but ASCII letters and digits (else & < > " ')
	htDec                // decimal references (&#38;)
	htHex                // hex references (&#x26;)
	htUpper              // upper-case hex digits
	htApos0              // ' as &#039; (PHP)
	htAposN              // ' as &apos; (XML, HTML5)
	htAposX              // ' as &#x27;
	htQuoteN             // " as &quot; (else &#34;)
)

// htmlStyles are the styles of html.EscapeString, PHP's htmlspecialchars,
// XML writers, and numeric references in decimal and hex.
var htmlStyles = [...]int{
	0,                  // Go html.EscapeString: &#39; &#34;
	htApos0 | htQuoteN, // PHP htmlspecialchars(ENT_QUOTES)
	htAposN | htQuoteN, // XML, PHP ENT_HTML5
	htAposX | htQuoteN, // Python html.escape, Rails
	htDec, htHex, htHex | htUpper,
	htAll | htDec, htAll | htHex, htAll | htHex | htUpper,
}

// htmlEscape writes v as HTML or XML text in style.
func htmlEscape(v string, style int) string {
	var b strings.Builder
	b.Grow(2 * len(v))
	for _, r := range v {
		if !(r == '&' || r == '<' || r == '>' || r == '"' || r == '\'' ||
			style&htAll != 0 && (r >= utf8.RuneSelf || !isAlnum(byte(r)))) {
			b.WriteRune(r)
			continue
		}
		if style&(htDec|htHex) == 0 {
			switch {
			case r == '&':
				b.WriteString("&amp;")
			case r == '<':
				b.WriteString("&lt;")
			case r == '>':
				b.WriteString("&gt;")
			case r == '"' && style&htQuoteN != 0:
				b.WriteString("&quot;")
			case r == '"':
				b.WriteString("&#34;")
			case style&htApos0 != 0:
				b.WriteString("&#039;")
			case style&htAposN != 0:
				b.WriteString("&apos;")
			case style&htAposX != 0:
				b.WriteString("&#x27;")
			default:
				b.WriteString("&#39;")
			}
			continue
		}
		if style&htHex != 0 {
			b.WriteString("&#x")
			writeHex(&b, uint64(r), 1, style&htUpper != 0)
		} else {
			b.WriteString("&#")
			b.WriteString(itoa(int(r)))
		}
		b.WriteByte(';')
	}
	return b.String()
}

// Percent-encoding: which characters a style keeps, and how it writes the
// others.
const (
	pcComponent = 1 << iota // keeps ! * ' ( ) too (JavaScript encodeURIComponent)
	pcTilde                 // escapes ~ (PHP urlencode)
	pcPlus                  // space as + (forms)
	pcLower                 // lower-case hex digits
)

// percentStyles are url.QueryEscape's, PHP's urlencode and rawurlencode,
// encodeURIComponent, and lower-case hex; url.PathEscape is added apart.
var percentStyles = [...]int{
	pcPlus, pcPlus | pcTilde, 0, pcComponent, pcPlus | pcLower, pcLower,
}

// percentEncode writes v percent-encoded in style: every byte but ASCII
// letters, digits and - . _ ~ is written %XX.
func percentEncode(v string, style int) string {
	var b strings.Builder
	b.Grow(2 * len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' && style&pcTilde == 0,
			style&pcComponent != 0 && strings.IndexByte("!*'()", c) >= 0:
			b.WriteByte(c)
		case c == ' ' && style&pcPlus != 0:
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			writeHex(&b, uint64(c), 2, style&pcLower == 0)
		}
	}
	return b.String()
}

// textForms returns the spellings of v under one layer of every text
// escaping style (v itself among them), each once; deep (a second layer)
// tries the common JSON styles only.
func textForms(v string, deep bool) []string {
	seen := map[string]bool{v: true}
	forms := []string{v}
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			forms = append(forms, f)
		}
	}
	for _, st := range jsonStyles(deep) {
		add(jsonEscape(v, st))
	}
	for _, st := range htmlStyles {
		add(htmlEscape(v, st))
	}
	for _, st := range percentStyles {
		add(percentEncode(v, st))
	}
	add(url.PathEscape(v))
	return forms
}

// binaryForms returns the spellings of v in base64 (standard and URL-safe,
// padded and not) and hex (both cases). Base64 text that holds v after 0, 1
// or 2 other bytes spells v differently: of each alignment, the characters
// that depend on v's bytes alone are a form. Hex forms are marked by their
// min.
func binaryForms(v string) []form {
	var forms []form
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		forms = append(forms, form{enc.EncodeToString([]byte(v)), minPiece})
		for p := range 3 {
			buf := make([]byte, p+len(v))
			copy(buf[p:], v)
			s := enc.EncodeToString(buf)
			// Character k holds bits [6k, 6k+6); v's bits are [8p, 8(p+len(v))).
			from, to := (8*p+5)/6, 8*(p+len(v))/6
			if to > from {
				forms = append(forms, form{s[from:to], minPiece})
			}
		}
	}
	forms = append(forms, form{hex.EncodeToString([]byte(v)), minHexPiece},
		form{strings.ToUpper(hex.EncodeToString([]byte(v))), minHexPiece})
	return forms
}

// secretForms returns the spellings of v that Add registers: its text
// forms one and two layers deep, base64 and hex of v and of each one-layer
// text form, and the text forms of those. Base64 and hex are left out for
// a value shorter than minAnywhere: 4 to 6 characters of base64 or hex are
// found in ordinary ids and numbers.
func secretForms(v string) []form {
	seen := map[string]bool{}
	var forms []form
	add := func(f form) {
		if f.text != "" && !seen[f.text] {
			seen[f.text] = true
			forms = append(forms, f)
		}
	}
	for _, f := range textForms(v, false) {
		add(form{f, minPiece})
	}
	common := textForms(v, true)
	for _, f := range common {
		for _, g := range textForms(f, true) {
			add(form{g, minPiece})
		}
	}
	if len(v) < minAnywhere {
		return forms
	}
	for _, f := range common {
		for _, b := range binaryForms(f) {
			if b.min == minHexPiece {
				add(b)
				continue
			}
			for _, g := range textForms(b.text, true) {
				add(form{g, minPiece})
			}
		}
	}
	return forms
}

// pairForms returns the spellings of a user:password pair that AddPair
// registers: base64 and hex of the pair and of each of its common text
// spellings, and the text spellings of those base64 forms (base64 in a
// JSON or URL-escaped string).
func pairForms(v string) []form {
	seen := map[string]bool{}
	var forms []form
	for _, f := range textForms(v, true) {
		for _, b := range binaryForms(f) {
			texts := []string{b.text}
			if b.min != minHexPiece {
				texts = textForms(b.text, true)
			}
			for _, g := range texts {
				if g != "" && !seen[g] {
					seen[g] = true
					forms = append(forms, form{g, b.min})
				}
			}
		}
	}
	return forms
}

// segments returns the parts of v, between characters that some style
// rewrites (any but ASCII letters, digits and - . _ ~), of minSegment to
// minPiece-1 bytes: spelled by a style not generated here, the secret keeps
// them intact. Longer parts are pieces of v already; shorter ones are not
// searched for, as they would match ordinary words.
func segments(v string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(v); i++ {
		if i < len(v) && (isAlnum(v[i]) || strings.IndexByte("-._~", v[i]) >= 0) {
			continue
		}
		if n := i - start; n >= minSegment && n < minPiece {
			out = append(out, v[start:i])
		}
		start = i + 1
	}
	return out
}
