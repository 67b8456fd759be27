package extract

import (
	"fmt"
	"io"
	"log/slog"
)

const redacted = "[REDACTED]"

// Secret holds a credential (the password or a bearer token). Every way of
// printing it (fmt verbs including %#v, JSON, slog) yields "[REDACTED]"; only
// Reveal returns the value, and the client calls it only to build a request.
type Secret string

// String returns "[REDACTED]".
func (Secret) String() string { return redacted }

// GoString returns "[REDACTED]", so %#v of a struct holding a Secret is safe.
func (Secret) GoString() string { return redacted }

// Format writes "[REDACTED]" for every verb.
func (Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// MarshalJSON encodes the secret as the JSON string "[REDACTED]".
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// LogValue makes slog print "[REDACTED]".
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// Reveal returns the secret value. Call it only where the value leaves the
// process on purpose (a request body or header).
func (s Secret) Reveal() string { return string(s) }
