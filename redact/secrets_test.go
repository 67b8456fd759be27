package redact

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// testToken is a 64-character bearer testToken (RFC 6750 characters).
const testToken = "eyJhbGciOiJIUzI1NiJ9.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THs-~+/"

func TestScrub(t *testing.T) {
	var s Secrets
	s.Add("hunter2-Passw0rd")
	s.Add("s3cr")  // 4 bytes: anywhere
	s.Add("abc")   // 3 bytes: whole words only
	s.Add("a/b+c") // escaped forms too
	s.Add("")      // ignored
	tests := []struct {
		name, in, want string
	}{
		{"nothing", "all fine", "all fine"},
		{"empty", "", ""},
		{"password", "login hunter2-Passw0rd failed", "login [REDACTED] failed"},
		{"password twice", "hunter2-Passw0rd/hunter2-Passw0rd", "[REDACTED]/[REDACTED]"},
		{"glued password", "xhunter2-Passw0rdy", "x[REDACTED]y"},
		{"start cut", "unter2-Passw0rd", "[REDACTED]"},
		{"end cut", "value: hunter2-P…", "value: [REDACTED]…"},
		{"middle piece", "…nter2-Pass…", "…[REDACTED]…"},
		{"7-byte piece kept", "ter2-Pa", "ter2-Pa"},
		{"short secret anywhere", "xs3cry", "x[REDACTED]y"},
		{"very short secret as a word", "abc abcd xabc (abc)", "[REDACTED] abcd xabc ([REDACTED])"},
		{"very short secret next to non-ASCII letters", "éabc abcé", "éabc abcé"},
		{"JSON-escaped form", `{"password":"a\/b+c"}`, `{"password":"[REDACTED]"}`},
		{"URL form", "password=a%2Fb%2Bc&x=1", "password=[REDACTED]&x=1"},
		{"bearer", "Authorization: Bearer " + testToken + "\n", "Authorization: Bearer [REDACTED]\n"},
		{"bearer any case", "authorization: BEARER abc.def-ghi=", "authorization: BEARER [REDACTED]"},
		{"bearer padding", "bearer dG9rZW4==, next", "bearer [REDACTED], next"},
		{"bearer tab", "Bearer\t\tx", "Bearer\t\t[REDACTED]"},
		{"bearer realm: the regexp takes it as a testToken", "Bearer realm=\"api\"", "Bearer [REDACTED]\"api\""},
		{"bearer testToken cut by a short secret", "Bearer abc.def-ghi", "Bearer [REDACTED]"},
		{"bearer testToken partly redacted", "Bearer xyz-hunter2-Passw0rd-tail==", "Bearer [REDACTED]"},
		{"bearer alone", "use a Bearer", "use a Bearer"},
		{"bearer no space", "Bearer:x", "Bearer:x"},
		{"two bearers", "Bearer a Bearer b", "Bearer [REDACTED] Bearer [REDACTED]"},
		{"card number", "card 4111 1111 1111 1111 declined", "card 4111 11** **** 1111 declined"},
		{"all at once", "hunter2-Passw0rd Bearer t0k 4111111111111111", "[REDACTED] Bearer [REDACTED] 411111******1111"},
		{"marker kept", "[REDACTED] and [REDACTED]", "[REDACTED] and [REDACTED]"},
		{"very short secret after a marker", "hunter2-Passw0rdabc", "[REDACTED][REDACTED]"},
		{"UTF-8 kept whole", "é" + "hunter2-Passw0rd"[1:], "é[REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Scrub(tt.in)
			if got != tt.want {
				t.Errorf("Scrub(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := s.Scrub(got); again != got {
				t.Errorf("Scrub(%q) = %q, want it unchanged", got, again)
			}
		})
	}
}

func TestScrubMarkerAsSecret(t *testing.T) {
	var s Secrets
	s.Add("REDACTED")
	s.Add("ACTED]x")
	for _, in := range []string{"REDACTED", "[REDACTED]", "x REDACTED [REDACTED]x y"} {
		got := s.Scrub(in)
		if again := s.Scrub(got); again != got {
			t.Errorf("Scrub(%q) = %q, then %q: want it unchanged", in, got, again)
		}
	}
}

func TestScrubZeroValue(t *testing.T) {
	var s Secrets
	if got, want := s.Scrub("Bearer x 4111111111111111"), "Bearer [REDACTED] 411111******1111"; got != want {
		t.Errorf("Scrub = %q, want %q", got, want)
	}
}

