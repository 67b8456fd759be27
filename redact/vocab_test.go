package redact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func TestVocabularyParses(t *testing.T) {
	v := vocab()
	for _, err := range v.errs {
		t.Error(err)
	}
	if len(v.entries) < 100 {
		t.Errorf("vocabulary has %d entries, want the whole of codewords.txt", len(v.entries))
	}
	bad := parseVocabulary("code\nword cvv\ncode cvv\nvalue cvv\n")
	if len(bad.errs) != 3 {
		t.Errorf("errors of a malformed vocabulary: %v, want 3", bad.errs)
	}
}

// flagWords follow a code in keys that name a flag, an outcome or a
// counter: a code followed by one of them is no code.
var flagWords = []string{"verified", "checked", "result", "attempts", "enabled", "required", "present",
	"status", "count", "check", "match", "length", "set", "failed", "provided", "type"}

// lookAlikeLetters maps each ASCII letter and digit to the characters that are
// read as it in both readings of a key (see confuse), that NFKC keeps and
// that are no combining marks.
var lookAlikeLetters = func() map[byte][]rune {
	m := map[byte][]rune{}
	for _, r := range confusableRunes {
		s := confusable(r)
		if len(s) != 1 || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || unicode.Is(unicode.Mc, r) {
			continue
		}
		if got := string(confuse([]byte(string(r)), false)); got != s {
			continue
		}
		m[s[0]] = append(m[s[0]], r)
	}
	return m
}()

// words returns the words of an entry of codewords.txt.
func entryWords(e vocabEntry) []string { return strings.Fields(e.text) }

// spellKey joins words with sep, or in camelCase when sep is "camel".
func spellKey(words []string, sep string) string {
	if sep != "camel" {
		return strings.Join(words, sep)
	}
	var b strings.Builder
	for i, w := range words {
		if i > 0 && isDigit(w[0]) {
			// Digits stay with the word before them: "input4dbc" is one
			// word.
			b.WriteByte('_')
		} else if i > 0 {
			r, n := utf8.DecodeRuneInString(w)
			b.WriteRune(unicode.ToUpper(r))
			w = w[n:]
		}
		b.WriteString(w)
	}
	return b.String()
}

// withLookAlike returns key with its first ASCII letter that has a
// look-alike written as one, and whether it has one.
func withLookAlike(key string, pick int) (string, bool) {
	for i := 0; i < len(key); i++ {
		if rs := lookAlikeLetters[key[i]]; len(rs) > 0 && key[i] > '9' {
			return key[:i] + string(rs[pick%len(rs)]) + key[i+1:], true
		}
	}
	return key, false
}

// TestVocabularyEntries checks every entry of codewords.txt: a code in
// several spellings is secret, and followed by a flag word it is not; a
// value, card or connector word alone is no code, and keeps a code before
// it secret.
func TestVocabularyEntries(t *testing.T) {
	p := NewPolicy(nil)
	for n, e := range vocab().entries {
		words := entryWords(e)
		snake := spellKey(words, "_")
		t.Run(fmt.Sprintf("%d_%s", n, snake), func(t *testing.T) {
			secret := func(key string, want bool) {
				t.Helper()
				if got := p.SecretKey(key); got != want {
					t.Errorf("SecretKey(%q) = %v, want %v", key, got, want)
				}
			}
			switch e.kind {
			case wCode, wCardCode:
				prefix := ""
				if e.kind == wCardCode {
					secret(snake, false) // alone, it is no card's code
					prefix = "card_"
				}
				keys := []string{
					snake, spellKey(words, "camel"), strings.ToUpper(snake), spellKey(words, "-"),
					spellKey(words, " "), spellKey(words, "."), snake + "_value", snake + "_hash",
					snake + "_de_la_tarjeta", "new_" + snake, strings.ToUpper(spellKey(words, "-")),
				}
				if e.kind == wCode {
					keys = append(keys, "card_"+snake)
				}
				for i, key := range keys {
					secret(prefix+key, true)
					_, n := utf8.DecodeRuneInString(key)
					secret(prefix+key[:n]+"\u200b"+key[n:], true)
					if la, ok := withLookAlike(key, i); ok {
						secret(prefix+la, true)
					}
				}
				for _, flag := range flagWords {
					secret(prefix+snake+"_"+flag, false)
					secret(prefix+spellKey(append(words[:len(words):len(words)], flag), "camel"), false)
					secret(prefix+strings.ToUpper(snake+"_"+flag), false)
				}
			case wValue:
				secret(snake, false)
				secret("cvv_"+snake, true)
				secret("pin_"+snake, true)
				secret("postal_code_"+snake, false)
			case wCard:
				secret(snake, false)
				secret(snake+"_cvv", true)
				secret(snake+"_cid", true)
				secret("cvv_"+snake, false) // a code before a card word
			case wOfCard:
				secret(snake, false)
				secret("пин_"+snake, true)
				secret("cid_"+snake, true)
			case wOf:
				secret(snake, false)
				secret("cvv_"+snake+"_card", true)
			}
		})
	}
}

