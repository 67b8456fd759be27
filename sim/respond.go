package sim

import (
	"net"
	"net/http"
	"strconv"
	"time"
)

func setRetryAfter(w http.ResponseWriter, d time.Duration) {
	if d > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(retryAfterSeconds(d), 10))
	}
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, private")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeOK writes a successful JSON reply, applying body faults.
func (s *Server) writeOK(w http.ResponseWriter, r *http.Request, status int, body []byte, bf bodyFaults) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, private")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		w.WriteHeader(status)
		return
	}
	if bf.oversize > 0 && len(body) > 0 && body[len(body)-1] == '}' {
		padded := make([]byte, 0, len(body)+bf.oversize+16)
		padded = appendPadding(append(padded, body[:len(body)-1]...), bf.oversize)
		body = append(padded, '}')
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	if bf.bom {
		body = append([]byte("\xEF\xBB\xBF"), body...)
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	switch bf.contentType {
	case 1:
		h.Set("Content-Type", "text/plain; charset=UTF-8")
	case 2:
		h["Content-Type"] = nil // and no sniffing either
	}
	if bf.any {
		s.log.Debug("sim fault", "path", r.URL.Path, "truncate", bf.truncate, "trickle", bf.trickle != nil,
			"oversize", bf.oversize, "foreign", bf.foreign, "loop_to", bf.loopTo, "links_array", bf.linksArr, "total_delta", bf.totalDiff,
			"links_shape", bf.linksShape, "bom", bf.bom, "content_type", bf.contentType, "deep_meta", bf.deepMeta)
	}
	switch {
	case bf.truncate:
		w.WriteHeader(status)
		_, _ = w.Write(body[:len(body)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		dropConn(w, false)
	case bf.trickle != nil:
		chunk, delay := bf.trickle.Chunk, bf.trickle.Latency
		if chunk <= 0 {
			chunk = 64
		}
		if delay <= 0 {
			delay = 50 * time.Millisecond
		}
		w.WriteHeader(status)
		rc := http.NewResponseController(w)
		for len(body) > 0 {
			n := min(chunk, len(body))
			if _, err := w.Write(body[:n]); err != nil {
				return
			}
			body = body[n:]
			if rc.Flush() != nil {
				return
			}
			if len(body) > 0 && !wait(r, delay) {
				return
			}
		}
	default:
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

// wait sleeps for d unless the client goes away first; it reports whether
// the full wait elapsed.
func wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// dropConn closes the connection under the handler: with reset, abruptly
// with a TCP RST (SO_LINGER 0); otherwise with a FIN after what was written.
func dropConn(w http.ResponseWriter, reset bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // the server closes the connection
	}
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
