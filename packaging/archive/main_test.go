package main

import (
	"os"
	"testing"

	"github.com/cardsync/cardsync/internal/testbinary"
)

func TestMain(m *testing.M) { os.Exit(testbinary.Main(m)) }
