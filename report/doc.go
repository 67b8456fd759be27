// Package report renders what the warehouse holds as one self-contained
// HTML file for people who look rather than query: account balances over
// time, cards by status, card changes, run health, and tables of the
// latest balances, card balances by currency, the last runs, the cards that changed (fields before
// and after) and the rejected items.
//
// It owns the page: the data it shows comes from a load.Reporter, the
// SQLite or the PostgreSQL warehouse's ReportData (the load packages own
// every query; this package holds no SQL, does not import load/postgres
// and never opens or writes the warehouse itself), and Write puts the file
// in place atomically so `serve` can refresh it after each run.
//
// The file must stand alone and stay private: inline CSS and SVG only, no
// <script>, no web font, no URL of any kind (text that contains "://", such
// as an error naming the API, is written with an entity for the colon), so
// opening it makes no network request. Light and dark mode follow
// prefers-color-scheme, print has its own rules, every chart is an
// <svg role="img"> with a <title> and a <desc> that says in words what it
// shows, and tables have captions and header cells.
//
// Amounts in tables are the warehouse's exact decimal text (the views'
// formatting of integer cents); chart axes are labelled from integer cents
// too. Floating point only places pixels. Scales, ticks and positions hold
// for any int64 of cents, both signs (a span is taken as a uint64, the
// ticks of an axis are capped), so odd amounts never stop a report. The
// time axis follows the data (timeline.go): per run up to 72 runs, else
// per the smallest bucket (1 s to 1 day) giving at most 72 slots
// (load.PlanFine), else per UTC day (first, lowest, highest and last
// value), so a young or busy warehouse draws lines, not dots, and a year of 15-minute snapshots stays
// small (a few hundred kilobytes at most). The current cards' balances are
// summed per currency, exactly, by the rule of cards_flat.balance_minor
// (load.CardSum; the balance field's card_fields type says how).
//
// The page reads at a glance: an amount that never moved in the period
// is a line of text, not a flat chart; a bar chart whose few tallest bars
// would flatten the rest (a backfill beside later runs) has its axis cut
// and those bars drawn broken with their value (bars.go); long card ids
// are cut with an ellipsis, whole in a title, so rows keep one line.
//
// Each chart is drawn twice, wide and narrow, and the CSS shows the one
// that fits (under 600 px: a phone), so labels stay at least 11 px as
// drawn; tables scroll inside their own box; colours are the Okabe–Ito
// palette, with dash patterns on lines and lightness on bars for
// greyscale.
//
// Charts are drawn by a small SVG writer of its own (svg.go, line, band and
// stacked-bar charts over days, hours or runs) rather than github.com/go-analyze/charts
// v0.6.4, which was tried: it writes colours as inline styles (white
// background, fixed greys), so a chart cannot follow dark mode or print
// CSS; it names and measures text with its embedded Roboto font, which
// the reader does not have; its axis labels come from float64 and are
// abbreviated ("40k"), not exact amounts; it has no <title>/<desc>/role for
// screen readers; and it would add freetype and x/image to the build for
// about 250 lines of drawing.
package report
