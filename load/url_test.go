package load

import (
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://cardsync:s3cret@db.example:5432/warehouse?sslmode=require", "postgres://cardsync:xxxxx@db.example:5432/warehouse?sslmode=require"},
		{"postgres://cardsync@db.example/warehouse", "postgres://cardsync@db.example/warehouse"},
		{"postgresql://db.example/w?password=s3cret&sslmode=disable", "postgresql://db.example/w?password=xxxxx&sslmode=disable"},
		{"postgres://u:p%40ss@h/d", "postgres://u:xxxxx@h/d"},
		{"host=db.example password=s3cret", "…"},
		{"postgres://u:s3cret@[bad", "postgres://…"},
		// Found by a review: a query that does not parse, an encoded
		// "password=" in a name, an encoded ':' in the user name.
		{"postgres://u@/d?host=/tmp&password=s3cret%zz", "postgres://u@/d?…"},
		{"postgres://u@/d?host=/tmp;password=s3cret", "postgres://u@/d?…"},
		{"postgres://u@/d?host=/tmp&password%3Ds3cret", "postgres://u@/d?host=%2Ftmp&password=xxxxx"},
		{"postgres://u@/d?SSLPassword=s3cret&sslmode=require", "postgres://u@/d?SSLPassword=xxxxx&sslmode=require"},
		{"postgres://u%3As3cret@h/d", "postgres://u%3Axxxxx@h/d"},
		{"postgres://u@/d?host=/tmp#password=s3cret", "postgres://u@/d?host=/tmp#xxxxx"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := RedactURL(tt.in)
			if got != tt.want {
				t.Errorf("RedactURL = %q, want %q", got, tt.want)
			}
			if strings.Contains(got, "s3cret") || strings.Contains(got, "p%40ss") {
				t.Errorf("RedactURL(%q) = %q keeps the password", tt.in, got)
			}
		})
	}
}
