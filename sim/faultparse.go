package sim

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrBadFault is wrapped by every ParseFault error.
var ErrBadFault = errors.New("bad fault")

// ParseFault parses the -fault text syntax:
//
//	[ENDPOINT:]KIND[=ARG][,KEY=VALUE...]
//
// ENDPOINT is token, account, cards or all (the default). KIND and its
// optional ARG are: status=CODE (default 503), html[=CODE] (default 502),
// reset, truncate, latency=DURATION, trickle[=DURATION between chunks],
// ratelimit (a 429 storm), revoke, foreign=URL, loop[=PAGE] (default 1),
// links-array, total[=DELTA] (default 7), oversize[=BYTES] (default 8 MiB),
// and the envelope faults links-shapes, bom, content-type,
// deep-meta[=DEPTH] (default 100,000), no-content, redirect[=URL] (default
// /login on the same origin), and the walk faults empty-page[=PAGE]
// (default page 2), shrinking-total[=PAGES] (default 1, from page 2 on),
// repeated-page[=PAGE] (default every page), phantom-pages[=TOTAL_PAGES]
// (default 2000), float-pagination, fractional-pages, and shuffle-members,
// secrets-in-data. KEYs are times=N, skip=N,
// percent=P, pages=LIST where LIST is pages and ranges separated by commas
// or semicolons (pages=2-4,7), retry_after=DURATION (or seconds),
// latency=DURATION, chunk=BYTES, url=URL, depth=N, shrink=N, claim=N. Example:
//
//	cards:status=503,retry_after=2s,times=3,pages=2-4
func ParseFault(s string) (Fault, error) {
	var f Fault
	orig := s
	bad := func(format string, a ...any) (Fault, error) {
		return Fault{}, fmt.Errorf("%w %q: %s", ErrBadFault, orig, fmt.Sprintf(format, a...))
	}
	parts, arg, hasArg, herr := faultHead(&f, s)
	if herr != nil {
		return bad("%v", herr)
	}
	var err error
	atoi := func(v string) int {
		n, e := strconv.Atoi(strings.TrimSpace(v))
		if e != nil && err == nil {
			err = e
		}
		return n
	}
	dur := func(v string) time.Duration {
		v = strings.TrimSpace(v)
		if n, e := strconv.Atoi(v); e == nil {
			return time.Duration(n) * time.Second
		}
		d, e := time.ParseDuration(v)
		if e != nil && err == nil {
			err = e
		}
		return d
	}
	// The keys with a whole number.
	ints := map[string]*int{
		"times": &f.Times, "skip": &f.Skip, "percent": &f.Percent, "chunk": &f.Chunk,
		"status": &f.Status, "to": &f.LoopTo, "delta": &f.TotalDelta, "bytes": &f.PadBytes,
		"depth": &f.Depth, "shrink": &f.Shrink, "claim": &f.Claim,
	}
	// set applies one KEY=VALUE (pages aside); false for an unknown key.
	set := func(k, v string) bool {
		if n, ok := ints[k]; ok {
			*n = atoi(v)
			return true
		}
		switch k {
		case "retry_after", "retry-after":
			f.RetryAfter = dur(v)
		case "latency", "delay":
			f.Latency = dur(v)
		case "url":
			f.URL = v
		case "page":
			// The walk faults' argument: the one page they act on.
			if e := addPages(&f.Pages, v); e != nil && err == nil {
				err = e
			}
		default:
			return false
		}
		return true
	}
	if hasArg {
		// The argument after "kind:" is the kind's main key.
		key := faultArgKey(f.Kind)
		if key == "" {
			return bad("kind %s takes no argument", f.Kind)
		}
		set(key, arg)
	}
	inPages := false
	for _, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			if inPages {
				if e := addPages(&f.Pages, p); e != nil {
					return bad("%v", e)
				}
				continue
			}
			return bad("want KEY=VALUE, got %q", p)
		}
		inPages = false
		switch k := strings.ToLower(strings.TrimSpace(k)); k {
		case "pages", "page":
			inPages = true
			if e := addPages(&f.Pages, v); e != nil {
				return bad("%v", e)
			}
		default:
			if !set(k, v) {
				return bad("unknown key %q", k)
			}
		}
	}
	if err != nil {
		return bad("%v", err)
	}
	if err := f.validate(); err != nil {
		return bad("%v", err)
	}
	return f, nil
}

