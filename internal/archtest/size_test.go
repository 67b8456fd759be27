package archtest

import "testing"

// TestSizes holds every .go file of the module to 500 lines and every function to 100, with no
// exemptions: a longer one is split by meaning.
func TestSizes(t *testing.T) {
	_, root, err := Module(t.Context(), ".")
	if err != nil {
		t.Fatal(err)
	}
	found, err := Oversized(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
}
