package redact

// Stats counts what Policy.JSONStats found and removed in one document.
type Stats struct {
	// Secrets counts the strings, keys and numbers that had a secret of
	// the policy's Secrets set (or a bearer token) replaced.
	Secrets int
	// CardNumbers counts the full card numbers masked.
	CardNumbers int
	// Codes counts the security codes and PINs dropped: members under a
	// code word, and code values found inside text.
	Codes int
	// TrackData counts the track data and EMV card tags dropped whole.
	TrackData int
}

// Add returns the sum of s and o.
func (s Stats) Add(o Stats) Stats {
	return Stats{
		Secrets:     s.Secrets + o.Secrets,
		CardNumbers: s.CardNumbers + o.CardNumbers,
		Codes:       s.Codes + o.Codes,
		TrackData:   s.TrackData + o.TrackData,
	}
}

// JSONStats is JSON that also counts what was found (see Stats).
func (p *Policy) JSONStats(doc []byte) (out []byte, fields []Field, st Stats, err error) {
	out, fields, st.Secrets, err = p.JSONCount(doc)
	return out, fields, st, err
}
