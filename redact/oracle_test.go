package redact

import (
	"math/big"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cardsync/cardsync/redact/redacttest"
)

// The test oracle: a second, plain implementation of "the card numbers left
// in a text", built from a regular expression, redacttest.Fold and IsPAN, to
// check the scanner against.

// runRE matches a run: groups of decimal digits of any script joined by 1 to
// 4 separators, characters that are neither letters nor numbers nor '*' or
// '+' (an invalid UTF-8 byte is one separator).
var runRE = regexp.MustCompile(`\p{Nd}+(?:[^\p{L}\p{N}*+]{1,4}\p{Nd}+)*`)

// groupRE matches the digit groups of a run.
var groupRE = regexp.MustCompile(`\p{Nd}+`)

// remainingPANs returns the card numbers left in s: every group-aligned
// window of 13 to 19 digits of every run that IsPAN accepts, once its
// digits are read as ASCII ones, but for a run of at most 15 digits right
// after a '+' (a phone number).
func remainingPANs(s string) []string {
	var found []string
	for _, loc := range runRE.FindAllStringIndex(s, -1) {
		run := s[loc[0]:loc[1]]
		groups := groupRE.FindAllString(run, -1)
		if loc[0] > 0 && s[loc[0]-1] == '+' && utf8.RuneCountInString(strings.Join(groups, "")) <= 15 {
			continue // an international phone number (see phoneRun)
		}
		for from := range groups {
			d := ""
			for to := from; to < len(groups); to++ {
				d += redacttest.Fold(groups[to])
				if len(d) > 19 {
					break
				}
				if IsPAN(d) {
					found = append(found, d)
				}
			}
		}
	}
	return found
}

// onlyStars reports whether out differs from in only by '*' written over
// decimal digits, one '*' for each.
func onlyStars(in, out string) bool {
	for in != "" && out != "" {
		r, n := utf8.DecodeRuneInString(in)
		_, m := utf8.DecodeRuneInString(out)
		switch {
		case in[:n] == out[:m]:
		case out[0] == '*' && (n > 1 || r != utf8.RuneError) && unicode.Is(unicode.Nd, r):
		default:
			return false
		}
		in, out = in[n:], out[m:]
	}
	return in == "" && out == ""
}

// holds reports whether text, read as redact reads it (digits as ASCII,
// separators taken out), holds digits.
func holds(text, digits string) bool {
	return strings.Contains(redacttest.Fold(text), digits)
}

// numberPAN returns the digits of the JSON number num, after a '-' when it
// is negative, when its value is an integer whose absolute value is a card
// number.
func numberPAN(num string) (string, bool) {
	if _, exp, ok := strings.Cut(strings.ToLower(num), "e"); ok && len(strings.TrimLeft(exp, "+-0")) > 4 {
		return "", false // too far from 13 to 19 digits for a short input
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok || !r.IsInt() || r.Sign() == 0 {
		return "", false
	}
	d := new(big.Int).Abs(r.Num()).String()
	if !IsPAN(d) {
		return "", false
	}
	if r.Sign() < 0 {
		d = "-" + d
	}
	return d, true
}
