// Package money holds the exact decimal amount type shared by the client and
// the warehouse: parsing from JSON strings or numbers without float64,
// integer minor units for exact sums, canonical text for display. It must
// not do I/O, and it must never pass an amount through float64.
//
// Rounding is half to even; MinorUnits gives ISO 4217's minor units of a
// currency.
package money
