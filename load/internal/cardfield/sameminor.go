package cardfield

import "encoding/json"

// SameMinor says whether two card_state.minor texts ("" for NULL) hold
// the same minor units, whatever their spacing and member order
// (PostgreSQL's jsonb text differs from canonical JSON in both).
func SameMinor(a, b string) bool {
	if a == b {
		return true
	}
	if a == "" || b == "" {
		return false
	}
	var ma, mb map[string]json.Number
	if json.Unmarshal([]byte(a), &ma) != nil || json.Unmarshal([]byte(b), &mb) != nil || len(ma) != len(mb) {
		return false
	}
	for k, v := range ma {
		if w, ok := mb[k]; !ok || w != v {
			return false
		}
	}
	return true
}
