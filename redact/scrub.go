package redact

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Scrub returns text fit for a log line or an error message:
//
//  1. every registered secret, in every spelling Add generates (escaped for
//     JSON, HTML or a URL, base64, hex, two layers deep), is replaced by
//     "[REDACTED]" wherever it appears, and so is every piece of 8 or more
//     consecutive bytes of a spelling (16 of a hex one), as a token cut
//     short by a server or by a truncation leaves it, and every part of 6
//     or 7 bytes of a secret of 8 bytes or more that lies between two
//     characters some escaping rewrites (see segments); a secret shorter
//     than 8 bytes is removed in its spellings only whole;
//  2. the token after "Bearer" (any case, then white space, then
//     [A-Za-z0-9-._~+/]+=*) is replaced by "[REDACTED]", registered or not
//     (with any part of it that step 1 replaced already);
//  3. card numbers are masked (see PANs).
//
// "[REDACTED]" itself is never matched, and the steps are repeated until
// nothing changes, so scrubbing scrubbed text changes nothing. Scrub returns
// text itself when there is nothing to remove.
func (s *Secrets) Scrub(text string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	// Each round that changes something turns at least one byte outside a
	// "[REDACTED]" into part of one, or a digit into '*': the loop ends.
	for {
		t, c1 := s.scrubSecrets(text)
		t, c2 := scrubBearer(t)
		t, c3 := maskString(t)
		if !c1 && !c2 && !c3 {
			return text
		}
		text = t
	}
}

// span is a byte range [start, end) of text to replace.
type span struct{ start, end int }

// scrubSecrets replaces the registered secrets in text (step 1 of Scrub).
// Text inside an existing "[REDACTED]" is never matched: the secrets are
// looked for in the segments between them.
func (s *Secrets) scrubSecrets(text string) (string, bool) {
	return s.replaceSecrets(text, false)
}

// replaceSecrets is scrubSecrets; longOnly looks for the secrets of
// minPiece bytes or more (and their pieces) only.
func (s *Secrets) replaceSecrets(text string, longOnly bool) (string, bool) {
	if len(s.values) == 0 {
		return text, false
	}
	var arr [8]span
	spans := arr[:0]
	for from := 0; from < len(text); {
		end := len(text)
		next := len(text)
		if k := strings.Index(text[from:], Redacted); k >= 0 {
			end = from + k
			next = end + len(Redacted)
		}
		spans = s.find(text, from, end, spans, longOnly)
		from = next
	}
	if len(spans) == 0 {
		return text, false
	}
	return replaceSpans(text, spans), true
}

// find appends to spans the secrets found in text[from:end]; longOnly
// skips the secrets shorter than minPiece, but for the segments of longer
// ones (see segments).
func (s *Secrets) find(text string, from, end int, spans []span, longOnly bool) []span {
	seg := text[from:end]
	if longOnly {
		spans = findAnywhere(seg, from, s.segments, spans)
		return s.findLong(seg, from, spans)
	}
	for _, v := range s.whole {
		for k := 0; k+len(v) <= len(seg); {
			at := strings.Index(seg[k:], v)
			if at < 0 {
				break
			}
			a, b := from+k+at, from+k+at+len(v)
			if wordEdge(text, a, true) && wordEdge(text, b, false) {
				spans = append(spans, span{a, b})
			}
			k += at + 1
		}
	}
	spans = findAnywhere(seg, from, s.anywhere, spans)
	return s.findLong(seg, from, spans)
}

// findAnywhere appends to spans every occurrence in seg (which starts at
// offset from of the text) of the values vs.
func findAnywhere(seg string, from int, vs []string, spans []span) []span {
	for _, v := range vs {
		for k := 0; k+len(v) <= len(seg); {
			at := strings.Index(seg[k:], v)
			if at < 0 {
				break
			}
			spans = append(spans, span{from + k + at, from + k + at + len(v)})
			k += at + len(v)
		}
	}
	return spans
}

