package redact

// Track data and EMV card tags: the magnetic stripe's tracks 1 and 2 and
// their chip equivalents, which PCI DSS forbids keeping after authorisation
// in any part. Each is found by its card number (a full card number by
// IsPAN, always) and the structure around it, and is dropped whole: every
// byte of it, sentinels, name, expiry, service code and discretionary data
// included, becomes '*', so the text keeps its length and offsets.
//
//   - Track 1: [%][B]PAN^NAME^YYMM... [?] — a card number, '^', a name of
//     at most maxName bytes, '^', an expiry YYMM (month 01-12), then the
//     service code and discretionary data up to the end sentinel '?'
//     (letters, digits and spaces), or without it to the end of the
//     letters and digits.
//   - Track 2: [;]PAN=YYMM...[?], or with 'D' for '=' (the form of EMV tag
//     57 and of ISO 8583 field 35): a card number, the separator, an expiry
//     YYMM, the digits after it and any 'F' padding, up to '?'. When the
//     digits before the card number end with tag 57 and its length byte
//     ("57 13", "5713" or "57"), they go too.
//   - EMV tag 5A (the card number, BCD in hex, 'F'-padded): "5A" and an
//     optional length byte of 6 to 10, then the number's digits and any
//     'F' padding.
//
// Hex may be written with a space between bytes ("57 13 41 11 ..."): one
// space is skipped between any two characters read.

// maxName is the most bytes of the name field of track 1 (26 characters
// on the card; UTF-8 and spaces allowed for).
const maxName = 64

// maxTrack1 is the most bytes from a track 1 card number to its end.
const maxTrack1 = 79 + 32

// dropTracks writes '*' over every track and EMV card tag in b and returns
// how many it dropped. In JSON mode b is canonical JSON string content, and
// an escape that a track starts or ends inside of is dropped whole.
func dropTracks(b []byte, json bool) int {
	n := 0
	for from := 0; ; {
		s, e := nextTrack(b, from)
		if s < 0 {
			return n
		}
		if json {
			s, e = escapeBounds(b, s, e)
		}
		for k := s; k < e; k++ {
			b[k] = '*'
		}
		n++
		from = e
	}
}

// escapeBounds widens [s, e) of the canonical JSON string content b so that
// neither end falls inside an escape.
func escapeBounds(b []byte, s, e int) (int, int) {
	for i := 0; i < e; {
		if b[i] != '\\' {
			i++
			continue
		}
		l := escLen(b[i+1])
		if s > i && s < i+l {
			s = i
		}
		if e > i && e < i+l {
			e = i + l
		}
		i += l
	}
	return s, e
}

// nextTrack returns the first track or EMV card tag found from t[from:]
// on: t[start:end], or -1, -1.
func nextTrack[T ~string | ~[]byte](t T, from int) (start, end int) {
	for k := from; k < len(t); k++ {
		var s, e int
		switch c := t[k]; c {
		case '^', '=', 'D', 'd':
			if k == 0 || !isDigit(t[k-1]) && (t[k-1] != ' ' || k < 2 || !isDigit(t[k-2])) {
				continue
			}
			if c == '^' {
				s, e = track1(t, k)
			} else {
				s, e = track2(t, k)
			}
		case 'A', 'a':
			if k == 0 || t[k-1] != '5' {
				continue
			}
			s, e = tag5A(t, k-1)
		default:
			continue
		}
		if s >= from {
			return s, e
		}
	}
	return -1, -1
}

// maxBack is the most digits read back from a separator: a card number,
// tag 57 and its length byte.
const maxBack = maxPAN + 4

// digitsBack reads the ASCII digits right before t[k] backwards (one space
// may sit between two of them, or before t[k]) into d, and their offsets
// into pos, in text order; it returns how many.
func digitsBack[T ~string | ~[]byte](t T, k int, d *[maxBack]byte, pos *[maxBack]int) int {
	var rd [maxBack]byte
	var rp [maxBack]int
	n := 0
	for j := k - 1; j >= 0 && n < maxBack; j-- {
		c := t[j]
		if c == ' ' && j > 0 && isDigit(t[j-1]) && (n > 0 || j == k-1) {
			continue
		}
		if !isDigit(c) {
			break
		}
		rd[n], rp[n] = c, j
		n++
	}
	for i := 0; i < n; i++ {
		d[i], pos[i] = rd[n-1-i], rp[n-1-i]
	}
	return n
}

// panSuffix returns where in d[:n] the longest card number that ends d
// starts, or -1.
func panSuffix(d []byte) int {
	for l := min(len(d), maxPAN); l >= minPAN; l-- {
		if isPANDigits(d[len(d)-l:]) {
			return len(d) - l
		}
	}
	return -1
}

// skipSpace returns j, or j+1 when t[j] is a space.
func skipSpace[T ~string | ~[]byte](t T, j int) int {
	if j < len(t) && t[j] == ' ' {
		return j + 1
	}
	return j
}

// expiryAt reports whether t[j:] starts with four digits YYMM (one space
// allowed between two of them), the month 01 to 12, and returns the offset
// after them.
func expiryAt[T ~string | ~[]byte](t T, j int) (int, bool) {
	var d [4]byte
	for k := 0; k < 4; k++ {
		if k > 0 {
			j = skipSpace(t, j)
		}
		if j >= len(t) || !isDigit(t[j]) {
			return 0, false
		}
		d[k] = t[j]
		j++
	}
	mm := int(d[2]-'0')*10 + int(d[3]-'0')
	return j, mm >= 1 && mm <= 12
}

