package config

import (
	"cmp"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// key declares one configuration key, once (keytable.go): its name, the
// File field that holds it (and so its TOML type), its default, its flag,
// what a SIGHUP does with a change and its words. Everything else follows
// from the declaration: the defaults (Default), the CARDSYNC_* variable
// (EnvName), the setters of variables and flags, the paths resolved
// against the file's directory, the reload rules (Changes) and its row of
// docs/configuration.md (Reference). A test checks that File's TOML keys
// are exactly the declared ones.
type key struct {
	// name is the dotted key: "warehouse.commit_delay"; an [[accounts]]
	// key is "accounts.KEY".
	name string
	// field is the File field holding the key's value: a *string, *int,
	// *int64, *bool, *float64 or *[]string. An [[accounts]] key has
	// account instead, the Account field, and no variable.
	field   func(f *File) any
	account func(a *Account) any
	// def is the default, spelled as a variable would spell it ("": the
	// type's zero value).
	def string
	// form narrows the TOML type in the docs: "Go duration", "path", ...
	// ("" none). A "path" set in the file resolves against its directory.
	form string
	// flag is the command-line flag that overrides the key ("" none): "-db"
	// for every command that reads the configuration, "`backup -to`" for
	// one command's.
	flag string
	// unset: the default is the key left out, which no TOML value says (a
	// variable setting the key to "" sets it to an empty list).
	unset bool
	// reload is what a SIGHUP to serve does with a change of the key.
	reload reload
	// doc says what the key does and what values it takes, in the words
	// of the package that checks it.
	doc string
}

// table is one table of the file, its keys in the file's order.
type table struct {
	name string
	// array: an array of tables ([[accounts]]).
	array bool
	// doc says what the table is for, in the words of config.example.toml.
	doc  string
	keys []key
}

// reloadKind is what a SIGHUP does with a changed value.
type reloadKind int

const (
	// reloaded: the next run uses the new value.
	reloaded reloadKind = iota
	// needsRestart: the change is named in a warning and left as it was.
	needsRestart
	// startOnly: only start-up reads the key; a reload changes nothing.
	startOnly
)

// reload is a key's reload rule: its kind, the name a reload lists a
// change under (group; "" the key's own) and whether the key's value
// differs between two settings.
type reload struct {
	kind    reloadKind
	group   string
	differs func(old, s Settings) bool
}

// onReload is the rule of a key a SIGHUP applies.
func onReload(differs func(old, s Settings) bool) reload {
	return reload{kind: reloaded, differs: differs}
}

// onRestart is the rule of a key a SIGHUP cannot apply.
func onRestart(differs func(old, s Settings) bool) reload {
	return reload{kind: needsRestart, differs: differs}
}

// atStart is the rule of a key only start-up reads.
func atStart() reload { return reload{kind: startOnly} }

// in lists a change of the key under group, with the other keys of group.
func (r reload) in(group string) reload {
	r.group = group
	return r
}

// listed is the name a reload lists a change of k under.
func (k key) listed() string { return cmp.Or(k.reload.group, k.name) }

// allKeys lists every declared key, table by table in the file's order.
func allKeys() []key {
	var out []key
	for _, t := range tables() {
		out = append(out, t.keys...)
	}
	return out
}

// keys lists the keys the variables and flags may set (every key but the
// [[accounts]] ones), in the file's order.
func keys() []key {
	return slices.DeleteFunc(allKeys(), func(k key) bool { return k.field == nil })
}

// Keys returns every dotted key a CARDSYNC_* variable sets, in the file's
// order.
func Keys() []string {
	var out []string
	for _, k := range keys() {
		out = append(out, k.name)
	}
	return out
}

// keyByName finds the key a variable or flag sets.
func keyByName(name string) (key, bool) {
	for _, k := range keys() {
		if k.name == name {
			return k, true
		}
	}
	return key{}, false
}

// ptr is the field of k in f, or in a for an [[accounts]] key.
func (k key) ptr(f *File, a *Account) any {
	if k.account != nil {
		return k.account(a)
	}
	return k.field(f)
}

// typ is the Go type of k's value.
func (k key) typ() reflect.Type {
	return reflect.TypeOf(k.ptr(&File{}, &Account{})).Elem()
}

// set sets k in f from text, as a variable or a flag spells it: a list
// comma-separated, a number or boolean as Go parses it; the error says
// what a value must be.
func (k key) set(f *File, v string) error {
	switch p := k.field(f).(type) {
	case *string:
		*p = v
	case *int:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return errors.New("want an integer")
		}
		*p = int(n)
	case *int64:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return errors.New("want an integer")
		}
		*p = n
	case *bool:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return errors.New("want true or false")
		}
		*p = b
	case *float64:
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return errors.New("want a number")
		}
		*p = x
	case *[]string:
		// A key whose default is unset, set by a variable, names at
		// least one value: an empty one is an error of its check, never
		// the default.
		*p = nil
		if k.unset {
			*p = []string{}
		}
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				*p = append(*p, s)
			}
		}
	default:
		return errors.New("no variable sets this key")
	}
	return nil
}

// Default returns the configuration used where nothing overrides it: every
// key's declared default. The values come from the packages that own them.
func Default() File {
	var f File
	for _, k := range keys() {
		if k.def != "" {
			_ = k.set(&f, k.def) // a test checks every default parses
		}
	}
	return f
}

// Defaults of keys no other package owns.
const (
	DefaultWarehousePath      = "/var/lib/cardsync/warehouse.db"
	DefaultPageAuditRetention = "2160h"
	DefaultCron               = "*/15 * * * *"
	DefaultRunTimeout         = "2h"
	DefaultReportSince        = "90d"
)

// Changes lists the key groups a reload from old to s changes ("nothing"
// when none does), in the file's order, and those among them that take
// effect only after a restart: the warehouse's keys, [cluster], [metrics]
// listen, and adding, removing or renaming an account (CheckAccounts
// refuses such a reload).
func (s Settings) Changes(old Settings) (changed, restart []string) {
	for _, k := range allKeys() {
		name := k.listed()
		if k.reload.kind == startOnly || slices.Contains(changed, name) || !k.reload.differs(old, s) {
			continue
		}
		changed = append(changed, name)
		if k.reload.kind == needsRestart {
			restart = append(restart, name)
		}
	}
	if len(changed) == 0 {
		changed = []string{"nothing"}
	}
	return changed, restart
}

// reloadWords says what a SIGHUP to serve does to a change of k.
func reloadWords(k key) string {
	switch k.reload.kind {
	case startOnly:
		return "read at start only"
	case needsRestart:
		return "needs a restart"
	}
	return "reloaded"
}
