package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fileKey is one key of the TOML file, as reflection on File finds it.
type fileKey struct {
	table string // "api", "accounts", ...
	name  string // dotted: "api.base_url", "accounts.name"
	typ   reflect.Type
	def   reflect.Value // the default (Default(); a zero Account)
	array bool          // an array of tables ([[accounts]])
}

// fileKeys lists every key of the file, table by table in File's order:
// the [[accounts]] keys as accounts.KEY.
func fileKeys() []fileKey {
	var out []fileKey
	def := reflect.ValueOf(Default())
	ft := def.Type()
	for i := range ft.NumField() {
		f := ft.Field(i)
		table := tomlName(f)
		v := def.Field(i)
		if f.Type.Kind() == reflect.Slice {
			// [[accounts]]: the keys of one table, their zero values.
			v = reflect.Zero(f.Type.Elem())
		}
		keys := structKeys(table, v)
		for j := range keys {
			keys[j].array = f.Type.Kind() == reflect.Slice
		}
		out = append(out, keys...)
	}
	return out
}

// structKeys lists the keys of the table v, embedded structs flattened.
func structKeys(table string, v reflect.Value) []fileKey {
	var out []fileKey
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Anonymous {
			out = append(out, structKeys(table, v.Field(i))...)
			continue
		}
		out = append(out, fileKey{table: table, name: table + "." + tomlName(f), typ: f.Type, def: v.Field(i)})
	}
	return out
}

func tomlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	return name
}

// sample is a value of k's type other than its default: its TOML text and
// how a variable spells it.
func sample(t *testing.T, k key) (toml, text string, want any) {
	t.Helper()
	switch k.typ().Kind() {
	case reflect.String:
		return `"v"`, "v", "v"
	case reflect.Int:
		return "7", "7", 7
	case reflect.Int64:
		return "7", "7", int64(7)
	case reflect.Bool:
		return "false", "false", false
	case reflect.Float64:
		return "0.5", "0.5", 0.5
	case reflect.Slice:
		return `["x", "y"]`, "x, y", []string{"x", "y"}
	}
	t.Fatalf("%s: no sample of type %s", k.name, k.typ())
	return "", "", nil
}

