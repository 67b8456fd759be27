package redact

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// SecretKey reports whether a JSON object key names a card security code
// (CVV and its kin) or a PIN, or is one of the policy's extra keys.
// Policy.JSON drops such a key with its value, whatever the value's type;
// for the built-in rule, except a boolean or null value, which can never be
// a code (so a flag such as "has_pin": true is kept).
//
// The built-in rule reads the key's words against a vocabulary, the file
// codewords.txt of this package, which lists the names of card codes and
// PINs of the card schemes and gateways, their common misspellings, and
// their names in French, Spanish, Portuguese, German, Italian, Japanese,
// Chinese, Korean and Russian, with the words around them:
//
//   - The key is folded: invisible characters (Unicode category Cf, such as
//     the soft hyphen U+00AD, zero-width space, non-joiner and joiner
//     U+200B-U+200D, word joiner U+2060 and U+FEFF; variation selectors;
//     U+034F) are removed, the rest is put in Unicode normalisation form
//     NFKC (full-width and mathematical letters become ASCII ones, U+00A0
//     and other spaces ' '), and each character that Unicode's confusables
//     (UTS #39) map to Latin letters or digits is read as them: "сvv" with a
//     Cyrillic с is "cvv", "РIN" with a Cyrillic Р is "PIN", Cherokee,
//     Greek, Armenian and IPA look-alikes likewise. A character is read
//     both as it is and as its lower case is ("Ν", Greek capital nu, is "N"
//     and, like "ν", "v"): the key is secret when either reading is. ASCII
//     characters are never mapped ("l" stays "l", "rn" stays "rn").
//   - It is split into words at every character that is not a letter, a
//     mark or a digit (any Unicode space, punctuation or symbol) and at
//     camelCase boundaries, acronyms included ("cardCVV" is card cvv,
//     "PINCode" is pin code); digits stay with the word they follow
//     ("CVV2"). Words are compared after full Unicode case folding ("ß" is
//     "ss").
//   - The key is also read a second way: split only at characters that are
//     not letters, marks or digits, not at camelCase boundaries. The key is
//     secret when it is secret under either reading. So a code in mixed
//     case is secret without regard to case: "cVV", "CvV2", "CVVcode",
//     "cardVERIFICATIONvalue"; "pinVerified", "spinCount", "PINNED" and
//     "SPIN" are kept under both readings.
//   - A word made only of words of the vocabulary, written together, counts
//     as those words: "cvvcode" is cvv code, "pinblock" pin block,
//     "securitycode" security code, "codigodeseguridad" código de
//     seguridad; "pinned", "spin", "pins" and "lapin" are no such word (a
//     connector such as "la" never starts or ends one).
//   - In a script written without spaces (Chinese, Japanese, Korean, Thai),
//     the words of the vocabulary are found inside a run of its characters:
//     "カードのセキュリティコード" is card, の, security code.
//   - Entries of several words match those words in order, connectors ("de",
//     "of", "der") between them optional: "security_code", "código de
//     seguridad", "codigoSeguridad", "card_verification".
//   - An entry is also matched without its accents ("codigo") and with
//     German umlauts written out ("kartenpruefnummer"); a key's own accents
//     are kept ("pín" is not pin).
//
// Each entry has a kind: a code (cvv, pin, "security code", "código de
// seguridad", セキュリティコード...); a code only beside a card word ("cid",
// "verification code", "clave", "senha", "nip", 验证码, 密码, which alone
// name a customer id, an e-mail's code, a key, a password, a Polish tax id,
// a captcha or SMS code, a password); a value word, the
// form the thing before it is kept in (number, value, code, data, block,
// hash, enc, encrypted, token, número, nummer, 番号, 码..., and any
// number); a card word (card, cc, credit, carte, tarjeta, karte, カード,
// 卡...); a connector.
//
// The key is secret when its last entry that is not a value word, not a
// connector, and not a card word after a connector ("de la tarjeta", "of
// the card", Russian "карты"), is a code, or a code that needs a card word
// in a key that has one. So "cvv", "card_cvv2", "CVV2Code", "cvv_number",
// "pin_block", "card_verification_value", "securityCode", "cardCode",
// "cvv_hash", "pinblock_enc", "código_de_seguridad_de_la_tarjeta",
// "Kartenprüfnummer", "card_cid" and "セキュリティコード" are secret, while
// keys that mention a code before another word, flags, counters and
// outcomes, are not: "pin_verified", "cvc_check", "cvv_result",
// "pin_attempts", "spin_count", "pinned", "postal_code", "cid",
// "verification_code", "security_question". A code kept hashed, encrypted
// or as a token is still secret: a code of three or four digits is found
// again by trying every value.
//
// Extra keys match the whole key exactly, without regard to case, and
// without normalisation.
func (p *Policy) SecretKey(key string) bool {
	return p.extraKey([]byte(key)) || secretKey([]byte(key))
}

// extraKey reports whether key is one of the policy's extra keys.
func (p *Policy) extraKey(key []byte) bool {
	for _, k := range p.extra {
		if bytes.EqualFold(key, k) {
			return true
		}
	}
	return false
}

