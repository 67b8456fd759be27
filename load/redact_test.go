package load

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain PAN", `{"pan":"4111111111111111"}`, `{"pan":"411111******1111"}`},
		{"spaces kept", `{"pan":"4111 1111 1111 1111"}`, `{"pan":"4111 11** **** 1111"}`},
		{"dashes kept", `{"pan":"4111-1111-1111-1111"}`, `{"pan":"4111-11**-****-1111"}`},
		{"inside text", `{"note":"paid with 5500005555555559 today"}`, `{"note":"paid with 550000******5559 today"}`},
		{"13 digits", `{"p":"4222222222222"}`, `{"p":"422222***2222"}`},
		{"19 digits", `{"p":"6011000000000000001"}`, `{"p":"601100*********0001"}`},
		{"not luhn", `{"p":"4111111111111112"}`, `{"p":"4111111111111112"}`},
		{"12 digits", `{"p":"411111111111"}`, `{"p":"411111111111"}`},
		{"20 digits no separators", `{"p":"41111111111111111111"}`, `{"p":"41111111111111111111"}`},
		{"PAN then more groups", `{"p":"4111 1111 1111 1111 1234"}`, `{"p":"4111 11** **** 1111 1234"}`},
		{"double separator", `{"p":"4111  1111  1111  1111"}`, `{"p":"4111  11**  ****  1111"}`},
		{"dots and underscores", `{"p":"4111.1111.1111.1111","q":"4111_1111_1111_1111"}`, `{"p":"4111.11**.****.1111","q":"4111_11**_****_1111"}`},
		{"literal asterisk after a PAN", `{"p":"4111111111111111* x"}`, `{"p":"411111******1111* x"}`},
		{"already masked stays", `{"p":"4111 11** **** 1111 0000000000"}`, `{"p":"4111 11** **** 1111 0000000000"}`},
		{"three separators break", `{"p":"4111   1111 1111 1111"}`, `{"p":"4111   1111 1111 1111"}`},
		{"number under a card-number key", `{"card_number":4111111111111111,"cardNo":5500005555555559,"card":4111111111111111}`, `{"card_number":"411111******1111","cardNo":"550000******5559","card":"411111******1111"}`},
		{"number elsewhere kept (ids, ms timestamps)", `{"created_ms":4111111111111111,"ref":5500005555555559}`, `{"created_ms":4111111111111111,"ref":5500005555555559}`},
		{"top-level id never masked", `{"id":4111111111111111,"x":{"id":"4111111111111111"}}`, `{"id":4111111111111111,"x":{"id":"411111******1111"}}`},
		{"top-level string id kept", `{"id":"4111111111111111","pan":"4111111111111111"}`, `{"id":"4111111111111111","pan":"411111******1111"}`},
		{"keys named like secrets", `{"card_cvv":"1","cvvCode":"2","pin_code":"3","security-code":"4","securityCode":"5","cardPIN":"6","CVC2":"7","shipping":"s","pinned":true,"spin":1}`, `{"shipping":"s","pinned":true,"spin":1}`},
		{"number PAN", `{"pan":4111111111111111,"n":12}`, `{"pan":"411111******1111","n":12}`},
		{"number not luhn", `{"n":4111111111111112}`, `{"n":4111111111111112}`},
		{"decimal number kept", `{"n":98765.40,"e":1.5e2,"big":12345678901234567890}`, `{"n":98765.40,"e":1.5e2,"big":12345678901234567890}`},
		{"nested and arrays", `{"a":[{"b":{"c":"4111111111111111"}},"5500005555555559"]}`, `{"a":[{"b":{"c":"411111******1111"}},"550000******5559"]}`},
		{"drop fields any depth, any case", `{"CVV":"123","x":{"pin":"1234","Security_Code":7,"keep":1},"cvc2":null,"y":[{"cvv2":{"deep":1},"securitycode":"1"}]}`, `{"x":{"keep":1},"y":[{}]}`},
		{"drop first and last key", `{"cvv":"1","a":1,"cvc":"2"}`, `{"a":1}`},
		{"key order and escapes kept", `{ "z" : "caf\u00e9 \"q\"", "a" : [ true , false , null ] }`, `{"z":"caf\u00e9 \"q\"","a":[true,false,null]}`},
		{"escaped PAN string re-encoded", `{"p":"<4111111111111111>\u00e9"}`, `{"p":"<411111******1111>é"}`},
		{"top-level array", `["4111111111111111"]`, `["411111******1111"]`},
		{"key containing digits is not masked", `{"4111111111111111":1}`, `{"4111111111111111":1}`},
	}
	r := newRedactor(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := r.Redact([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Redact(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestRedactExtraFieldsAndFields(t *testing.T) {
	r := newRedactor([]string{" Account_Number ", ""})
	got, fields, err := r.Redact([]byte(`{"id":1,"account_number":"x","cvv":"1","meta":{"a":1},"tags":[],"ok":true,"n":null,"s":"v"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":1,"meta":{"a":1},"tags":[],"ok":true,"n":null,"s":"v"}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	var parts []string
	for _, f := range fields {
		parts = append(parts, f.name+":"+f.typ)
	}
	if got, want := strings.Join(parts, ","), "id:number,meta:object,tags:array,ok:boolean,n:null,s:string"; got != want {
		t.Errorf("fields = %s, want %s", got, want)
	}
	if _, _, err := r.Redact([]byte(`{"a":`)); err == nil {
		t.Error("invalid JSON accepted")
	}
	deep := strings.Repeat("[", 300) + strings.Repeat("]", 300)
	if _, _, err := r.Redact([]byte(deep)); err == nil {
		t.Error("300-deep JSON accepted")
	}
}

// TestRedactionStored checks nothing unmasked reaches any stored copy.
func TestRedactionStored(t *testing.T) {
	w, path, _ := openTest(t, Options{RedactFields: []string{"ssn"}})
	ctx := t.Context()
	run := startRun(t, w)
	p := page(1, nil, 1, 1)
	p.Cards = []Card{{ID: "1", Data: []byte(`{"id":1,"number":"4111 1111 1111 1111","cvv":"123","ssn":"078-05-1120","pin":"0000"}`)}}
	commit(t, w, run, p)
	if err := w.SaveAccount(ctx, run, Account{Raw: []byte(`{"card":5500005555555559,"security_code":"999"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.FinishWalk(ctx, run, StreamCards, true); err != nil {
		t.Fatal(err)
	}
	w.Close()
	for _, suffix := range []string{"", "-wal"} {
		b := readFile(t, path+suffix)
		for _, secret := range []string{"4111 1111 1111 1111", "5500005555555559", `"123"`, "078-05-1120", `"999"`, `"0000"`} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s holds %s", path+suffix, secret)
			}
		}
	}
	r, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := queryString(t, r, "SELECT data FROM card_versions"); got != `{"id":1,"number":"4111 11** **** 1111"}` {
		t.Errorf("version data = %s", got)
	}
	if got := queryString(t, r, "SELECT raw FROM account_snapshots"); got != `{"card":"550000******5559"}` {
		t.Errorf("account raw = %s", got)
	}
}

func FuzzRedact(f *testing.F) {
	f.Add([]byte(`{"a":"4111 1111 1111 1111","cvv":1,"b":[1.5e3,{"pin":null}]}`))
	r := newRedactor(nil)
	f.Fuzz(func(t *testing.T, in []byte) {
		out, _, err := r.Redact(in)
		if err != nil {
			return
		}
		again, _, err := r.Redact(out)
		if err != nil {
			t.Fatalf("redacted output is not valid JSON: %s: %v", out, err)
		}
		if string(again) != string(out) {
			t.Fatalf("redaction not idempotent: %s -> %s", out, again)
		}
	})
}
