// Package sim is a faithful simulator of the Card Payment Service REST API
// (see the spec in the project README). It is the server side only: it owns
// the fake account, cards, tokens, rate limits and fault injection, and it
// must never import cardsync's client or warehouse packages.
package sim
