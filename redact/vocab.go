package redact

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// codewordsText is the vocabulary of SecretKey: see codewords.txt.
//
//go:embed codewords.txt
var codewordsText string

// A wordKind says what a word or an entry of the vocabulary is, for the
// rule of SecretKey (see codewords.txt).
type wordKind uint8

const (
	wOther wordKind = iota
	wCode
	wCardCode
	wValue
	wCard
	wOfCard
	wOf
)

var kindNames = map[string]wordKind{
	"code": wCode, "cardcode": wCardCode, "value": wValue, "card": wCard, "ofcard": wOfCard, "of": wOf,
}

// Tokens of a key that are not words of the vocabulary.
const (
	tOther  = -1 // any other word
	tNumber = -2 // a number: a value word
)

// A phrase is an entry of the vocabulary: its words (connectors left out)
// and its kind.
type phrase struct {
	words []int32
	kind  wordKind
}

// A vocabEntry is a line of codewords.txt as written.
type vocabEntry struct {
	kind wordKind
	text string
}

// vocabulary is codewords.txt, read: the words of its entries, folded as
// keys are, and its entries as sequences of those words.
type vocabulary struct {
	ids     map[string]int32   // folded word -> id
	kinds   []wordKind         // the kind of each word as an entry of its own
	phrases map[int32][]phrase // last word -> entries of two words or more, longest first
	maxWord int                // the longest word, in bytes

	// start3 and start2 hold the first three letters or digits (two for a
	// word of two) of one ASCII word of each code and cardcode entry made of
	// ASCII words: an ASCII key with none of them names no code.
	start3 [(37*37*37 + 63) / 64]uint64
	start2 [32]uint64 // 37*37 bits
	first2 [32]uint64 // the first two of start3 and start2

	// wordStarts holds the first two bytes of every word: a word of a key
	// that starts otherwise is made of no vocabulary words.
	wordStarts [1 << 16 / 64]uint64

	entries []vocabEntry // as written, for tests
	errs    []error      // malformed lines, for tests
}

// vocab returns the vocabulary, read from codewords.txt on first use.
var vocab = sync.OnceValue(func() *vocabulary { return parseVocabulary(codewordsText) })

// parseVocabulary reads the text of codewords.txt. Malformed lines are
// skipped and listed in errs.
func parseVocabulary(text string) *vocabulary {
	v := &vocabulary{ids: map[string]int32{}, phrases: map[int32][]phrase{}}
	for n, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		k, ok := kindNames[f[0]]
		if !ok || len(f) < 2 {
			v.errs = append(v.errs, fmt.Errorf("codewords.txt line %d: want a kind (code, cardcode, value, card, ofcard, of) and an entry", n+1))
			continue
		}
		v.entries = append(v.entries, vocabEntry{k, strings.Join(f[1:], " ")})
	}
	// Connectors, value and card words first: entries are read with them.
	for _, pass := range [][]wordKind{{wOf}, {wValue, wCard, wOfCard}, {wCode, wCardCode}} {
		for _, e := range v.entries {
			if slices.Contains(pass, e.kind) {
				for _, variant := range spellings(e.text) {
					v.add(e.kind, variant)
				}
			}
		}
	}
	for first, ps := range v.phrases {
		slices.SortStableFunc(ps, func(a, b phrase) int { return len(b.words) - len(a.words) })
		v.phrases[first] = ps
	}
	return v
}

