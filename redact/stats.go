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
	return p.redact(doc, true)
}

// redact is JSON, JSONCount and JSONStats: the walk, the canonical pass
// and, when the walk saw a name/value pair of a code, the pass that drops
// its value. Card numbers the fast pass masks are counted only when count
// is set (it costs a scan of the strings that hold one).
func (p *Policy) redact(doc []byte, count bool) (out []byte, fields []Field, st Stats, err error) {
	w, _ := p.pool.Get().(*walker)
	if w == nil {
		w = &walker{}
	}
	w.reset(p, doc, w.canon.walked[:0])
	w.counting = count
	// The fast pass's scanner counts every card number and track it masks,
	// over the walker's life: this document's are the difference.
	pans0, tracks0 := w.scan.pans, w.scan.tracks
	err = w.walk()
	if err == nil {
		c := &w.canon
		c.walked = w.out
		out = make([]byte, 0, len(w.out)+8)
		out, fields, st.Secrets = c.run(p.secrets, w.rootObject, out)
		if w.pairs && !p.layersOff {
			var n int
			if out, n = dropPairs(out); n > 0 && w.rootObject {
				fields = c.fields(out, topMembers(out, c.members[:0]))
			}
			w.counts.codes += n
		}
		st.Secrets += w.counts.secrets
		st.CardNumbers = w.counts.cards + w.scan.pans - pans0
		st.Codes = w.counts.codes
		st.TrackData = w.counts.track + w.scan.tracks - tracks0
	}
	// A buffer that grew for a large document is not kept for the next.
	if cap(w.canon.walked) > maxKept {
		w.canon.walked = nil
	}
	w.reset(nil, nil, nil)
	p.pool.Put(w)
	if err != nil {
		return nil, nil, Stats{}, err
	}
	return out, fields, st, nil
}