// TestSecretKeyVocabularyExamples holds the keys and the decisions
// codewords.txt records.
// vocabularyCase is a key of TestSecretKeyVocabularyExamples and whether it names a secret.
type vocabularyCase struct {
	key  string
	want bool
}

func TestSecretKeyVocabularyExamples(t *testing.T) {
	tests := vocabularyExamples()
	p := NewPolicy(nil)
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got := p.SecretKey(tt.key); got != tt.want {
				t.Errorf("SecretKey(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}

// vocabularyExamples are the keys the vocabulary and its look-alikes decide.
func vocabularyExamples() []vocabularyCase {
	return []vocabularyCase{
		{"cardCode", true},
		{"card_code", true},
		{"cv2", true},
		{"ccv", true},
		{"cvd", true},
		{"icvv", true},
		{"pvv", true},
		{"4dbc", true},
		{"4DBC", true},
		{"cvv_hash", true},
		{"pinblock_enc", true},
		{"cvv_encrypted", true},
		{"pin_token", true}, // a token of a code is as good as the code (codewords.txt)
		{"cryptogramme_visuel", true},
		{"código de seguridad", true},
		{"codigo_seguridad", true},
		{"codigoDeSeguridad", true},
		{"código_de_seguridad_de_la_tarjeta", true},
		{"card_code_de_securite", true},
		{"Kartenprüfnummer", true},
		{"kartenpruefnummer", true},
		{"KARTENPRÜFNUMMER", true},
		{"Geheimzahl", true},
		{"セキュリティコード", true},
		{"カードのセキュリティコード", true},
		{"セキュリティコード確認", false}, // a confirmation: an outcome
		{"暗証番号", true},
		{"安全码", true},
		{"卡验证码", true},
		{"信用卡验证码", true},
		{"验证码", false}, // a captcha or an SMS code
		{"密码", false},  // a password
		{"银行卡密码", true},
		{"登录密码", false},
		{"cvv码", true},
		{"CVV2码", true},
		{"보안코드", true},
		{"카드 비밀번호", true},
		{"비밀번호", false},
		{"код безопасности", true},
		{"КОД_БЕЗОПАСНОСТИ", true},
		{"код_безопасности_карты", true},
		{"CVV-код", true},
		{"ПИН", true},
		{"пин-код", true},
		{"почтовый_код", false},
		{"clave", false},
		{"clave_tarjeta", false}, // the last word is the card
		{"clave_de_la_tarjeta", true},
		{"senha_do_cartao", true},
		{"senha", false},
		{"codice_di_sicurezza", true},
		{"codice_di_verifica", false},
		{"codice_di_verifica_della_carta", true},
		{"verification_code", false},
		{"email_verification_code", false},
		{"security_question", false},
		{"codigo_postal", false},
		{"postleitzahl", false},
		{"lapin", false},
		{"cid_de_la_tarjeta", true},
		{"nip", false}, // a Polish tax id
		{"card_nip", true},
		{"card_validation", false}, // an outcome; the code is "card validation code"
		{"card_validation_code", true},
		// Codes of other things that card data carries.
		{"response_code", false},
		{"auth_code", false},
		{"avs_code", false},
		{"decline_code", false},
		{"reason_code", false},
		{"currency_code", false},
		{"merchant_category_code", false},
		{"pin_try_counter", false},
		{"pinless", false},
		{"pin_entry_mode", false},
		{"cvm_results", false},
		{"cvv_response", false},
		{"card_code_verification", false},
		{"security_code_check", false},
		// Look-alikes from other scripts.
		{"\u0441vv", true},                // Cyrillic с
		{"\u0440in", true},                // Cyrillic р
		{"\u0420IN", true},                // Cyrillic Р
		{"\u0420\u0406N", true},           // Cyrillic Р, І
		{"\u03a1\u0399\u039d", true},      // Greek Ρ, Ι, Ν
		{"\u0421VV", true},                // Cyrillic С
		{"\u13df\u13d9\u13d9", true},      // Cherokee Ꮯ, Ꮩ, Ꮩ
		{"\u1d04\u1d20\u1d20", true},      // small capitals ᴄ, ᴠ, ᴠ
		{"card\u0421\u0412\u0412", false}, // Cyrillic С, В, В: "CBB"
		{"\u0441vv_verified", false},
		{"\u0440in_verified", false},
		{"c\u2228\u2228", true}, // logical or ∨ looks like v
	}
}

// neutralWords are words that name nothing of a code, for generated keys.
var neutralWords = []string{"new", "user", "primary", "billing", "holder", "account", "stored", "last", "input", "x"}

// TestSecretKeyGenerated builds random keys from the vocabulary: neutral
// words, a code entry, value words or "of the card", joined by random
// separators, in random case, with look-alike letters and invisible
// characters; the key is secret, and with a flag word after the code it is
// not.
func TestSecretKeyGenerated(t *testing.T) {
	seed := testSeed()
	rng := rand.New(rand.NewPCG(seed, 1))
	v := vocab()
	var codes, cardCodes, values, cards []vocabEntry
	for _, e := range v.entries {
		switch e.kind {
		case wCode:
			codes = append(codes, e)
		case wCardCode:
			cardCodes = append(cardCodes, e)
		case wValue:
			values = append(values, e)
		case wCard:
			cards = append(cards, e)
		}
	}
	pick := func(es []vocabEntry) []string { return entryWords(es[rng.IntN(len(es))]) }
	seps := []string{"_", "-", ".", " ", "/", ":", "camel", "__", "\u00a0"}
	p := NewPolicy(nil)
	n := 3000
	if testing.Short() {
		n = 300
	}
	for range n {
		var words []string
		for range rng.IntN(3) {
			words = append(words, neutralWords[rng.IntN(len(neutralWords))])
		}
		card := false
		if rng.IntN(3) == 0 {
			words = append(words, pick(cards)...)
			card = true
		}
		entry := pick(codes)
		if card && rng.IntN(2) == 0 {
			entry = pick(cardCodes)
		}
		words = append(words, entry...)
		flag := rng.IntN(2) == 0
		if flag {
			words = append(words, flagWords[rng.IntN(len(flagWords))])
		}
		for range rng.IntN(3) {
			words = append(words, pick(values)...)
		}
		if rng.IntN(4) == 0 {
			words = append(words, "de", "la", "tarjeta")
		}
		sep := seps[rng.IntN(len(seps))]
		switch rng.IntN(3) {
		case 0:
			for i := range words {
				words[i] = strings.ToUpper(words[i])
			}
			if sep == "camel" {
				sep = "_"
			}
		case 1:
			if sep != "camel" {
				for i, w := range words {
					words[i] = randomCase(rng, w)
				}
			}
		}
		key := spellKey(words, sep)
		key = disguise(rng, key)
		want := !flag
		if got := p.SecretKey(key); got != want {
			t.Fatalf("seed %d: SecretKey(%q) = %v, want %v (words %q)", seed, key, got, want, words)
		}
	}
}

func randomCase(rng *rand.Rand, w string) string {
	var b strings.Builder
	for _, r := range w {
		if rng.IntN(2) == 0 {
			r = unicode.ToUpper(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// disguise writes some ASCII letters of key as look-alikes and inserts
// invisible characters.
func disguise(rng *rand.Rand, key string) string {
	var b strings.Builder
	for i := 0; i < len(key); {
		r, n := utf8.DecodeRuneInString(key[i:])
		if rs := lookAlikeLetters[key[i]]; len(rs) > 0 && key[i] > '9' && rng.IntN(4) == 0 {
			r = rs[rng.IntN(len(rs))]
		}
		b.WriteRune(r)
		if rng.IntN(10) == 0 {
			b.WriteString([]string{"\u200b", "\u00ad", "\ufeff", "\u2060"}[rng.IntN(4)])
		}
		i += n
	}
	return b.String()
}

// FuzzSecretKeyFolding checks that SecretKey never panics, that folding is
// idempotent, that a key whose letters are written as look-alikes reads as
// the key, and that a key and its Latin skeleton agree where both readings
// of the key give the same skeleton.
func FuzzSecretKeyFolding(f *testing.F) {
	for _, seed := range []string{"cvv", "card_code", "pin_verified", "сvv", "РIN", "ΡΙΝ", "código_de_seguridad",
		"セキュリティコード", "Kartenprüfnummer", "ᏟᏙᏙ", "cvv_hash", "clave_de_la_tarjeta", "c\u200bvv"} {
		f.Add(seed, uint16(7))
	}
	p := NewPolicy(nil)
	f.Fuzz(func(t *testing.T, key string, choice uint16) {
		want := p.SecretKey(key)
		if !utf8.ValidString(key) {
			return
		}
		folded := foldKey([]byte(key))
		if again := foldKey(folded); string(again) != string(folded) {
			t.Fatalf("foldKey(%q) = %q, folded again %q", key, folded, again)
		}
		for _, exact := range []bool{false, true} {
			c := confuse(folded, exact)
			if again := confuse(c, exact); string(again) != string(c) {
				t.Fatalf("confuse(%q, %v) = %q, again %q", folded, exact, c, again)
			}
		}
		// The skeleton, where both readings agree and NFKC keeps it.
		if skel := confuse(folded, false); string(skel) == string(confuse(folded, true)) && norm.NFKC.IsNormal(skel) {
			if got := p.SecretKey(string(skel)); got != want {
				t.Fatalf("SecretKey(%q) = %v, but its skeleton %q: %v", key, want, skel, got)
			}
		}
		// Look-alikes of the letters of an ASCII key.
		for i := 0; i < len(key); i++ {
			if key[i] >= utf8.RuneSelf {
				return
			}
		}
		var b strings.Builder
		k := int(choice)
		for i := 0; i < len(key); i++ {
			if rs := lookAlikeLetters[key[i]]; len(rs) > 0 && key[i] > '9' && k&1 == 1 {
				b.WriteRune(rs[(k>>1)%len(rs)])
			} else {
				b.WriteByte(key[i])
			}
			k = k>>1 | k<<15&0xffff
		}
		if la := b.String(); norm.NFKC.IsNormalString(la) {
			if got := p.SecretKey(la); got != want {
				t.Fatalf("SecretKey(%q) = %v, but with look-alikes %q: %v", key, want, la, got)
			}
		}
	})
}
