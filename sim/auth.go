package sim

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

func (s *Server) serveToken(w http.ResponseWriter, r *http.Request, now time.Time) {
	email, password, errBody := s.credentials(r)
	if errBody != nil {
		writeJSON(w, errBody.status, errBody.body)
		return
	}
	var missing [][2]string
	if strings.TrimSpace(email) == "" {
		missing = append(missing, [2]string{"email", "The email field is required."})
	}
	if strings.TrimSpace(password) == "" {
		missing = append(missing, [2]string{"password", "The password field is required."})
	}
	if len(missing) > 0 {
		writeJSON(w, http.StatusUnprocessableEntity, validationBody(missing, s.opts.PHPEscaping))
		return
	}
	if email != s.opts.Email || password != s.opts.Password {
		s.mu.Lock()
		s.st.unauthorized++
		s.mu.Unlock()
		writeJSON(w, http.StatusUnauthorized, bodyUnauthenticated)
		return
	}
	exp := now.Add(s.opts.TokenTTL)
	tok := newToken(now, exp)
	s.mu.Lock()
	for t, e := range s.tokens { // keep the map small
		if !now.Before(e) {
			delete(s.tokens, t)
		}
	}
	s.tokens[tok] = exp
	s.st.tokensIssued++
	bf := s.bodyFaultsLocked(EndpointToken, 0)
	s.mu.Unlock()

	ttl := strconv.FormatInt(int64(s.opts.TokenTTL/time.Second), 10)
	var body string
	switch s.opts.TokenShape {
	case TokenShapeToken:
		body = `{"token":"` + tok + `"}`
	case TokenShapeDataAccessToken:
		body = `{"data":{"access_token":"` + tok + `","token_type":"bearer","expires_in":` + ttl + `}}`
	case TokenShapeDataToken:
		body = `{"data":{"token":"` + tok + `"}}`
	default:
		body = `{"access_token":"` + tok + `","token_type":"bearer","expires_in":` + ttl + `}`
	}
	s.writeOK(w, r, s.opts.TokenStatus, []byte(body), bf)
}

type errReply struct {
	status int
	body   []byte
}

// credentials reads email and password from a form or JSON body.
func (s *Server) credentials(r *http.Request) (email, password string, e *errReply) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data" {
		r.Body = http.MaxBytesReader(nil, r.Body, 1<<20)
		if ct == "multipart/form-data" {
			if err := r.ParseMultipartForm(1 << 20); err != nil {
				return "", "", &errReply{http.StatusBadRequest, []byte(`{"message":"Problems parsing form data","status_code":400}`)}
			}
		} else if err := r.ParseForm(); err != nil {
			return "", "", &errReply{http.StatusBadRequest, []byte(`{"message":"Problems parsing form data","status_code":400}`)}
		}
		return r.PostForm.Get("email"), r.PostForm.Get("password"), nil
	}
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err != nil {
		return "", "", &errReply{http.StatusBadRequest, bodyBadJSON}
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return "", "", nil // no input: every field is missing
	}
	if !json.Valid(raw) {
		return "", "", &errReply{http.StatusBadRequest, bodyBadJSON}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return "", "", &errReply{http.StatusBadRequest, bodyNotObject}
	}
	field := func(name string) (string, *errReply) {
		v, ok := obj[name]
		if !ok || string(v) == "null" {
			return "", nil
		}
		var str string
		if err := json.Unmarshal(v, &str); err != nil {
			return "", &errReply{http.StatusBadRequest, []byte(`{"message":"Invalid type for field ` + name + `: expected a string","errors":{"` + name + `":["The ` + name + ` must be a string."]},"status_code":400}`)}
		}
		return str, nil
	}
	if email, e = field("email"); e != nil {
		return "", "", e
	}
	if password, e = field("password"); e != nil {
		return "", "", e
	}
	return email, password, nil
}

// validationBody renders Laravel's 422 body for the given field messages.
func validationBody(fields [][2]string, php bool) []byte {
	b := []byte(`{"message":"The given data was invalid.","errors":{`)
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, f[0], php)
		b = append(b, ":["...)
		b = appendString(b, f[1], php)
		b = append(b, ']')
	}
	return append(b, `},"status_code":422}`...)
}

// newToken returns a random JWT-shaped token whose exp claim is exp.
func newToken(now, exp time.Time) string {
	var rnd [32]byte
	_, _ = rand.Read(rnd[:])
	enc := base64.RawURLEncoding
	head := enc.EncodeToString([]byte(`{"typ":"JWT","alg":"HS256"}`))
	claims := enc.EncodeToString([]byte(`{"sub":"1","iat":` + strconv.FormatInt(now.Unix(), 10) +
		`,"exp":` + strconv.FormatInt(exp.Unix(), 10) + `,"jti":"` + hex.EncodeToString(rnd[:8]) + `"}`))
	return head + "." + claims + "." + enc.EncodeToString(rnd[8:])
}
