package redact_test

import (
	"fmt"
	"strings"

	"github.com/cardsync/cardsync/redact"
	"github.com/cardsync/cardsync/redact/redacttest"
)

func ExamplePolicy_JSON() {
	p := redact.NewPolicy([]string{"ssn"})
	out, fields, err := p.JSON([]byte(`{
		"id": 4111111111111111,
		"number": "4111 1111 1111 1111",
		"backup": 5500005555555559,
		"cvv": "123",
		"has_pin": true,
		"ssn": "078-05-1120",
		"caf\u00e9": "https:\/\/example.com"
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	for _, f := range fields {
		fmt.Println(f.Name, f.Type)
	}
	// Output:
	// {"backup":"550000******5559","café":"https://example.com","has_pin":true,"id":4111111111111111,"number":"4111 11** **** 1111"}
	// backup string
	// café string
	// has_pin boolean
	// id number
	// number string
}

func ExamplePANs() {
	fmt.Println(redact.PANs("paid with 4111-1111-1111-1111 on 2024-01-15, ref 1705312800009"))
	// Output: paid with 4111-11**-****-1111 on 2024-01-15, ref 1705312800009
}

func ExampleSecrets_Scrub() {
	var s redact.Secrets
	s.Add("correct-horse-battery")
	msg := `login: 401 {"echo":"correct-horse-batt","auth":"Bearer eyJhbGciOi.x-y_z=="}`
	fmt.Println(s.Scrub(msg))
	// Output: login: 401 {"echo":"[REDACTED]","auth":"Bearer [REDACTED]"}
}

// Tests of other packages check that no card number of the corpus survives
// in what they store, and that look-alikes are stored as they are.
func Example_corpus() {
	p := redact.NewPolicy(nil)
	leaked, changed := 0, 0
	for _, s := range redacttest.PANCorpus() {
		stored, _, _ := p.JSON([]byte(`{"note":"` + s.Text + `"}`))
		if strings.Contains(string(stored), s.Digits) {
			leaked++
		}
	}
	for _, l := range redacttest.LookAlikes() {
		if redact.PANs(l) != l {
			changed++
		}
	}
	fmt.Println("leaked:", leaked, "look-alikes changed:", changed)
	// Output: leaked: 0 look-alikes changed: 0
}
