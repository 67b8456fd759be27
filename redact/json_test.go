package redact

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"strings"
	"testing"
)

// jsonRedactionCase is a document of TestJSONRedaction and its redaction.
type jsonRedactionCase struct {
	name, in, want string
}

func TestJSONRedaction(t *testing.T) {
	tests := jsonRedactionCases()
	p := NewPolicy(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := p.JSON([]byte(tt.in))
			if err != nil {
				t.Fatalf("JSON(%s): %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Errorf("JSON(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			again, _, err := p.JSON(got)
			if err != nil || string(again) != string(got) {
				t.Errorf("JSON(%s) = %s, %v; want it unchanged", got, again, err)
			}
		})
	}
}

// jsonRedactionCases are the documents TestJSONRedaction redacts.
func jsonRedactionCases() []jsonRedactionCase {
	return []jsonRedactionCase{
		{"string", `{"pan":"4111111111111111"}`, `{"pan":"411111******1111"}`},
		{"grouped string", `{"number":"4111 1111 1111 1111"}`, `{"number":"4111 11** **** 1111"}`},
		{"inside text", `{"note":"paid with 5500005555555559 today"}`, `{"note":"paid with 550000******5559 today"}`},
		{"escaped digits", `{"p":"\u0034111111111111111"}`, `{"p":"411111******1111"}`},
		{"escaped no-break spaces", `{"p":"4111\u00a01111\u00a01111\u00a01111"}`, "{\"p\":\"4111\u00a011**\u00a0****\u00a01111\"}"},
		{"escaped slashes", `{"p":"4111\/1111\/1111\/1111"}`, `{"p":"4111/11**/****/1111"}`},
		{"newline separates groups", `{"p":"4111111111\n111111"}`, `{"p":"411111****\n**1111"}`},
		{"tab separates groups", `{"p":"4111\t1111\t1111\t1111"}`, `{"p":"4111\t11**\t****\t1111"}`},
		{"control escape separates groups", `{"p":"411111111\u00011111111"}`, `{"p":"411111***\u0001***1111"}`},
		{"lone surrogate separates groups", `{"p":"4111\ud8001111 1111 1111"}`, `{"p":"4111\ud80011** **** 1111"}`},
		{"escape digits are not card digits", `{"p":"\udc41 1111 1111 1111 11"}`, `{"p":"\udc41 1111 1111 1111 11"}`},
		{"quote and backslash escapes separate groups", `{"p":"4111\"1111\\1111 1111"}`, `{"p":"4111\"11**\\**** 1111"}`},
		{"en dash", `{"p":"4111–1111–1111–1111"}`, "{\"p\":\"4111–11**–****–1111\"}"},
		{"zero-width spaces", `{"p":"4111\u200b1111\u200b1111\u200b1111"}`, "{\"p\":\"4111\u200b11**\u200b****\u200b1111\"}"},
		{"full-width digits", `{"p":"４１１１１１１１１１１１１１１１"}`, "{\"p\":\"４１１１１１******１１１１\"}"},
		{"escaped Arabic-Indic digits", `{"p":"\u0664\u0661\u0661\u0661 \u0661\u0661\u0661\u0661 \u0661\u0661\u0661\u0661 \u0661\u0661\u0661\u0661"}`, "{\"p\":\"٤١١١ ١١** **** ١١١١\"}"},
		{"Arabic-Indic key", "{\"٤١١١١١١١١١١١١١١١\":1}", "{\"٤١١١١١******١١١١\":1}"},
		{"card number next to an escape", `{"p":"\n4111111111111111\t"}`, `{"p":"\n411111******1111\t"}`},
		{"key", `{"4111111111111111":1}`, `{"411111******1111":1}`},
		{"key with text", `{"card 4111 1111 1111 1111":true}`, `{"card 4111 11** **** 1111":true}`},
		{"array element", `["4111111111111111",1,"x"]`, `["411111******1111",1,"x"]`},
		{"nested", `{"a":[{"b":{"c":"4111111111111111"}},"5500005555555559"]}`, `{"a":[{"b":{"c":"411111******1111"}},"550000******5559"]}`},
		{"top-level string", `"4111111111111111"`, `"411111******1111"`},
		{"integer", `{"n":4111111111111111}`, `{"n":"411111******1111"}`},
		{"integer under any key", `{"created_ms":5500005555555559,"ref":4111111111111111}`, `{"created_ms":"550000******5559","ref":"411111******1111"}`},
		{"integer in an array", `[4111111111111111,5500005555555559]`, `["411111******1111","550000******5559"]`},
		{"top-level integer", `4111111111111111`, `"411111******1111"`},
		{"integer not luhn", `{"n":4111111111111112}`, `{"n":4111111111111112}`},
		{"ms timestamp passing luhn", `{"t":1705312800009}`, `{"t":1705312800009}`},
		{"negative integer", `{"n":-4111111111111111}`, `{"n":"-411111******1111"}`},
		{"negative integer in an array", `[-4111111111111111,-378282246310005]`, `["-411111******1111","-378282*****0005"]`},
		{"negative integer nested", `{"a":{"b":[{"c":-378282246310005}]}}`, `{"a":{"b":[{"c":"-378282*****0005"}]}}`},
		{"negative top-level integer", `-4111111111111111`, `"-411111******1111"`},
		{"short exponent form", `{"n":2691e12}`, `{"n":"269100******0000"}`},
		{"short negative exponent form", `[-2691E+12]`, `["-269100******0000"]`},
		{"negative exponent form", `{"n":-4.111111111111111e15}`, `{"n":"-411111******1111"}`},
		{"negative integer not luhn", `{"n":-4111111111111112}`, `{"n":-4111111111111112}`},
		{"negative fraction not zero", `{"n":-4111111111111111.5}`, `{"n":-4111111111111111.5}`},
		{"negative top-level id kept", `{"id":-4111111111111111}`, `{"id":-4111111111111111}`},
		{"zero fraction", `{"n":4111111111111111.0}`, `{"n":"411111******1111"}`},
		{"zero fraction of two digits", `{"n":4111111111111111.00}`, `{"n":"411111******1111"}`},
		{"exponent zero", `{"n":4111111111111111e0}`, `{"n":"411111******1111"}`},
		{"exponent", `{"n":4.111111111111111e15}`, `{"n":"411111******1111"}`},
		{"exponent with sign", `{"n":4.111111111111111E+15}`, `{"n":"411111******1111"}`},
		{"negative exponent", `{"n":41111111111111110e-1}`, `{"n":"411111******1111"}`},
		{"fraction not zero", `{"n":4111111111111111.5}`, `{"n":4111111111111111.5}`},
		{"negative with zero fraction", `{"n":-4111111111111111.0}`, `{"n":"-411111******1111"}`},
		{"exponent past the digits", `{"n":4.111111111111111e14}`, `{"n":4.111111111111111e14}`},
		{"zero fraction not luhn", `{"n":4111111111111112.0}`, `{"n":4111111111111112.0}`},
		{"top-level id with zero fraction", `{"id":4111111111111111.0}`, `{"id":4111111111111111.0}`},
		{"21-digit integer, no explained window", `{"n":411111111111111199999}`, `{"n":411111111111111199999}`}, {"20-digit integer, a card code after", `{"n":41111111111111111113}`, `{"n":"411111******11111113"}`},
		{"20-digit integer, a card number and its expiry", `{"n":41111111111111112512}`, `{"n":"411111******11112512"}`},
		{"top-level id integer", `{"id":4111111111111111}`, `{"id":4111111111111111}`},
		{"top-level id string", `{"id":"4111111111111111"}`, `{"id":"4111111111111111"}`},
		{"top-level id re-encoded", `{"id":"\u0034111111111111111\/x"}`, `{"id":"4111111111111111/x"}`},
		{"top-level id not first", `{"a":1,"id":"4111 1111 1111 1111"}`, `{"a":1,"id":"4111 1111 1111 1111"}`},
		{"top-level id object is data", `{"id":{"pan":"4111111111111111"}}`, `{"id":{"pan":"411111******1111"}}`},
		{"nested id masked", `{"id":1,"x":{"id":"4111111111111111","n":{"id":4111111111111111}}}`, `{"id":1,"x":{"id":"411111******1111","n":{"id":"411111******1111"}}}`},
		{"id in a top-level array masked", `[{"id":4111111111111111}]`, `[{"id":"411111******1111"}]`},
		{"ID is not id", `{"ID":4111111111111111}`, `{"ID":"411111******1111"}`},
		{"secret string dropped", `{"a":1,"cvv":"123","b":2}`, `{"a":1,"b":2}`},
		{"secret number dropped", `{"a":1,"pin":1234}`, `{"a":1}`},
		{"secret negative number dropped", `{"pin":-1,"a":1}`, `{"a":1}`},
		{"secret boolean kept", `{"has_pin":true,"pin":false}`, `{"has_pin":true,"pin":false}`},
		{"secret null kept", `{"cvv":null}`, `{"cvv":null}`},
		{"secret object dropped", `{"pin":{"a":"4111111111111111","cvv":"1"},"b":1}`, `{"b":1}`},
		{"secret object with a value dropped", `{"pin":{"value":"4321"},"b":1}`, `{"b":1}`},
		{"secret array dropped", `{"cvv":["127"],"b":1}`, `{"b":1}`},
		{"secret empty array dropped", `{"a":0,"cvv":[]}`, `{"a":0}`},
		{"secret nested arrays dropped", `{"cvc":[["1"],{"x":[2]}],"b":1}`, `{"b":1}`},
		{"new secret key shapes", `{"cvv_number":"127","cvv_value":128,"card_verification_value":"129","pin_number":"4321","CVV2Code":"130","pin_block":"0412AC","verification_value":"131","card_cid":"1234","cid":"cust_1","keep":0}`, `{"cid":"cust_1","keep":0}`},
		{"secret keys with invisible and full-width characters", "{\"card\u00a0cvv\":\"1\",\"c\u200bvv\":\"2\",\"ｃｖｖ\":\"3\",\"p\\u200bin\":4,\"keep\":0}", `{"keep":0}`},
		{"flags beside secrets kept", `{"cvv":"1","cvv_result":"M","pin_verified":["yes"],"cvc_check":{"status":"pass"},"has_pin":true,"pin":null}`, `{"cvc_check":{"status":"pass"},"cvv_result":"M","has_pin":true,"pin":null,"pin_verified":["yes"]}`},
		{"drop first", `{"cvv":"1","a":1,"b":2}`, `{"a":1,"b":2}`},
		{"drop last", `{"a":1,"b":2,"cvc":"1"}`, `{"a":1,"b":2}`},
		{"drop all", `{"cvv":"1","cvc":"2","pin":"3"}`, `{}`},
		{"drop consecutive in the middle", `{"a":1,"cvv":"1","cvc":"2","b":2}`, `{"a":1,"b":2}`},
		{"drop at any depth", `{"x":{"y":[{"card_cvv":"1","k":1}]}}`, `{"x":{"y":[{"k":1}]}}`},
		{"drop with whitespace", "{ \"cvv\" : \"1\" , \"a\" : 1 }", `{"a":1}`},
		{"escaped secret key", `{"c\u0076v":"1","a":1}`, `{"a":1}`},
		{"keys like secrets kept", `{"cvc_check":"pass","pin_verified":"yes","spin_count":3,"pinned":true,"cvc_status":"ok","pin_attempts":2}`, `{"cvc_check":"pass","cvc_status":"ok","pin_attempts":2,"pin_verified":"yes","pinned":true,"spin_count":3}`},
		{"all secret key shapes", `{"card_cvv":"1","cvvCode":"2","pin_code":"3","security-code":"4","securityCode":"5","cardPIN":"6","CVC2":"7","PINCode":8,"cvn":"9","keep":0}`, `{"keep":0}`},
		{"masked stays", `{"p":"411111******1111","q":"4111 11** **** 1111"}`, `{"p":"411111******1111","q":"4111 11** **** 1111"}`},
	}
}

func TestJSONExtraKeys(t *testing.T) {
	p := NewPolicy([]string{"SSN", " account_number "})
	tests := []struct {
		name, in, want string
	}{
		{"string", `{"ssn":"078-05-1120","a":1}`, `{"a":1}`},
		{"any case", `{"SSN":"x","Ssn":1,"a":1}`, `{"a":1}`},
		{"object", `{"ssn":{"a":1},"a":1}`, `{"a":1}`},
		{"array", `{"a":1,"ssn":[1,{"b":[2]}]}`, `{"a":1}`},
		{"boolean and null", `{"ssn":true,"account_number":null}`, `{}`},
		{"nested", `{"x":[{"account_number":"1","y":2}]}`, `{"x":[{"y":2}]}`},
		{"exact only", `{"holder_ssn":"1","ssn_last4":"2"}`, `{"holder_ssn":"1","ssn_last4":"2"}`},
		{"drop inside dropped", `{"ssn":{"ssn":1,"cvv":"2"},"a":1}`, `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := p.JSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("JSON(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestJSONCanonical(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"whitespace removed", " {\n\t\"a\" : [ 1 , 2 ] ,\r\n \"b\" : { } , \"c\" : [ ] } ", `{"a":[1,2],"b":{},"c":[]}`},
		{"PHP escaped slash", `{"url":"https:\/\/example.com\/a"}`, `{"url":"https://example.com/a"}`},
		{"PHP escaped non-ASCII", `{"caf\u00e9":"na\u00EFve \u20ac"}`, `{"café":"naïve €"}`},
		{"raw non-ASCII kept", `{"café":"naïve €"}`, `{"café":"naïve €"}`},
		{"surrogate pair", `["\ud83d\ude00","\uD83D\uDE00"]`, `["😀","😀"]`},
		{"lone high surrogate", `["\ud800","\uD800x","\ud800\ud800"]`, `["\ud800","\ud800x","\ud800\ud800"]`},
		{"lone low surrogate", `["\udc00","\uDFFF"]`, `["\udc00","\udfff"]`},
		{"high surrogate then pair", `"\ud800\ud83d\ude00"`, `"\ud800😀"`},
		{"high then non-surrogate escape", `"\ud800\u0041"`, `"\ud800A"`},
		{"short escapes kept", `"\b\f\n\r\t"`, `"\b\f\n\r\t"`},
		{"short escapes from \\u", `"\u0008\u000c\u000A\u000d\u0009"`, `"\b\f\n\r\t"`},
		{"other controls lower-case hex", `"\u0000\u001F\u001b"`, `"\u0000\u001f\u001b"`},
		{"DEL unescaped", `"\u007f"`, "\"\x7f\""},
		{"quote and backslash", `"\"\\\u0022\u005c"`, `"\"\\\"\\"`},
		{"U+2028 unescaped", `"\u2028"`, "\"\u2028\""},
		{"decimal kept", `[1.50,0.0,100]`, `[1.50,0.0,100]`},
		{"exponents kept", `[1e3,1E3,1e+3,1.5e-3,0e0]`, `[1e3,1E3,1e+3,1.5e-3,0e0]`},
		{"negative zero kept", `[-0,-0.0]`, `[-0,-0.0]`},
		{"big integer kept", `12345678901234567890123`, `12345678901234567890123`},
		{"literals", `[true,false,null]`, `[true,false,null]`},
		{"last duplicate key wins", `{"a":1,"a":2,"b":3,"a":4}`, `{"a":4,"b":3}`},
		{"members sorted", `{"b":1,"a":2,"c":{"z":1,"y":[{"q":1,"p":2}]}}`, `{"a":2,"b":1,"c":{"y":[{"p":2,"q":1}],"z":1}}`},
		{"sorted bytewise", `{"b":1,"B":2,"é":3,"a":4,"aa":5,"":6}`, `{"":6,"B":2,"a":4,"aa":5,"b":1,"é":3}`},
		{"sorted on canonical text", `{"caf\u00e9":1,"a\u0000":2,"a\"":3,"a":4}`, `{"a":4,"a\"":3,"a\u0000":2,"café":1}`},
		{"escaped and raw duplicates", `{"caf\u00e9":1,"café":2}`, `{"café":2}`},
		{"duplicates at depth", `{"x":{"k":1,"k":{"k":2,"k":3}},"x":{"k":[{"a":1,"a":2}],"j":0}}`, `{"x":{"j":0,"k":[{"a":2}]}}`},
		{"last duplicate wins whatever its type", `{"a":{"b":1},"a":null}`, `{"a":null}`},
		{"empty key", `{"":1}`, `{"":1}`},
		{"NUL in key", `{"a\u0000b":1}`, `{"a\u0000b":1}`},
		{"empty string", `""`, `""`},
		{"top-level number", ` 42 `, `42`},
		{"deep", strings.Repeat("[", 50) + strings.Repeat("]", 50), strings.Repeat("[", 50) + strings.Repeat("]", 50)},
	}
	p := NewPolicy(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := p.JSON([]byte(tt.in))
			if err != nil {
				t.Fatalf("JSON(%s): %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Errorf("JSON(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			again, _, err := p.JSON(got)
			if err != nil || string(again) != string(got) {
				t.Errorf("JSON(%s) = %s, %v; want it unchanged", got, again, err)
			}
		})
	}
}

func TestJSONFields(t *testing.T) {
	p := NewPolicy([]string{"ssn"})
	tests := []struct {
		name, in, want string
	}{
		{"types", `{"id":1,"s":"v","n":1.5,"t":true,"f":false,"z":null,"o":{"a":1},"a":[1]}`,
			"a:array f:boolean id:number n:number o:object s:string t:boolean z:null"},
		{"masked integer is a string", `{"id":4111111111111111,"n":4111111111111111}`, "id:number n:string"},
		{"dropped keys not listed", `{"cvv":"1","a":1,"ssn":{},"pin":2,"b":null,"has_pin":false}`, "a:number b:null has_pin:boolean"},
		{"canonical and masked names", `{"caf\u00e9":1,"4111111111111111":2,"a\u0000b":3,"q\"":4}`, "411111******1111:number a\x00b:number café:number q\":number"},
		{"lone surrogate name", `{"\ud800":1}`, "\ufffd:number"},
		{"duplicates: the last", `{"a":1,"b":2,"a":"x"}`, "a:string b:number"},
		{"duplicates once masked", `{"4111111111111111":1,"4111111111111111":"x"}`, "411111******1111:string"},
		{"nested keys not listed", `{"a":{"b":{"c":1}}}`, "a:object"},
		{"empty object", `{}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, fields, err := p.JSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, f := range fields {
				parts = append(parts, f.Name+":"+f.Type)
			}
			if got := strings.Join(parts, " "); got != tt.want {
				t.Errorf("fields of %s = %q, want %q", tt.in, got, tt.want)
			}
			if fields == nil {
				t.Errorf("fields of %s = nil, want a (maybe empty) list", tt.in)
			}
		})
	}
	for _, in := range []string{`[{"a":1}]`, `"x"`, `1`, `null`} {
		t.Run("not an object "+in, func(t *testing.T) {
			if _, fields, err := p.JSON([]byte(in)); err != nil || fields != nil {
				t.Errorf("JSON(%s) fields = %v, %v; want nil, nil", in, fields, err)
			}
		})
	}
}

func TestJSONErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"empty", ``, ErrInvalidJSON},
		{"only space", `  `, ErrInvalidJSON},
		{"truncated object", `{"a":1`, ErrInvalidJSON},
		{"truncated key", `{"a`, ErrInvalidJSON},
		{"truncated after colon", `{"a":`, ErrInvalidJSON},
		{"truncated string", `"abc`, ErrInvalidJSON},
		{"truncated escape", `"abc\`, ErrInvalidJSON},
		{"truncated unicode escape", `"\u12"`, ErrInvalidJSON},
		{"truncated literal", `tru`, ErrInvalidJSON},
		{"trailing garbage", `{"a":1}x`, ErrInvalidJSON},
		{"two values", `1 2`, ErrInvalidJSON},
		{"single quotes", `{'a':1}`, ErrInvalidJSON},
		{"single-quoted string", `['a']`, ErrInvalidJSON},
		{"NaN", `{"a":NaN}`, ErrInvalidJSON},
		{"Infinity", `[Infinity]`, ErrInvalidJSON},
		{"leading zero", `[01]`, ErrInvalidJSON},
		{"plus sign", `[+1]`, ErrInvalidJSON},
		{"bare fraction", `[.5]`, ErrInvalidJSON},
		{"dot without digits", `[1.]`, ErrInvalidJSON},
		{"exponent without digits", `[1e]`, ErrInvalidJSON},
		{"minus alone", `[-]`, ErrInvalidJSON},
		{"hex", `[0x10]`, ErrInvalidJSON},
		{"trailing comma in array", `[1,]`, ErrInvalidJSON},
		{"trailing comma in object", `{"a":1,}`, ErrInvalidJSON},
		{"leading comma", `[,1]`, ErrInvalidJSON},
		{"missing colon", `{"a" 1}`, ErrInvalidJSON},
		{"missing comma", `[1 2]`, ErrInvalidJSON},
		{"unquoted key", `{a:1}`, ErrInvalidJSON},
		{"number key", `{1:1}`, ErrInvalidJSON},
		{"mismatched brackets", `[1}`, ErrInvalidJSON},
		{"unclosed", `[[1]`, ErrInvalidJSON},
		{"extra close", `[1]]`, ErrInvalidJSON},
		{"raw newline in string", "\"a\nb\"", ErrInvalidJSON},
		{"raw tab in string", "\"a\tb\"", ErrInvalidJSON},
		{"bad escape", `"\x41"`, ErrInvalidJSON},
		{"bad unicode escape", `"\uZZZZ"`, ErrInvalidJSON},
		{"comment", `[1 /* x */]`, ErrInvalidJSON},
		{"byte order mark", "\ufeff{}", ErrInvalidJSON},
		{"non-ASCII outside strings", "[1,é]", ErrInvalidJSON},
		{"invalid UTF-8 in a string", "\"a\xffb\"", ErrInvalidUTF8},
		{"invalid UTF-8 in a key", "{\"a\xc3\":1}", ErrInvalidUTF8},
		{"truncated UTF-8", "\"\xe2\x82\"", ErrInvalidUTF8},
		{"overlong UTF-8", "\"\xc0\xaf\"", ErrInvalidUTF8},
		{"UTF-8 encoded surrogate", "\"\xed\xa0\x80\"", ErrInvalidUTF8},
		{"too deep", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), ErrTooDeep},
		{"too deep objects", strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1), ErrTooDeep},
		{"too deep and unclosed", strings.Repeat("[", 100000), ErrTooDeep},
	}
	p := NewPolicy(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, fields, err := p.JSON([]byte(tt.in))
			if !errors.Is(err, tt.want) {
				t.Fatalf("JSON(%q) error = %v, want %v", tt.in, err, tt.want)
			}
			if out != nil || fields != nil {
				t.Errorf("JSON(%q) = %q, %v with an error, want nil, nil", tt.in, out, fields)
			}
		})
	}
}

// TestJSONErrorsNameNoContent checks an error never quotes the document,
// which may hold a card number or a security code.
func TestJSONErrorsNameNoContent(t *testing.T) {
	p := NewPolicy(nil)
	for _, in := range []string{
		`{"cvv":"123","pan":"4111111111111111"`,
		`{"pan":"4111111111111111","x":4111111111111111 }x`,
		"{\"pan\":\"4111111111111111\xff\"}",
		`{"pan":"4111111111111111\q"}`,
		`{"secret-value":`,
	} {
		_, _, err := p.JSON([]byte(in))
		if err == nil {
			t.Fatalf("JSON(%q) succeeded", in)
		}
		for _, secret := range []string{"4111", "123", "secret", "pan", "cvv"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("JSON(%q) error %q quotes %q", in, err, secret)
			}
		}
	}
}

func TestJSONDepth(t *testing.T) {
	p := NewPolicy(nil)
	tests := []struct {
		name  string
		depth int
		wrap  func(int) string
		want  error
	}{
		{"arrays at MaxDepth", MaxDepth, func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }, nil},
		{"arrays at MaxDepth+1", MaxDepth + 1, func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }, ErrTooDeep},
		{"objects at MaxDepth", MaxDepth, func(n int) string { return strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1) }, nil},
		{"objects at MaxDepth+1", MaxDepth + 1, func(n int) string { return strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1) }, ErrTooDeep},
		{"scalar inside MaxDepth arrays", MaxDepth, func(n int) string { return strings.Repeat("[", n) + `"4111111111111111"` + strings.Repeat("]", n) }, nil},
		{"one array", 1, func(int) string { return "[1]" }, nil},
		{"scalar", 0, func(int) string { return "1" }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.wrap(tt.depth)
			out, _, err := p.JSON([]byte(in))
			if !errors.Is(err, tt.want) {
				t.Fatalf("JSON at depth %d: error %v, want %v", tt.depth, err, tt.want)
			}
			if err == nil && strings.Contains(string(out), "4111111111111111") {
				t.Errorf("JSON at depth %d left the card number", tt.depth)
			}
		})
	}
}

func TestJSONConcurrent(t *testing.T) {
	p := NewPolicy([]string{"ssn"})
	docs := []string{
		`{"id":1,"pan":"4111111111111111","cvv":"1"}`,
		`[` + strings.Repeat(`{"a":"5500005555555559"},`, 50) + `1]`,
		`{"ssn":{"deep":[1,2,3]},"caf\u00e9":"\ud83d\ude00"}`,
	}
	want := make([]string, len(docs))
	for k, d := range docs {
		out, _, err := p.JSON([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		want[k] = string(out)
	}
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func() {
			var err error
			for n := 0; n < 200 && err == nil; n++ {
				k := (g + n) % len(docs)
				out, _, e := p.JSON([]byte(docs[k]))
				if e != nil || string(out) != want[k] {
					err = errors.New("concurrent result differs: " + string(out))
				}
			}
			done <- err
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func TestJSONAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	p := NewPolicy(nil)
	doc := []byte(benchCard)
	p.JSON(doc) // fill the pool
	if n := testing.AllocsPerRun(100, func() { p.JSON(doc) }); n > 3 {
		t.Errorf("JSON of a card allocates %v times, want at most 3 (output, fields, names)", n)
	}
}

// TestSWAR checks the eight-byte tests against a byte at a time.
func TestSWAR(t *testing.T) {
	var seed uint64 = 1
	check := func(b [8]byte) {
		x := binary.LittleEndian.Uint64(b[:])
		first, digits := 8, 0
		for k, c := range b {
			if first == 8 && (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) {
				first = k
			}
			if isDigit(c) {
				digits++
			}
		}
		m := special8(x)
		if got := bits.TrailingZeros64(m) >> 3; m != 0 && got != first || m == 0 && first != 8 {
			t.Fatalf("special8(%q) finds byte %d, want %d", b, got, first)
		}
		if first == 8 && digits8(x) != digits {
			t.Fatalf("digits8(%q) = %d, want %d", b, digits8(x), digits)
		}
	}
	// Every byte value at every position, among ordinary and random bytes.
	for pos := 0; pos < 8; pos++ {
		for v := 0; v < 256; v++ {
			b := [8]byte{'a', '0', ' ', '9', '~', '/', ':', 'Z'}
			b[pos] = byte(v)
			check(b)
		}
	}
	for n := 0; n < 200000; n++ {
		var b [8]byte
		for k := range b {
			seed = seed*6364136223846793005 + 1442695040888963407
			b[k] = byte(seed >> 56)
			if seed&(1<<20) != 0 {
				b[k] &= 0x7f
			}
		}
		check(b)
	}
}
