// Package extract is the only package that speaks HTTP to the Card Payment
// Service: authentication, pacing, retries, pagination and exact decoding of
// amounts. It never opens the warehouse and never imports package load.
//
// It runs on one clock (Config.Clock): token detection and refresh ahead of
// expiry and once on a 401, pacing by token buckets (accounts of one
// rate_group share a Pacer), retries with backoff and Retry-After within
// max_wait, pages as an iterator (refetching a page that looks wrong, its
// anomaly carried on the page), exact decoding of the envelope and amounts,
// the origin rules (which base URLs and links are followed) and scrubbing
// upstream text before it is logged or stored.
package extract