// secretKey applies the built-in rule of SecretKey to key.
func secretKey(key []byte) bool {
	v := vocab()
	for i, c := range key {
		if c >= utf8.RuneSelf {
			return v.secretFolded(foldKey(key))
		}
		if i+1 == len(key) {
			break
		}
		// Most keys are rejected here, by the first two letters.
		if j := uint(startIndexes[c])*37 + uint(startIndexes[key[i+1]]); v.first2[j/64&31]&(1<<(j%64)) != 0 && v.startsCode(key[i:], j) {
			// Check the rest for non-ASCII characters: they need
			// folding first.
			for _, c := range key[i:] {
				if c >= utf8.RuneSelf {
					return v.secretFolded(foldKey(key))
				}
			}
			return v.secretReadings(key)
		}
	}
	return false
}

// secretFolded reports whether key, a key without invisible characters in
// NFKC, is secret with its confusable characters read as Latin ones, as
// their lower case is or as they are.
func (v *vocabulary) secretFolded(key []byte) bool {
	lower := confuse(key, false)
	if v.secretReadings(lower) {
		return true
	}
	exact := confuse(key, true)
	return !bytes.Equal(exact, lower) && v.secretReadings(exact)
}

// foldKey returns key without invisible characters, in NFKC.
func foldKey(key []byte) []byte {
	visible := make([]byte, 0, len(key))
	for i := 0; i < len(key); {
		r, n := utf8.DecodeRune(key[i:])
		if !invisible(r) {
			visible = append(visible, key[i:i+n]...)
		}
		i += n
	}
	return norm.NFKC.Bytes(visible)
}

// invisible reports whether r is a character that shows nothing and is
// dropped from keys: a format character (Cf), a variation selector or the
// combining grapheme joiner.
func invisible(r rune) bool {
	switch {
	case r < 0xAD:
		return false
	case r == 0x34F, r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

func allDigits(w []byte) bool {
	for _, c := range w {
		if !isDigit(c) {
			return false
		}
	}
	return len(w) > 0
}

// secretReadings reports whether key, a folded key, is secret under either
// reading of SecretKey: split at camelCase boundaries too, or only at
// characters that are not letters or digits, so that a code written in
// mixed case ("cVV", "PiN", "CVVcode") is read as the folded word it is.
func (v *vocabulary) secretReadings(key []byte) bool {
	if v.secretWords(key, true) {
		return true
	}
	// Without upper-case letters, both readings are one.
	for _, c := range key {
		if c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf {
			return v.secretWords(key, false)
		}
	}
	return false
}

// maxFoldedWord bounds the bytes of a word of a key that is read: a longer
// word is no word of the vocabulary, nor made of them.
const maxFoldedWord = 64 * utf8.UTFMax

// secretWords applies the word rule of SecretKey to key, a folded key,
// split into words at camelCase boundaries too when camel is set.
func (v *vocabulary) secretWords(key []byte, camel bool) bool {
	var toksArr [32]int32
	toks := toksArr[:0]
	var wordArr [maxFoldedWord]byte
	for i := 0; i < len(key); {
		s, e := nextWord(key, i, camel)
		if s == e {
			break
		}
		i = e
		if e-s > maxFoldedWord {
			toks = append(toks, tOther)
			continue
		}
		toks = v.appendTokens(toks, foldWord(wordArr[:0], key[s:e]))
	}
	var kindsArr [32]wordKind
	return secretKinds(v.appendKinds(kindsArr[:0], toks))
}

// Character classes for word splitting.
const (
	clSep = iota
	clLower
	clUpper
	clDigit
)

// classAt returns the class of the character at key[i] and its length in
// bytes. Letters without case (and marks) count as lower-case letters: they
// are part of words but never start a new one.
func classAt(key []byte, i int) (int, int) {
	c := key[i]
	if c < utf8.RuneSelf {
		switch {
		case c >= 'a' && c <= 'z':
			return clLower, 1
		case c >= 'A' && c <= 'Z':
			return clUpper, 1
		case c >= '0' && c <= '9':
			return clDigit, 1
		}
		return clSep, 1
	}
	r, n := utf8.DecodeRune(key[i:])
	switch {
	case unicode.IsUpper(r), unicode.IsTitle(r):
		return clUpper, n
	case unicode.IsLetter(r), unicode.IsMark(r):
		return clLower, n
	case unicode.IsNumber(r):
		return clDigit, n
	}
	return clSep, n
}

// nextWord returns the bounds [s, e) of the first word of key[i:] (s == e
// when there is none). Words are split at separators (anything but letters,
// marks and digits), before an upper-case letter that follows a lower-case
// letter or a digit ("cardCvv", "cvv2Code"), and before the last
// upper-case letter of an acronym that a lower-case letter follows
// ("PINCode" is PIN, Code). Digits stay with the word they follow ("CVV2").
// Without camel, words are split at separators only.
func nextWord(key []byte, i int, camel bool) (s, e int) {
	for i < len(key) {
		cl, n := classAt(key, i)
		if cl != clSep {
			break
		}
		i += n
	}
	s = i
	if i == len(key) {
		return s, s
	}
	prev, n := classAt(key, i)
	i += n
	for i < len(key) {
		cl, n := classAt(key, i)
		if cl == clSep {
			break
		}
		if cl == clUpper && camel {
			if prev == clLower || prev == clDigit {
				break
			}
			if prev == clUpper && i+n < len(key) {
				if next, _ := classAt(key, i+n); next == clLower {
					break
				}
			}
		}
		prev = cl
		i += n
	}
	return s, i
}

// normalizeKeys trims the extra key names and drops empty ones.
func normalizeKeys(keys []string) [][]byte {
	var out [][]byte
	for _, k := range keys {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, []byte(k))
		}
	}
	return out
}