// faultHead reads the endpoint and the kind at the start of s into f and
// returns the parts after them and the kind's argument ("kind=ARG").
func faultHead(f *Fault, s string) (parts []string, arg string, hasArg bool, err error) {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		switch ep := strings.ToLower(s[:i]); ep {
		case EndpointToken, EndpointAccount, EndpointCards:
			f.Endpoint, s = ep, s[i+1:]
		case "all", "*":
			s = s[i+1:]
		}
	}
	parts = strings.Split(s, ",")
	head, arg, hasArg := strings.Cut(parts[0], "=")
	head = strings.ToLower(strings.TrimSpace(head))
	for k, n := range faultKindNames {
		if n == head {
			f.Kind = k
		}
	}
	switch head {
	case "429", "storm", "rate-limit":
		f.Kind = FaultRateLimit
	case "links[]", "links_array":
		f.Kind = FaultLinksArray
	}
	if f.Kind == 0 {
		return nil, "", false, fmt.Errorf("unknown kind %q", head)
	}
	return parts[1:], arg, hasArg, nil
}

// faultArgKey is the key the argument of kind k sets ("status=503" sets
// status), or "" when the kind takes none.
func faultArgKey(k FaultKind) string {
	return map[FaultKind]string{
		FaultStatus: "status", FaultHTML: "status", FaultLatency: "latency", FaultTrickle: "latency",
		FaultForeignNext: "url", FaultLoopNext: "to", FaultTotalChange: "delta", FaultOversize: "bytes",
		FaultDeepMeta: "depth", FaultRedirect: "url",
		FaultEmptyPage: "page", FaultShrinkingTotal: "shrink", FaultRepeatedPage: "page",
		FaultPhantomPages: "claim",
	}[k]
}

func addPages(pages *[]int, s string) error {
	for _, item := range strings.Split(s, ";") {
		item = strings.TrimSpace(item)
		lo, hi, isRange := strings.Cut(item, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return fmt.Errorf("page %q: %w", item, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return fmt.Errorf("page range %q: %w", item, err)
			}
		}
		if a < 1 || b < a || b-a > 100000 {
			return fmt.Errorf("page range %q is empty or invalid", item)
		}
		for p := a; p <= b; p++ {
			*pages = append(*pages, p)
		}
	}
	return nil
}

func (f Fault) validate() error {
	switch f.Endpoint {
	case "", EndpointToken, EndpointAccount, EndpointCards:
	default:
		return fmt.Errorf("unknown endpoint %q", f.Endpoint)
	}
	if _, ok := faultKindNames[f.Kind]; !ok {
		return fmt.Errorf("unknown kind %d", f.Kind)
	}
	if f.Times < 0 || f.Skip < 0 || f.Percent < 0 || f.Percent > 100 {
		return errors.New("times, skip and percent must be non-negative, percent at most 100")
	}
	if f.Status != 0 && (f.Status < 100 || f.Status > 599) {
		return fmt.Errorf("status %d out of range", f.Status)
	}
	if f.Kind == FaultLatency && f.Latency <= 0 {
		return errors.New("latency needs a positive duration")
	}
	if f.Kind == FaultForeignNext {
		u, err := url.Parse(f.URL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return fmt.Errorf("foreign needs an absolute URL, got %q", f.URL)
		}
	}
	if f.LoopTo < 0 || f.PadBytes < 0 || f.Chunk < 0 || f.Depth < 0 || f.Shrink < 0 || f.Claim < 0 {
		return errors.New("negative loop page, padding, chunk, depth, shrink or claim")
	}
	if f.Kind == FaultRedirect && f.URL != "" {
		if _, err := url.Parse(f.URL); err != nil {
			return fmt.Errorf("redirect needs a URL, got %q", f.URL)
		}
	}
	return nil
}

// String renders the fault in the ParseFault syntax.
func (f Fault) String() string {
	var b strings.Builder
	if f.Endpoint != "" {
		b.WriteString(f.Endpoint + ":")
	}
	b.WriteString(f.Kind.String())
	for _, p := range []struct {
		key string
		set bool
		val any
	}{
		{"status", f.Status != 0, f.Status},
		{"retry_after", f.RetryAfter != 0, f.RetryAfter},
		{"latency", f.Latency != 0, f.Latency},
		{"chunk", f.Chunk != 0, f.Chunk},
		{"url", f.URL != "", f.URL},
		{"to", f.LoopTo != 0, f.LoopTo},
		{"delta", f.TotalDelta != 0, f.TotalDelta},
		{"bytes", f.PadBytes != 0, f.PadBytes},
		{"depth", f.Depth != 0, f.Depth},
		{"shrink", f.Shrink != 0, f.Shrink},
		{"claim", f.Claim != 0, f.Claim},
		{"times", f.Times != 0, f.Times},
		{"skip", f.Skip != 0, f.Skip},
		{"percent", f.Percent != 0, f.Percent},
	} {
		if p.set {
			fmt.Fprintf(&b, ",%s=%v", p.key, p.val)
		}
	}
	if len(f.Pages) > 0 {
		ps := make([]string, len(f.Pages))
		for i, p := range f.Pages {
			ps[i] = strconv.Itoa(p)
		}
		b.WriteString(",pages=" + strings.Join(ps, ";"))
	}
	return b.String()
}
