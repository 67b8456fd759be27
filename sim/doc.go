// Package sim is a faithful simulator of the Card Payment Service REST API,
// as docs/upstream-api.md in this repository describes it (with the Laravel,
// Dingo and Fractal behaviour the real server most likely has). It is the
// server side only: it owns the fake account, cards, tokens, rate limits,
// fault injection, odd data and statistics, and it must never import
// cardsync's client or warehouse packages. Tests, benchmarks, the demo and
// `cardsync sim` use it.
//
// # Behaviour
//
// A *Server from New is an http.Handler serving:
//
//   - POST /auth/access-token with a JSON or form body (email, password):
//     400 {"message":"Problems parsing JSON"} for malformed JSON, 400 with an
//     error object for values of the wrong type, 422 in Laravel's shape for
//     missing or blank fields, 401 {"message":"Unauthenticated.","status_code":401}
//     for wrong credentials, otherwise a JWT-shaped bearer token in the
//     configured TokenShape and status (200 or 201), valid for TokenTTL.
//   - GET /account: {"data":{...}} with exactly the spec's 11 fields.
//   - GET /cards?page=N: PageSize (15) cards whatever per_page says, with
//     meta.pagination {total,count,per_page,current_page,total_pages,links}.
//     links.next is the absolute URL of the same path and query with page=N+1
//     and is absent on the last page; total_pages is at least 1; a page past
//     the end has empty data; a non-integer or non-positive page gets 422.
//
// Every other path answers 404 and a wrong method 405 (with Allow), both as
// JSON. Except for the token endpoint, a valid "Authorization: Bearer"
// token is needed, else 401. Requests pass the rate limiter first (the token
// endpoint has its own AuthLimit), then authentication; excess requests get
// 429 {"message":"You have exceeded your rate limit.","status_code":429}
// with Retry-After in whole seconds (rounded up, at least 1).
//
// Card data is deterministic from Options.Seed: card i is the same whatever
// the card count. The Go API (AddCard, RemoveCard, UpdateCard, SetAccount,
// OnPageServed, RevokeTokens) changes the data between requests, and Cards,
// Account and Stats read the truth back. The clock (Options.Now) drives
// token expiry and rate-limit windows, so tests need no sleeps.
//
// # Faults
//
// InjectFault (or Options.Faults, or the repeatable -fault flag) adds a
// fault. Its text form, parsed by ParseFault, is
//
//	[ENDPOINT:]KIND[=ARG][,KEY=VALUE...]
//
// ENDPOINT is token, account, cards or all (the default). KIND[=ARG] is one of
//
//	status=CODE        JSON error reply with this status (default 503)
//	html[=CODE]        nginx-style text/html error page (default 502)
//	reset              TCP reset instead of a reply
//	truncate           full Content-Length, half the body, then close
//	latency=DUR        wait before handling (ends if the client goes away)
//	trickle[=DUR]      body in chunk-byte pieces with DUR between (default 64 B, 50ms)
//	ratelimit          429 storm, whatever the limiter says
//	revoke             revoke all tokens, then handle (so the request gets 401)
//	foreign=URL        links.next on another origin (URL without a path keeps the request's path)
//	loop[=PAGE]        links.next points back at PAGE (default 1)
//	links-array        links rendered as [] when there is no link (Fractal < 0.18)
//	total[=DELTA]      total changed by DELTA (default 7), total_pages recomputed
//	oversize[=BYTES]   valid JSON padded with a "padding" string (default 8 MiB)
//	links-shapes       links in turn as {"next":N}, {"next":{"href":URL}}, "URL", true, ["URL"]
//	bom                a UTF-8 byte order mark before the body
//	content-type       the JSON body as text/plain, then without a Content-Type, in turn
//	deep-meta[=DEPTH]  meta.debug, an array nested DEPTH levels (default 100,000)
//	no-content         204 No Content, no body
//	redirect[=URL]     302 Found to URL (default /login on the same origin)
//	empty-page[=PAGE]  a page with no items, totals unchanged (default page 2)
//	shrinking-total[=N] total_pages less by N (default 1) from page 2 on, same items
//	repeated-page[=PAGE] page 1's items on the page (default every page)
//	phantom-pages[=N]  total_pages reported as N (default 2000), total and items unchanged
//	float-pagination   every number of meta.pagination as a PHP float (2.0)
//	fractional-pages   total_pages as total / per_page without ceil() (2.533333333333333)
//	shuffle-members    every card's members in another order (same meaning)
//	secrets-in-data    the password and the request's token inside cards and the account
//
// and the KEYs are
//
//	times=N            affect N requests, then stop (default every matching one)
//	skip=N             let the first N matching requests through
//	percent=P          affect P% of matching requests, chosen by the seeded generator
//	pages=LIST         /cards pages only, e.g. pages=2-4,7 or pages=2-4;7
//	retry_after=DUR    Retry-After on status, html and ratelimit replies (DUR or seconds)
//	latency=DUR, chunk=BYTES, url=URL, to=PAGE, delta=N, bytes=N, status=CODE, depth=N, shrink=N, claim=N
//
// The walk faults (empty-page, shrinking-total, repeated-page,
// phantom-pages, float-pagination, fractional-pages) act once
// with times=1, so that a refetch of the page gets the right answer, and
// on every request by default.
//
// For example "cards:status=503,retry_after=2s,times=3,pages=2-4" answers
// 503 with Retry-After: 2 to the first three requests for pages 2 to 4.
//
// # Odd data
//
// Real servers send data a strict client would choke on. Options.OddData
// (-odd-data) mixes a fixed set of such items into the card list, spread
// through it and counted in the pagination like any item: valid but unusual
// ids (Unicode with PHP escapes, base64, a UUID, 200 characters, a 25-digit
// integer, a negative integer), ids no client can use (300 bytes, a control
// character, null, missing, 12.5, true, an object, ""), items that are not
// objects ("oops", 42), odd field names ("a\u0000b", "", "Status" next to
// "status", quotes and backslashes, 300 characters, SQL keywords, PHP
// escapes), nesting 300 and 1,100 levels deep, card numbers in odd forms
// (no-break spaces, slashes, a JSON integer under an ordinary key, an object
// key, inside text) next to secret fields and flags, and look-alikes (a
// millisecond timestamp that passes Luhn, an IBAN, a phone number, a
// snowflake id, a large amount). Card.Odd names each item.
// Options.FloatNoise (-float-noise) serves the account's number amounts with
// PHP float noise (1234.5600000000002), and Options.AccountDrift
// (-account-drift) moves balance and cards_balance on every account read
// after the first.
package sim