// findLong appends to spans the runs of registered windows (see pieces)
// found in seg (which starts at offset from of the text): a run of
// consecutive text positions that each start a window of some spelling is
// removed when it covers at least the shortest length one of its windows
// asks for. A spelling, or a piece of it of minPiece bytes or more, is one
// such run.
func (s *Secrets) findLong(seg string, from int, spans []span) []span {
	if len(s.pieces) == 0 || len(seg) < minPiece {
		return spans
	}
	start, need := -1, 0
	for p := 0; p+minPiece <= len(seg); p++ {
		x := load64(seg, p)
		h := (x * 0x9E3779B97F4A7C15) >> s.shift
		var n uint16
		var ok bool
		if s.filter[h>>6]&(1<<(h&63)) != 0 {
			n, ok = s.pieces[x]
		}
		switch {
		case ok && start < 0:
			start, need = p, int(n)
		case ok:
			need = min(need, int(n))
		case start >= 0:
			if end := p - 1 + minPiece; end-start >= need {
				spans = append(spans, span{from + start, from + end})
			}
			start = -1
		}
	}
	if start >= 0 {
		if end := len(seg); end-start >= need {
			spans = append(spans, span{from + start, from + end})
		}
	}
	return spans
}

// wordEdge reports whether offset i of text is the edge of a word: the
// character before it (before is true) or at it is not a letter or digit.
func wordEdge(text string, i int, before bool) bool {
	var r rune
	if before {
		if i == 0 {
			return true
		}
		r, _ = utf8.DecodeLastRuneInString(text[:i])
	} else {
		if i == len(text) {
			return true
		}
		r, _ = utf8.DecodeRuneInString(text[i:])
	}
	return !unicode.IsLetter(r) && !unicode.IsDigit(r)
}

// replaceSpans replaces every span (merged where they overlap or touch, and
// widened to whole UTF-8 characters) with "[REDACTED]".
func replaceSpans(text string, spans []span) string {
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var out strings.Builder
	out.Grow(len(text) + len(Redacted))
	last := 0
	for k := 0; k < len(spans); {
		a, b := spans[k].start, spans[k].end
		for k++; ; k++ {
			for b < len(text) && !utf8.RuneStart(text[b]) {
				b++
			}
			if k == len(spans) || spans[k].start > b {
				break
			}
			b = max(b, spans[k].end)
		}
		for a > last && !utf8.RuneStart(text[a]) {
			a--
		}
		out.WriteString(text[last:a])
		out.WriteString(Redacted)
		last = b
	}
	out.WriteString(text[last:])
	return out.String()
}

// scrubBearer replaces bearer tokens (step 2 of Scrub). Step 1 may have
// replaced a part of a token already ("Bearer [REDACTED].tail"): the token
// then runs over those markers, and is replaced whole, or its other parts
// would stay. A token that is only markers is left as it is.
func scrubBearer(text string) (string, bool) {
	var out []byte
	last := 0
	for i := 0; i+len("bearer") < len(text); i++ {
		if c := text[i] | 0x20; c != 'b' || !strings.EqualFold(text[i:i+6], "bearer") {
			continue
		}
		j := i + 6
		for j < len(text) && isSpace(text[j]) {
			j++
		}
		if j == i+6 {
			continue
		}
		k, chars := j, false
		for k < len(text) {
			if tokenChar(text[k]) {
				k++
				chars = true
			} else if strings.HasPrefix(text[k:], Redacted) {
				k += len(Redacted)
			} else {
				break
			}
		}
		if !chars {
			continue
		}
		for k < len(text) && text[k] == '=' {
			k++
		}
		if out == nil {
			out = make([]byte, 0, len(text)+len(Redacted))
		}
		out = append(out, text[last:j]...)
		out = append(out, Redacted...)
		last = k
		i = k - 1
	}
	if out == nil {
		return text, false
	}
	return string(append(out, text[last:]...)), true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// tokenChar reports whether c may be part of a bearer token (RFC 6750's
// b64token, without the trailing '=').
func tokenChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
}
