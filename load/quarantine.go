package load

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/cardsync/cardsync/redact"
)

// MaxRejectedBytes bounds rejected_cards.data: a rejected item is stored
// after redaction, cut to this many bytes.
const MaxRejectedBytes = 64 << 10

// quarantine stores one rejected item, or counts a repeat of the latest
// identical rejection (same card id, reason and data) so that an odd card
// upstream adds no row per run.
func (w *Warehouse) quarantine(ctx context.Context, tx *sql.Tx, runID int64, page int, r Rejection, now string) error {
	data, _ := quarantineData(w.policy, r.Data)
	sum := sha256.Sum256([]byte(data))
	digest := hex.EncodeToString(sum[:])
	reason := w.redactText(r.Reason)
	var cardID any
	if r.CardID != "" {
		cardID = r.CardID
	}
	res, err := tx.ExecContext(ctx, `UPDATE rejected_cards SET last_run_id = ?, last_rejected_at = ?, times = times + 1, page = ?
		WHERE rejected_id = (SELECT max(rejected_id) FROM rejected_cards
			WHERE account = ? AND card_id IS ? AND reason = ? AND data_sha256 = ?)`, runID, now, page, w.account, cardID, reason, digest)
	if err != nil {
		return fmt.Errorf("quarantine item %d: %w", r.Index, err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO rejected_cards (run_id, page, card_id, reason, data, rejected_at, last_run_id, last_rejected_at, data_sha256, account)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, runID, page, cardID, reason, data, now, runID, now, digest, w.account); err != nil {
		return fmt.Errorf("quarantine item %d: %w", r.Index, err)
	}
	return nil
}

// quarantineData redacts a rejected item for storage and counts the
// secrets it removed. An item the JSON policy can walk is stored redacted
// and canonical; one it cannot (too deep, not UTF-8, not JSON) is treated as
// text: invalid bytes replaced, the values of secret-named keys replaced,
// card numbers masked and secrets removed. The result is cut to
// MaxRejectedBytes on a character boundary.
func quarantineData(policy *redact.Policy, raw []byte) (string, int) {
	var s string
	var secrets int
	if out, _, n, err := policy.JSONCount(raw); err == nil {
		s, secrets = string(out), n
	} else {
		s = strings.ToValidUTF8(string(raw), "\uFFFD")
		s = secretMember.ReplaceAllStringFunc(s, func(m string) string {
			sub := secretMember.FindStringSubmatch(m)
			if !policy.SecretKey(unquoteKey(sub[1])) {
				return m
			}
			return `"` + sub[1] + `":"[REDACTED]"`
		})
		var scrubbed bool
		if s, scrubbed = policy.Text(s); scrubbed {
			secrets = 1
		}
	}
	if len(s) <= MaxRejectedBytes {
		return s, secrets
	}
	cut := MaxRejectedBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], secrets
}

// secretMember matches a JSON member whose value is a string or a number,
// for quarantineData's text fallback.
var secretMember = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*)`)

func unquoteKey(k string) string {
	if !strings.Contains(k, `\`) {
		return k
	}
	var s string
	if err := json.Unmarshal([]byte(`"`+k+`"`), &s); err == nil {
		return s
	}
	return k
}

// redactText masks card numbers in text the warehouse stores (reasons,
// error messages) and removes the policy's secrets: the callers scrub
// secrets first; this is the last line.
func (w *Warehouse) redactText(s string) string { return RedactText(w.policy, s) }
