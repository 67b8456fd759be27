package boundary

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// TestClassify: a dialect's error becomes an ErrWarehouse once, keeping
// its cause; nil and the errors a dialect keeps are left alone.
func TestClassify(t *testing.T) {
	cause := errors.New("disk I/O error")
	err := fmt.Errorf("commit: %w", cause)
	Classify(&err)
	if !errors.Is(err, load.ErrWarehouse) || !errors.Is(err, cause) || err.Error() != "warehouse error: commit: disk I/O error" {
		t.Errorf("classified %q", err)
	}
	again := err
	Classify(&again)
	if again != err {
		t.Errorf("classified twice: %q", again)
	}
	locked := fmt.Errorf("run lock: %w", load.ErrLocked)
	Classify(&locked, load.ErrLocked)
	if errors.Is(locked, load.ErrWarehouse) {
		t.Errorf("a kept error was classified: %q", locked)
	}
	var none error
	Classify(&none)
	if none != nil {
		t.Errorf("nil became %v", none)
	}
}
