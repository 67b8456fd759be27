package schema

import (
	"os"
	"slices"
	"testing"
)

// TestObjectsWellFormed: names unique, every column described, units known.
func TestObjectsWellFormed(t *testing.T) {
	units := []string{"", UnitCents, UnitCurrency, UnitSeconds, UnitMilliseconds, UnitBytes}
	seen := map[string]bool{}
	for _, o := range Objects() {
		if seen[o.Name] {
			t.Errorf("%s listed twice", o.Name)
		}
		seen[o.Name] = true
		if o.Kind != KindTable && o.Kind != KindView {
			t.Errorf("%s: kind %q", o.Name, o.Kind)
		}
		if o.Description == "" || o.RowPer == "" {
			t.Errorf("%s: no description or row", o.Name)
		}
		if o.Internal != (len(o.Columns) == 0) {
			t.Errorf("%s: internal %v with %d columns documented", o.Name, o.Internal, len(o.Columns))
		}
		cols := map[string]bool{}
		for _, c := range o.Columns {
			if cols[c.Name] {
				t.Errorf("%s.%s listed twice", o.Name, c.Name)
			}
			cols[c.Name] = true
			if c.Description == "" {
				t.Errorf("%s.%s has no description", o.Name, c.Name)
			}
			if !slices.Contains(units, c.Unit) {
				t.Errorf("%s.%s: unknown unit %q", o.Name, c.Unit, c.Unit)
			}
		}
	}
}

// TestReadmeCurrent fails when README.md's schema section is not what
// schema/docs.json says (run go generate ./schema).
func TestReadmeCurrent(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReplaceReadmeSection(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Error("README.md's schema section is stale: run go generate ./schema")
	}
}

// TestDatasetteMetadataCurrent fails when datasette/metadata.json is not
// what schema/docs.json says (run go generate ./schema).
func TestDatasetteMetadataCurrent(t *testing.T) {
	b, err := os.ReadFile("../datasette/metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := DatasetteMetadata()
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(want) {
		t.Error("datasette/metadata.json is stale: run go generate ./schema")
	}
}