// TestKeyTable: the table in keytable.go is the one declaration of every
// key: File's TOML keys are exactly the declared ones, in the same order;
// the file, the variables and the flags each set the field the declaration
// names and record their source; every default parses; and
// docs/configuration.md has each key's row with its variable, flag and
// reload rule.
func TestKeyTable(t *testing.T) {
	var declared, shaped []string
	for _, k := range allKeys() {
		declared = append(declared, k.name)
	}
	for _, k := range fileKeys() {
		shaped = append(shaped, k.name)
	}
	if !slices.Equal(declared, shaped) {
		t.Fatalf("declared keys (keytable.go) differ from File's TOML keys:\n declared %q\n in File   %q", declared, shaped)
	}
	var text strings.Builder
	for _, tb := range tables() {
		if tb.array {
			text.WriteString("[[" + tb.name + "]]\n")
		} else {
			text.WriteString("[" + tb.name + "]\n")
		}
		for _, k := range tb.keys {
			if !strings.HasPrefix(k.name, tb.name+".") {
				t.Errorf("%s is declared in table %s", k.name, tb.name)
			}
			toml, _, _ := sample(t, k)
			text.WriteString(strings.TrimPrefix(k.name, tb.name+".") + " = " + toml + "\n")
		}
	}
	path := writeFile(t, "all.toml", text.String(), 0o600)
	fromFile, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref := Reference()
	def := Default()
	for _, k := range allKeys() {
		_, text, want := sample(t, k)
		fromFileWant := want
		if k.form == "path" {
			fromFileWant = filepath.Join(filepath.Dir(path), "v") // relative to the file
		}
		fileKey := k.name
		var acct *Account
		if k.account != nil {
			acct = &fromFile.Accounts[0]
			fileKey = accountKey(0, strings.TrimPrefix(k.name, "accounts."))
		}
		if got := reflect.ValueOf(k.ptr(&fromFile.File, acct)).Elem().Interface(); !reflect.DeepEqual(got, fromFileWant) {
			t.Errorf("%s from the file: field holds %#v, want %#v", k.name, got, fromFileWant)
		}
		if src := fromFile.Source(fileKey); src.Kind != FromFile || src.Line == 0 {
			t.Errorf("%s from the file: source %v", k.name, src)
		}
		if !strings.Contains(ref, referenceRow(k, &def)) {
			t.Errorf("docs/configuration.md has no row for %s", k.name)
		}
		if k.field == nil {
			continue
		}
		if k.def != "" {
			if err := k.set(&File{}, k.def); err != nil {
				t.Errorf("%s: default %q: %v", k.name, k.def, err)
			}
		}
		env := EnvName(k.name)
		fromEnv, err := Load("", []string{env + "=" + text})
		if err != nil {
			t.Fatalf("%s: %v", env, err)
		}
		if got := reflect.ValueOf(k.field(&fromEnv.File)).Elem().Interface(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: field holds %#v, want %#v", env, got, want)
		}
		if src := fromEnv.Source(k.name); src != (Source{Kind: FromEnv, Name: env}) {
			t.Errorf("%s: source %v", env, src)
		}
		if !strings.Contains(ref, "`"+env+"`") {
			t.Errorf("docs/configuration.md does not name %s", env)
		}
		flag, common := strings.CutPrefix(k.flag, "-")
		if !common {
			continue
		}
		fromFlag, err := Load("", nil, Override{Key: k.name, Flag: flag, Value: text})
		if err != nil {
			t.Fatalf("flag -%s: %v", flag, err)
		}
		if got := reflect.ValueOf(k.field(&fromFlag.File)).Elem().Interface(); !reflect.DeepEqual(got, want) {
			t.Errorf("flag -%s: field holds %#v, want %#v", flag, got, want)
		}
		if src := fromFlag.Source(k.name); src.String() != "flag -"+flag {
			t.Errorf("flag -%s: source %v", flag, src)
		}
	}
}

// keyLike matches a string that names a key of the file: "warehouse.path".
var keyLike = regexp.MustCompile(`^(api|accounts|warehouse|cards|schedule|log|metrics|backup|report|cluster)\.[a-z_]+$`)

// TestNoKeyOutsideTable: no code of the package but keytable.go lists keys
// (a composite literal naming two or more: a second table of docs, reload
// rules or variables), and every key the code names is a declared one.
func TestNoKeyOutsideTable(t *testing.T) {
	declared := map[string]bool{}
	for _, k := range allKeys() {
		declared[k.name] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "keytable.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && keyLike.MatchString(s) && !declared[s] {
					t.Errorf("%s: %q is not a declared key (keytable.go)", fset.Position(n.Pos()), s)
				}
			case *ast.CompositeLit:
				if named := keyElems(n, declared); named >= 2 {
					t.Errorf("%s: a literal listing %d keys: declare what it says of them in keytable.go", fset.Position(n.Pos()), named)
				}
			}
			return true
		})
	}
}

// keyElems counts the elements of a composite literal that name a declared
// key: the element itself ("api.email"), its key in a map literal, or a
// field of an element that is a literal itself ({"api", false, ...}).
func keyElems(lit *ast.CompositeLit, declared map[string]bool) int {
	isKey := func(e ast.Expr) bool {
		b, ok := e.(*ast.BasicLit)
		if !ok {
			return false
		}
		s, err := strconv.Unquote(b.Value)
		return err == nil && declared[s]
	}
	n := 0
	for _, e := range lit.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if isKey(kv.Key) {
				n++
				continue
			}
			e = kv.Value
		}
		if isKey(e) {
			n++
			continue
		}
		if inner, ok := e.(*ast.CompositeLit); ok && slices.ContainsFunc(inner.Elts, isKey) {
			n++
		}
	}
	return n
}
