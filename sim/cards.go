package sim

import (
	"cmp"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// bodyFaults are the faults a request drew that change a successful reply.
type bodyFaults struct {
	truncate  bool
	trickle   *Fault
	oversize  int
	foreign   string
	loopTo    int
	linksArr  bool
	totalDiff int
	// The envelope faults.
	linksShape  int // 1 + index in linksShapes; 0 = none
	bom         bool
	contentType int // 1: text/plain, 2: none; 0 = application/json
	deepMeta    int // depth of meta.debug; 0 = none
	any         bool
	// The walk faults: no items, total_pages less by shrink, page 1's items,
	// total_pages claimed (0: none), numbers as PHP floats, total_pages
	// without ceil().
	empty      bool
	shrink     int
	repeat     bool
	claim      int
	floats     bool
	fractional bool
	// shuffle seeds the member order of FaultShuffleMembers (0: none).
	shuffle uint64
	secrets bool
}

func (s *Server) bodyFaultsLocked(endpoint string, page int) bodyFaults {
	var bf bodyFaults
	for _, fs := range s.faults {
		if fs.f.Kind.preFault() {
			continue
		}
		if endpoint != EndpointCards {
			switch fs.f.Kind {
			case FaultForeignNext, FaultLoopNext, FaultLinksArray, FaultTotalChange,
				FaultLinksShapes, FaultDeepMeta, FaultShuffleMembers:
				continue
			}
		}
		if endpoint == EndpointToken && fs.f.Kind == FaultSecretsInData {
			continue
		}
		if !fs.take(endpoint, page, s.faultRNG) {
			continue
		}
		s.st.faults++
		bf.any = true
		f := fs.f
		switch f.Kind {
		case FaultTruncate:
			bf.truncate = true
		case FaultTrickle:
			bf.trickle = &f
		case FaultOversize:
			bf.oversize = f.PadBytes
			if bf.oversize == 0 {
				bf.oversize = 8 << 20
			}
		case FaultForeignNext:
			bf.foreign = f.URL
		case FaultLoopNext:
			bf.loopTo = max(f.LoopTo, 1)
		case FaultLinksArray:
			bf.linksArr = true
		case FaultTotalChange:
			bf.totalDiff = f.TotalDelta
			if bf.totalDiff == 0 {
				bf.totalDiff = 7
			}
		case FaultLinksShapes:
			bf.linksShape = 1 + (fs.applied-1)%len(linksShapes)
		case FaultBOM:
			bf.bom = true
		case FaultContentType:
			bf.contentType = 1 + (fs.applied-1)%2
		case FaultDeepMeta:
			bf.deepMeta = cmp.Or(f.Depth, DefaultDeepMetaDepth)
		case FaultEmptyPage:
			bf.empty = true
		case FaultShrinkingTotal:
			bf.shrink = max(f.Shrink, 1)
		case FaultRepeatedPage:
			bf.repeat = true
		case FaultPhantomPages:
			bf.claim = cmp.Or(f.Claim, DefaultPhantomClaim)
		case FaultFloatPagination:
			bf.floats = true
		case FaultFractionalPages:
			bf.fractional = true
		case FaultShuffleMembers:
			bf.shuffle = s.faultRNG.Uint64() | 1
		case FaultSecretsInData:
			bf.secrets = true
		}
	}
	return bf
}

func (s *Server) serveCards(w http.ResponseWriter, r *http.Request, page int) {
	ps := s.opts.PageSize
	s.mu.Lock()
	bf := s.bodyFaultsLocked(EndpointCards, page)
	total := len(s.cards)
	from := page
	if bf.repeat {
		from = 1
	}
	lo := total
	if from-1 <= total/ps { // avoids overflow on huge page numbers
		lo = min((from-1)*ps, total)
	}
	hi := min(lo+ps, total)
	if bf.empty {
		hi = lo
	}
	items := make([][]byte, 0, hi-lo)
	size := 0
	for _, c := range s.cards[lo:hi] {
		items = append(items, c.raw) // raw slices are never modified in place
		size += len(c.raw) + 1
	}
	hook := s.hook
	s.mu.Unlock()

	servedTotal := total + bf.totalDiff
	if servedTotal < 0 {
		servedTotal = 0
	}
	totalPages := max((servedTotal+ps-1)/ps-bf.shrink, 1)
	if bf.claim > 0 {
		totalPages = bf.claim
	}
	// num appends a number of meta.pagination, as a PHP float with
	// FaultFloatPagination.
	num := func(b []byte, n int) []byte {
		b = strconv.AppendInt(b, int64(n), 10)
		if bf.floats {
			b = append(b, ".0"...)
		}
		return b
	}
	php := s.opts.PHPEscaping
	if bf.secrets {
		items = secretItems(items, s.opts.Password, bearer(r), php)
	}
	if bf.shuffle != 0 {
		rng := rand.New(rand.NewPCG(bf.shuffle, uint64(page)))
		for i, it := range items {
			items[i] = shuffleMembers(it, rng)
		}
	}

	b := make([]byte, 0, size+256)
	b = append(b, `{"data":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, `],"meta":{`...)
	if bf.deepMeta > 0 {
		b = append(b, `"debug":`...)
		b = append(b, strings.Repeat("[", bf.deepMeta)...)
		b = append(b, strings.Repeat("]", bf.deepMeta)...)
		b = append(b, ',')
	}
	b = append(b, `"pagination":{"total":`...)
	b = num(b, servedTotal)
	b = append(b, `,"count":`...)
	b = num(b, len(items))
	b = append(b, `,"per_page":`...)
	b = num(b, ps)
	b = append(b, `,"current_page":`...)
	b = num(b, page)
	b = append(b, `,"total_pages":`...)
	if bf.fractional {
		b = appendPHPFloat(b, float64(servedTotal)/float64(ps))
	} else {
		b = num(b, totalPages)
	}
	b = append(b, `,"links":`...)
	b = s.appendLinks(b, r, bf, page, totalPages)
	b = append(b, "}}}"...)

	if hook != nil {
		hook(page)
	}
	s.writeOK(w, r, http.StatusOK, b, bf)
}

// appendLinks appends a page's links object (its shape per bf's faults)
// to b.
func (s *Server) appendLinks(b []byte, r *http.Request, bf bodyFaults, page, totalPages int) []byte {
	php := s.opts.PHPEscaping
	prev := s.opts.PreviousLinks && page > 1
	next := page < totalPages
	switch {
	case bf.linksShape > 0:
		// The next page's URL and number, or the last page's when there
		// is none: the shape is what this fault is about.
		target := min(page+1, totalPages)
		shape := linksShapes[bf.linksShape-1]
		shape = strings.Replace(shape, "%d", strconv.Itoa(target), 1)
		shape = strings.Replace(shape, "%s", string(appendString(nil, s.pageURL(r, "", target), php)), 1)
		b = append(b, shape...)
	case !prev && !next && bf.linksArr:
		b = append(b, "[]"...)
	case !prev && !next:
		b = append(b, "{}"...)
	default:
		b = append(b, '{')
		if prev {
			b = append(b, `"previous":`...)
			b = appendString(b, s.pageURL(r, "", page-1), php)
		}
		if next {
			if prev {
				b = append(b, ',')
			}
			target := page + 1
			if bf.loopTo > 0 {
				target = bf.loopTo
			}
			b = append(b, `"next":`...)
			b = appendString(b, s.pageURL(r, bf.foreign, target), php)
		}
		b = append(b, '}')
	}
	return b
}

// appendPHPFloat appends f as PHP's json_encode writes a float (the
// shortest text that reads back as f, with ".0" when it is integral).
func appendPHPFloat(b []byte, f float64) []byte {
	start := len(b)
	b = strconv.AppendFloat(b, f, 'g', -1, 64)
	if !strings.ContainsAny(string(b[start:]), ".eE") {
		b = append(b, ".0"...)
	}
	return b
}

// appendPadding adds ,"padding":"xxx..." of n bytes before the final brace.
func appendPadding(b []byte, n int) []byte {
	b = append(b, `,"padding":"`...)
	for range n {
		b = append(b, 'x')
	}
	return append(b, '"')
}

// pageURL is the absolute URL of the same path and query with page set.
func (s *Server) pageURL(r *http.Request, base string, page int) string {
	q := r.URL.Query()
	q.Set("page", strconv.Itoa(page))
	path := r.URL.Path
	if base == "" {
		base = s.opts.BaseURL
	} else if u, err := url.Parse(base); err == nil && u.Path != "" && u.Path != "/" {
		path = u.Path
		base = strings.TrimSuffix(u.Scheme+"://"+u.Host, "/")
	} else {
		base = strings.TrimRight(base, "/")
	}
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	return base + path + "?" + q.Encode()
}