// isHex reports whether c is a hex digit.
func isHex(c byte) bool { return isDigit(c) || (c|0x20)-'a' < 6 }

// hexVal returns the value of the hex digit c.
func hexVal(c byte) int {
	if isDigit(c) {
		return int(c - '0')
	}
	return int(c|0x20-'a') + 10
}

// tag57Before returns the offset of EMV tag 57, with or without its length
// byte, that ends right before t[at] (one space allowed between bytes), or
// at when there is none.
func tag57Before[T ~string | ~[]byte](t T, at int) int {
	j := at
	if j > 0 && t[j-1] == ' ' {
		j--
	}
	// The length byte, then the tag.
	if j >= 2 && isHex(t[j-1]) && isHex(t[j-2]) {
		k := j - 2
		if k > 0 && t[k-1] == ' ' {
			k--
		}
		if k >= 2 && t[k-2] == '5' && t[k-1] == '7' {
			return k - 2
		}
		if t[j-2] == '5' && t[j-1] == '7' {
			return j - 2 // the tag without a length byte
		}
	}
	return at
}

// track2 matches track 2 data (or EMV tag 57) whose separator is t[k].
func track2[T ~string | ~[]byte](t T, k int) (start, end int) {
	var d [maxBack]byte
	var pos [maxBack]int
	n := digitsBack(t, k, &d, &pos)
	if n < minPAN {
		return -1, -1
	}
	ps := panSuffix(d[:n])
	if ps < 0 {
		return -1, -1
	}
	j, ok := expiryAt(t, skipSpace(t, k+1))
	if !ok {
		return -1, -1
	}
	// The service code and discretionary data, then any padding.
	for {
		c := skipSpace(t, j)
		if c >= len(t) || !isDigit(t[c]) {
			break
		}
		j = c + 1
	}
	for {
		c := skipSpace(t, j)
		if c >= len(t) || t[c]|0x20 != 'f' {
			break
		}
		j = c + 1
	}
	if j < len(t) && t[j] == '?' {
		j++
	}
	start = pos[ps]
	switch {
	case start > 0 && t[start-1] == ';':
		start--
	default:
		start = tag57Before(t, start)
	}
	return start, j
}

// track1 matches track 1 data whose first field separator is t[k].
func track1[T ~string | ~[]byte](t T, k int) (start, end int) {
	var d [maxBack]byte
	var pos [maxBack]int
	n := digitsBack(t, k, &d, &pos)
	if n < minPAN {
		return -1, -1
	}
	ps := panSuffix(d[:n])
	if ps < 0 {
		return -1, -1
	}
	// The name, up to the second separator.
	m := k + 1
	for m < len(t) && m-k <= maxName {
		c := t[m]
		if c == '^' || c < 0x20 || c == '?' || c == '%' || c == ';' {
			break
		}
		m++
	}
	if m >= len(t) || t[m] != '^' {
		return -1, -1
	}
	j, ok := expiryAt(t, m+1)
	if !ok {
		return -1, -1
	}
	// Service code and discretionary data: letters and digits, and
	// spaces too when the end sentinel follows them.
	limit := min(len(t), pos[ps]+maxTrack1)
	end = j
	for ; j < limit; j++ {
		c := t[j]
		if c == '?' {
			end = j + 1
			break
		}
		if !isDigit(c) && (c|0x20)-'a' >= 26 && c != ' ' {
			break
		}
	}
	if end < j || j == limit || t[j] != '?' {
		for end < len(t) && (isDigit(t[end]) || (t[end]|0x20)-'a' < 26) {
			end++
		}
	}
	j = end
	start = pos[ps]
	if start > 0 && t[start-1]|0x20 == 'b' {
		start--
	}
	if start > 0 && t[start-1] == '%' {
		start--
	}
	return start, j
}

// tag5A matches EMV tag 5A, whose "5A" starts at t[k].
func tag5A[T ~string | ~[]byte](t T, k int) (start, end int) {
	p := skipSpace(t, k+2)
	var d [2 * 10]byte
	// With a length byte of 6 to 10: exactly that many bytes of digits
	// and trailing 'F's.
	if p+1 < len(t) && isHex(t[p]) && isHex(t[p+1]) {
		if l := hexVal(t[p])<<4 | hexVal(t[p+1]); l >= 6 && l <= 10 {
			j, n, pad := skipSpace(t, p+2), 0, false
			for nib := 0; nib < 2*l; nib++ {
				if nib > 0 && nib%2 == 0 {
					j = skipSpace(t, j)
				}
				if j >= len(t) {
					break
				}
				c := t[j]
				switch {
				case isDigit(c) && !pad:
					d[n] = c
					n++
				case c|0x20 == 'f':
					pad = true
				default:
					j = -1
				}
				if j < 0 {
					break
				}
				j++
				if nib == 2*l-1 && isPANDigits(d[:n]) {
					return k, j
				}
			}
		}
	}
	// Without one: the longest card number the digits start with.
	j, n := p, 0
	var ends [2 * 10]int
	for n < maxPAN {
		if n > 0 {
			if c := skipSpace(t, j); c < len(t) && isDigit(t[c]) {
				j = c
			}
		}
		if j >= len(t) || !isDigit(t[j]) {
			break
		}
		d[n] = t[j]
		j++
		ends[n] = j
		n++
	}
	for l := n; l >= minPAN; l-- {
		if isPANDigits(d[:l]) {
			e := ends[l-1]
			for e < len(t) && t[e]|0x20 == 'f' {
				e++
			}
			return k, e
		}
	}
	return -1, -1
}