// spellings returns entry as written, without its accents, and with German
// umlauts written out: "prüfnummer", "prufnummer", "pruefnummer".
func spellings(entry string) []string {
	out := []string{entry}
	umlauts := strings.NewReplacer("ä", "ae", "ö", "oe", "ü", "ue", "Ä", "Ae", "Ö", "Oe", "Ü", "Ue").Replace(entry)
	for _, s := range []string{stripMarks(entry), umlauts} {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// stripMarks returns s without its combining marks, in NFC.
func stripMarks(s string) string {
	d := norm.NFD.String(s)
	var b strings.Builder
	for _, r := range d {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return norm.NFC.String(b.String())
}

// add adds one spelling of an entry: its words folded the way the words of
// a key are.
func (v *vocabulary) add(k wordKind, entry string) {
	folded := confuse(norm.NFKC.Bytes([]byte(entry)), false)
	var words []int32
	var ascii []string
	for _, w := range strings.Fields(string(folded)) {
		fw := string(foldWord(nil, []byte(w)))
		id, ok := v.ids[fw]
		if !ok {
			id = int32(len(v.kinds))
			v.ids[fw] = id
			v.kinds = append(v.kinds, wOther)
			v.maxWord = max(v.maxWord, len(fw))
			if len(fw) >= 2 {
				i := uint(fw[0])<<8 | uint(fw[1])
				v.wordStarts[i/64] |= 1 << (i % 64)
			}
		}
		if k != wOf && v.kinds[id] == wOf {
			continue // a connector inside an entry
		}
		words = append(words, id)
		if isASCII(fw) {
			ascii = append(ascii, fw)
		}
	}
	if len(words) == 0 {
		return
	}
	if len(words) == 1 {
		if old := v.kinds[words[0]]; old != wOther && old != k {
			v.errs = append(v.errs, fmt.Errorf("codewords.txt: %q has two kinds", entry))
		}
		v.kinds[words[0]] = k
	} else {
		last := words[len(words)-1]
		v.phrases[last] = append(v.phrases[last], phrase{words, k})
	}
	if (k == wCode || k == wCardCode) && len(ascii) == len(words) {
		v.addStart(startWord(ascii, v))
	}
}

func isASCII[S []byte | string](s S) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// word returns the id of w, a folded word, and whether it is a word of the
// vocabulary.
func (v *vocabulary) word(w []byte) (int32, bool) {
	id, ok := v.ids[string(w)]
	return id, ok
}

// kindOf returns the kind of token t as an entry of its own.
func (v *vocabulary) kindOf(t int32) wordKind {
	switch t {
	case tOther:
		return wOther
	case tNumber:
		return wValue
	}
	return v.kinds[t]
}

// foldWord appends w to dst with full case folding ("ß" is "ss"): ASCII
// letters in lower case without allocating.
func foldWord(dst, w []byte) []byte {
	for _, c := range w {
		if c >= utf8.RuneSelf {
			return append(dst, cases.Fold().String(string(w))...)
		}
	}
	for _, c := range w {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// noSpaces reports whether r belongs to a script written without spaces
// between words, where the words of the vocabulary are found inside a run.
func noSpaces(r rune) bool {
	if r < 0x0E00 {
		return false
	}
	return r == 0x30FC || r == 0x3005 ||
		unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
			unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

// appendTokens appends to toks the tokens of w, a folded word of a key:
// the vocabulary word it is, the vocabulary words it is made of written
// together, a number, or another word; a run of characters of a script
// without spaces is read as the vocabulary words found in it and the
// characters between them.
func (v *vocabulary) appendTokens(toks []int32, w []byte) []int32 {
	if isASCII(w) {
		return v.appendWord(toks, w)
	}
	for i := 0; i < len(w); {
		// A run of characters of scripts with spaces, then one without.
		j := i
		for j < len(w) {
			r, n := utf8.DecodeRune(w[j:])
			if noSpaces(r) {
				break
			}
			j += n
		}
		if j > i {
			toks = v.appendWord(toks, w[i:j])
		}
		i = j
		for j < len(w) {
			r, n := utf8.DecodeRune(w[j:])
			if !noSpaces(r) {
				break
			}
			j += n
		}
		if j > i {
			toks = v.appendRun(toks, w[i:j])
		}
		i = j
	}
	return toks
}

// appendWord appends the tokens of w, a folded word in a script with
// spaces.
func (v *vocabulary) appendWord(toks []int32, w []byte) []int32 {
	if id, ok := v.word(w); ok {
		return append(toks, id)
	}
	if allDigits(w) {
		return append(toks, tNumber)
	}
	if len(w) <= maxCompoundLen && v.mayCompound(w) {
		if out, ok := v.splitCompound(w, toks, 0); ok {
			return out
		}
	}
	return append(toks, tOther)
}

// mayCompound reports whether w may be made of vocabulary words: whether
// it starts with the first two bytes of one, or with a digit.
func (v *vocabulary) mayCompound(w []byte) bool {
	if len(w) < 2 || isDigit(w[0]) {
		return len(w) >= 2
	}
	i := uint(w[0])<<8 | uint(w[1])
	return v.wordStarts[i/64]&(1<<(i%64)) != 0
}

// maxCompound bounds the words of the vocabulary one written-together word
// may be made of, and the length of such a word.
const (
	maxCompound    = 6
	maxCompoundLen = 64
)

// splitCompound appends to toks the vocabulary words w is made of, written
// together ("cvvcode": cvv, code; "pin2": pin, 2; "codigodeseguridad"),
// and reports whether it is made of such words; toks is unchanged when it
// is not. A connector is never the first or the last part ("lapin" is no
// "la pin").
func (v *vocabulary) splitCompound(w []byte, toks []int32, depth int) ([]int32, bool) {
	if len(w) == 0 {
		return toks, true
	}
	if depth == maxCompound {
		return toks, false
	}
	// The longest word first ("cvv2" before "cvv").
	for n := min(len(w), v.maxWord); n >= 2; n-- {
		id, ok := v.word(w[:n])
		if !ok {
			continue
		}
		if v.kinds[id] == wOf && (depth == 0 || n == len(w)) {
			continue
		}
		if out, ok := v.splitCompound(w[n:], append(toks, id), depth+1); ok {
			return out, true
		}
	}
	// A number: all of its digits at once.
	if isDigit(w[0]) {
		n := 1
		for n < len(w) && isDigit(w[n]) {
			n++
		}
		if out, ok := v.splitCompound(w[n:], append(toks, tNumber), depth+1); ok {
			return out, true
		}
	}
	return toks, false
}

// appendRun appends the tokens of w, a folded run of characters of scripts
// without spaces: the longest vocabulary word at each place, and one
// tOther for the characters between them.
func (v *vocabulary) appendRun(toks []int32, w []byte) []int32 {
	other := false
	for i := 0; i < len(w); {
		found := 0
		for n := min(len(w)-i, v.maxWord); n > 0; n-- {
			if id, ok := v.word(w[i : i+n]); ok {
				toks = append(toks, id)
				found = n
				break
			}
		}
		if found > 0 {
			other = false
			i += found
			continue
		}
		if !other {
			toks = append(toks, tOther)
			other = true
		}
		_, n := utf8.DecodeRune(w[i:])
		i += n
	}
	return toks
}

// appendKinds appends to kinds the kinds of toks read as entries of the
// vocabulary, from the end, where the rule looks: at each place the longest
// entry that ends there, whose words follow one another, connectors
// between them skipped ("card_code_de_securite" ends with "code de
// sécurité", not "card code"). The kinds are appended in reverse order.
func (v *vocabulary) appendKinds(kinds []wordKind, toks []int32) []wordKind {
	for e := len(toks); e > 0; {
		t := toks[e-1]
		if t >= 0 {
			if k, start, ok := v.matchPhrase(toks, e); ok {
				kinds = append(kinds, k)
				e = start
				continue
			}
		}
		kinds = append(kinds, v.kindOf(t))
		e--
	}
	return kinds
}

// matchPhrase returns the kind of the longest entry of two words or more
// that ends at toks[e-1], and the index where it starts.
func (v *vocabulary) matchPhrase(toks []int32, e int) (wordKind, int, bool) {
next:
	for _, ph := range v.phrases[toks[e-1]] {
		j := e - 2
		for i := len(ph.words) - 2; i >= 0; i-- {
			w := ph.words[i]
			for j >= 0 && toks[j] != w && toks[j] >= 0 && v.kinds[toks[j]] == wOf {
				j--
			}
			if j < 0 || toks[j] != w {
				continue next
			}
			j--
		}
		return ph.kind, j + 1, true
	}
	return wOther, e, false
}

// secretKinds applies the rule of SecretKey to the kinds of a key's
// entries: the last one that is not a value word, a connector, or a card
// word after a connector ("de la tarjeta"), is a code, or a cardcode in a
// key with a card word.
// The kinds are in reverse order, the last entry first.
func secretKinds(kinds []wordKind) bool {
	j := 0
	for j < len(kinds) {
		switch kinds[j] {
		case wValue, wOf, wOfCard:
			j++
			continue
		case wCard:
			m := j
			for m < len(kinds) && (kinds[m] == wCard || kinds[m] == wValue) {
				m++
			}
			if m < len(kinds) && kinds[m] == wOf {
				j = m
				continue
			}
		}
		break
	}
	if j == len(kinds) {
		return false
	}
	switch kinds[j] {
	case wCode:
		return true
	case wCardCode:
		return slices.ContainsFunc(kinds, func(k wordKind) bool { return k == wCard || k == wOfCard })
	}
	return false
}