// TestScrubAttacker echoes the testToken and the password in an error body at
// every offset, cut after scrubbing (a log line limit) and before (an
// upstream that truncates its echo): no 8-byte piece may survive.
func TestScrubAttacker(t *testing.T) {
	const password = "pa55-w0rd!with\"quotes"
	filler := strings.Repeat("lorem ipsum, dolor: sit=amet; ", 25)[:600]
	tests := []struct {
		name     string
		secret   string
		register bool
		echo     func(secret string) string
	}{
		{"registered testToken", testToken, true, func(v string) string { return "Authorization: Bearer " + v }},
		{"unregistered testToken", testToken, false, func(v string) string { return "Authorization: Bearer " + v }},
		{"password", password, true, func(v string) string { return `{"password":"` + strings.ReplaceAll(v, `"`, `\"`) + `"}` + v }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Secrets
			if tt.register {
				s.Add(tt.secret)
				s.Add("unrelated-other-testToken-0123456789")
			}
			for off := 0; off <= len(filler); off++ {
				for _, end := range []string{"\t", `"`, "\n", "\x00"} {
					text := filler[:off] + tt.echo(tt.secret) + end + filler[off:]
					scrubbed := s.Scrub(text)
					checkNoPiece(t, s.Scrub, scrubbed, tt.secret)
					checkNoPiece(t, s.Scrub, scrubbed[:min(200, len(scrubbed))], tt.secret)
				}
			}
			// Cut before scrubbing, at every length.
			text := filler[:300] + tt.echo(tt.secret) + "\n" + filler[300:]
			for n := 0; n <= len(text); n++ {
				checkNoPiece(t, s.Scrub, s.Scrub(text[:n]), tt.secret)
			}
		})
	}
}

// checkNoPiece fails if text holds 8 consecutive bytes of secret, or if
// scrubbing it again changes it.
func checkNoPiece(t *testing.T, scrub func(string) string, text, secret string) {
	t.Helper()
	for k := 0; k+minPiece <= len(secret); k++ {
		if strings.Contains(text, secret[k:k+minPiece]) {
			t.Fatalf("scrubbed text %q holds %q", text, secret[k:k+minPiece])
		}
	}
	if again := scrub(text); again != text {
		t.Fatalf("Scrub(%q) = %q, want it unchanged", text, again)
	}
}

func TestSecretsConcurrent(t *testing.T) {
	var s Secrets
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			for n := 0; n < 25; n++ {
				v := fmt.Sprintf("secret-%d-%d-value", g, n)
				s.Add(v)
				if got := s.Scrub("x " + v + " y"); got != "x [REDACTED] y" {
					t.Errorf("Scrub after Add(%q) = %q", v, got)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestSecretsPrintNoValue(t *testing.T) {
	var s Secrets
	s.Add("hunter2-Passw0rd")
	s.Add("hunter2-Passw0rd")
	for _, got := range []string{fmt.Sprint(&s), fmt.Sprintf("%v %+v %#v %s", &s, &s, &s, &s)} {
		if strings.Contains(got, "hunter2") {
			t.Errorf("printing Secrets gives %q", got)
		}
	}
	if got, want := s.String(), "redact.Secrets{1 values}"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestScrubZeroAllocs(t *testing.T) {
	var s Secrets
	s.Add("hunter2-Passw0rd")
	s.Add(testToken)
	text := `POST /v1/login: 401 {"error":"invalid_credentials","message":"check email and password"}`
	if n := testing.AllocsPerRun(100, func() { s.Scrub(text) }); n != 0 {
		t.Errorf("Scrub allocates %v times on clean text, want 0", n)
	}
}

// TestScrubInvalidUTF8 checks spans widened to whole characters that come to
// overlap are merged (found by FuzzScrub).
func TestScrubInvalidUTF8(t *testing.T) {
	var s Secrets
	s.Add("\xb7")
	s.Add("a\xb7b")
	for _, in := range []string{"000000000000000000000000000000 \xb7\x87\xb7", "\xb7\xb7\xb7", "é\xb7 x\xb7\x87", "a\xb7b\xb7"} {
		got := s.Scrub(in)
		if again := s.Scrub(got); again != got {
			t.Errorf("Scrub(%q) = %q, then %q: want it unchanged", in, got, again)
		}
	}
}
