// Package english spells the counted nouns of the messages cardsync prints
// for people: "1 card", "3 cards", "1 card … it", "2 cards … them". It is
// the one rule for them, so that no message says "1 snapshots" or "lacks 1
// runs". It does no I/O and knows nothing of cardsync's data.
//
// Besides Count: Noun, Plural (regular endings, "x or y" phrases), Them and
// TheyAre; Miscounted, for tests, finds "1 <plural>" in output.
package english

import (
	"regexp"
	"strconv"
	"strings"
)

// Integer is any integer type a count may have.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Count is n followed by noun (a noun phrase in the singular, such as
// "card" or "account snapshot") in the form a count of n takes: "1 card",
// "0 cards", "3 account snapshots".
func Count[N Integer](n N, noun string) string {
	return format(n) + " " + Noun(n, noun)
}

// Noun is noun (a noun phrase in the singular) in the form a count of n
// takes: the phrase as given for 1, its Plural for any other count.
func Noun[N Integer](n N, noun string) string {
	if n == 1 {
		return noun
	}
	return Plural(noun)
}

// Them is the pronoun that refers back to n things: "it" for 1, "them"
// for any other count.
func Them[N Integer](n N) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// TheyAre is the pronoun and verb that refer back to n things: "it is"
// for 1, "they are" for any other count.
func TheyAre[N Integer](n N) string {
	if n == 1 {
		return "it is"
	}
	return "they are"
}

// Plural is the plural of a noun phrase given in the singular: its last
// word takes the regular English ending, and so does each alternative of
// a phrase joined by " or " ("security code or PIN", "security codes or
// PINs"). A word ending in a hissing sound (s, x, z, ch, sh) takes "es"
// ("batch", "batches"); one ending in a consonant and y takes "ies"
// ("entry", "entries"); any other word, an abbreviation in capitals
// included, takes "s" ("card", "cards"; "PIN", "PINs"). A phrase whose
// head is not its last word, or a noun with an irregular plural, has to be
// worded so that it is.
func Plural(noun string) string {
	if alts := strings.Split(noun, " or "); len(alts) > 1 {
		for i, a := range alts {
			alts[i] = pluralWord(a)
		}
		return strings.Join(alts, " or ")
	}
	return pluralWord(noun)
}

// pluralWord is the plural of a phrase whose head is its last word.
func pluralWord(noun string) string {
	word := noun[strings.LastIndexAny(noun, " -")+1:]
	lower := strings.ToLower(word)
	switch {
	case word == "":
		return noun
	case word != lower && word == strings.ToUpper(word):
		// An abbreviation: "PIN" → "PINs", "ID" → "IDs".
		return noun + "s"
	case hasAnySuffix(lower, "s", "x", "z", "ch", "sh"):
		return noun + "es"
	case len(lower) >= 2 && lower[len(lower)-1] == 'y' && !strings.ContainsRune("aeiou", rune(lower[len(lower)-2])):
		return noun[:len(noun)-1] + "ies"
	}
	return noun + "s"
}

func hasAnySuffix(s string, suffixes ...string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

// format writes n in decimal, whatever its integer type.
func format[N Integer](n N) string {
	if n < 0 {
		return strconv.FormatInt(int64(n), 10)
	}
	return strconv.FormatUint(uint64(n), 10)
}

// countOfOne is a standalone count of one ("1 ", not "v1 ", "0.1 " or
// "21 ") and the one or two words after it.
var countOfOne = regexp.MustCompile(`(?:^|[\s(\[])1 ([A-Za-z][A-Za-z-]*)(?: ([A-Za-z][A-Za-z-]*))?`)

// Miscounted returns each place of text where a count of one is followed
// by a noun in the plural ("1 snapshots", "1 card versions"): a test of a
// message runs it over output made with counts of 1. A word counts as a
// plural when it ends in s, but not in ss, us, is or as ("class",
// "status", "this", "has").
func Miscounted(text string) []string {
	var out []string
	for _, m := range countOfOne.FindAllStringSubmatch(text, -1) {
		for _, w := range m[1:] {
			if looksPlural(w) {
				out = append(out, strings.TrimLeft(m[0], " \t\n\r(["))
				break
			}
		}
	}
	return out
}

func looksPlural(w string) bool {
	w = strings.ToLower(w)
	return strings.HasSuffix(w, "s") && !hasAnySuffix(w, "ss", "us", "is", "as")
}
