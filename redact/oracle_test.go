package redact

import (
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/cardsync/cardsync/redact/redacttest"
)

// The test oracle: a second, plain implementation of "the card numbers left
// in a text", built from a regular expression, redacttest.Fold and IsPAN, to
// check the scanner against.

// oracleTok is one token of a text as the oracle reads it.
type oracleTok struct {
	kind  byte // 'd' digit, 's' separator, '+' plus sign, '*', 'o' anything else
	digit byte // the ASCII digit of a 'd'
}

// oracleDigit returns the ASCII digit r stands for: a decimal digit of any
// script (Unicode category Nd), or a character whose NFKC form is one ASCII
// digit (superscripts, subscripts, circled digits).
func oracleDigit(r rune) (byte, bool) {
	if unicode.Is(unicode.Nd, r) {
		return redacttest.Fold(string(r))[0], true
	}
	if f := norm.NFKC.String(string(r)); len(f) == 1 && f[0] >= '0' && f[0] <= '9' && unicode.IsNumber(r) {
		return f[0], true
	}
	return 0, false
}

// oracleTokens reads s: digits, separators (characters that are neither
// letters nor numbers nor '*' or '+', an invalid UTF-8 byte, and the
// percent-encoded separators %20 %2D %2E %2F %5F), '+' and the rest.
func oracleTokens(s string) []oracleTok {
	var toks []oracleTok
	for i := 0; i < len(s); {
		if s[i] == '%' && i+2 < len(s) {
			switch strings.ToLower(s[i+1 : i+3]) {
			case "20", "2d", "2e", "2f", "5f":
				toks = append(toks, oracleTok{kind: 's'})
				i += 3
				continue
			}
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if d, ok := oracleDigit(r); ok {
			toks = append(toks, oracleTok{'d', d})
			continue
		}
		switch {
		case r == utf8.RuneError && n == 1:
			toks = append(toks, oracleTok{kind: 's'})
		case r == '+', r == '*':
			toks = append(toks, oracleTok{kind: byte(r)})
		case unicode.IsLetter(r), unicode.IsNumber(r), r == '*':
			toks = append(toks, oracleTok{kind: 'o'})
		default:
			toks = append(toks, oracleTok{kind: 's'})
		}
	}
	return toks
}

// remainingPANs returns the card numbers left in s, read as redact promises
// to read it: runs of digit groups joined by 1 to 4 separators (a '+' is one
// only after a digit or another '+'), but for a run of at most 15 digits
// right after a '+' (a phone number); in each run every window of 12 to 19
// digits that IsPAN accepts and whose ends are explained (see eachPAN): in
// one group after a two-digit length equal to its own, or starting its
// group or after zeros or a date only in it, and ending its group, before
// zeros only in it, before three or four digits that end it, or before
// more digits whose first four read as YYMM or MMYY.
func remainingPANs(s string) []string {
	var found []string
	toks := oracleTokens(s)
	for i := 0; i < len(toks); {
		if toks[i].kind != 'd' {
			i++
			continue
		}
		afterPlus := i > 0 && toks[i-1].kind == '+'
		var groups []string
		j := i
		for {
			g := ""
			for j < len(toks) && toks[j].kind == 'd' {
				g += string(toks[j].digit)
				j++
			}
			groups = append(groups, g)
			k, seps := j, 0
			for k < len(toks) && seps < 4 {
				t := toks[k]
				if t.kind == 's' || t.kind == '+' && toks[k-1].kind != 's' {
					k++
					seps++
					continue
				}
				break
			}
			if seps == 0 || k >= len(toks) || toks[k].kind != 'd' {
				break
			}
			j = k
		}
		i = j
		all := strings.Join(groups, "")
		if afterPlus && len(all) <= 15 {
			continue // an international phone number (see phoneRun)
		}
		found = append(found, oracleWindows(groups)...)
	}
	return found
}

// oracleWindows returns the windows of the run of groups that are card
// numbers with explained ends.
func oracleWindows(groups []string) []string {
	var found []string
	type at struct{ g, k int } // group, digit in it
	var where []at
	for g, s := range groups {
		for k := range s {
			where = append(where, at{g, k})
		}
	}
	all := strings.Join(groups, "")
	for s := range all {
		for e := s + 12; e <= len(all) && e-s <= 19; e++ {
			w := all[s:e]
			if !IsPAN(w) {
				continue
			}
			first, last := where[s], where[e-1]
			before := groups[first.g][:first.k]
			after := groups[last.g][last.k+1:]
			lengthPrefixed := first.g == last.g && len(before) >= 2 && before[len(before)-2:] == strconv.Itoa(len(w))
			isMonth := func(m string) bool { v, _ := strconv.Atoi(m); return v >= 1 && v <= 12 }
			isDay := func(m string) bool { v, _ := strconv.Atoi(m); return v >= 1 && v <= 31 }
			left := strings.Trim(before, "0") == "" ||
				len(before) == 4 && isMonth(before[2:4]) ||
				len(before) == 6 && isMonth(before[2:4]) && isDay(before[4:6]) ||
				len(before) == 8 && isMonth(before[4:6]) && isDay(before[6:8])
			right := strings.Trim(after, "0") == "" || len(after) == 3 || len(after) == 4 ||
				len(after) > 4 && (isMonth(after[2:4]) || isMonth(after[0:2]))
			if lengthPrefixed || left && right {
				found = append(found, w)
			}
		}
	}
	return found
}

// isOracleDigit reports whether the oracle reads r as a digit.
func isOracleDigit(r rune) bool { _, ok := oracleDigit(r); return ok }

// onlyStars reports whether out differs from in only by '*' written over
// digits (see oracleDigit), one '*' for each.
func onlyStars(in, out string) bool {
	for in != "" && out != "" {
		r, n := utf8.DecodeRuneInString(in)
		_, m := utf8.DecodeRuneInString(out)
		switch {
		case in[:n] == out[:m]:
		case out[0] == '*' && (n > 1 || r != utf8.RuneError) && isOracleDigit(r):
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
// is negative, when its value is an integer whose absolute value holds a
// card number (see remainingPANs).
func numberPAN(num string) (string, bool) {
	if _, exp, ok := strings.Cut(strings.ToLower(num), "e"); ok && len(strings.TrimLeft(exp, "+-0")) > 4 {
		return "", false // too far from 13 to 19 digits for a short input
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok || !r.IsInt() || r.Sign() == 0 {
		return "", false
	}
	d := new(big.Int).Abs(r.Num()).String()
	integer := strings.Trim(strings.TrimPrefix(num, "-"), "0123456789") == ""
	if !integer && len(d) > 19 || len(remainingPANs(d)) == 0 {
		// A fraction or an exponent is read for a value of at most 19
		// digits; the digits of an integer are one run.
		return "", false
	}
	if r.Sign() < 0 {
		d = "-" + d
	}
	return d, true
}
