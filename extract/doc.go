// Package extract is the only package that speaks HTTP to the Card Payment
// Service: authentication, pacing, retries, pagination and exact decoding of
// amounts. It never opens the warehouse and never imports package load.
package extract
