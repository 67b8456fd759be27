// Package redact removes card data and credentials from everything cardsync
// stores or logs.
//
// It owns three rules, in one place so that every caller applies the same ones:
//
//   - card numbers (PANs): IsPAN says whether a digit string is a full card
//     number, PANs masks every card number in free text;
//   - JSON documents: Policy.JSON masks card numbers in every key and string
//     (and in numbers whose value is an integer, negative ones included),
//     drops security codes and PINs (see SecretKey), removes the values of
//     a Secrets set (NewSecretPolicy), and rewrites the document in one canonical form,
//     members sorted and the last of duplicate keys kept, so that the same
//     card sent in another member order stores and hashes the same (see
//     Policy.JSON);
//   - credentials: Secrets remembers the password and tokens in use and
//     Secrets.Scrub removes them, bearer tokens and card numbers from text
//     meant for logs and error messages.
//
// Everything here is a pure function of its input (Secrets holds the values it
// was given and nothing else). The package must not do I/O, log, import other
// cardsync packages or anything outside the standard library but
// golang.org/x/text/unicode/norm (NFKC, for reading keys), and must never
// put document content or a secret into an error message: errors name an
// offset and a reason only.
//
// # Card numbers
//
// A card number is a run of 13 to 19 digits that passes the Luhn check and
// starts with a prefix issued to a card network at a length valid for that
// network (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay, Maestro,
// Mir, RuPay, Troy; see IsPAN). A digit is any decimal digit (Unicode
// category Nd: ASCII, full-width, Arabic-Indic, Devanagari, ...), read as the
// ASCII digit of the same value. The digits may be split into groups by 1 to
// 4 separator characters between adjacent digits: any character that is not
// a letter, not a number and not '*' or '+' (spaces and runs of them, tab,
// no-break and other Unicode spaces, '-', en and em dashes, '.', '/', '_',
// zero-width spaces, soft hyphens and other format characters, a byte that
// is not UTF-8; in a JSON string, an escape such as \t or \u0001). Five
// separators, or a letter, break the run. A group of more than 19
// contiguous digits is never part of a card number; when the groups of a run
// hold more than 19 digits, every group-aligned part of 13-19 digits is a
// candidate. Digits glued to letters count ("x4111111111111111y"). A run
// of at most 15 digits (the most an E.164 number has) that follows a '+' is
// an international phone number and is left alone, even when its digits
// happen to pass as a card number ("+49 1511 2345678"); a run of more
// digits after a '+' is read like any other ("+4111111111111111" and
// "ref+4111111111111111" are masked).
//
// A JSON number whose value is an integer that is a card number, or whose
// absolute value is one, is stored as the string of its masked digits, after
// a '-' when it is negative: -4111111111111111 and -4.111111111111111e15
// become "-411111******1111" (see Policy.JSON).
//
// Masking keeps the first 6 and the last 4 digits and writes one '*' over
// each digit between, whatever its script (a digit of several bytes becomes
// the one byte '*'); separators and every other character stay where they
// were. A masked number is not a card number ('*' ends a digit group), and
// masking is repeated until no card number is left, so masking twice
// changes nothing.
package redact
