package javafmt

import (
	"math"
	"testing"
	"time"
)

func TestFormatDouble(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{-1, "-1.0"},
		{0.5, "0.5"},
		{0.1, "0.1"},
		{123.456, "123.456"},
		{0.001, "0.001"},
		{0.0001, "1.0E-4"},
		{1.5e-5, "1.5E-5"},
		{9999999, "9999999.0"},
		{1e7, "1.0E7"},
		{1.2345e10, "1.2345E10"},
		{-3.5e20, "-3.5E20"},
		{math.MaxFloat64, "1.7976931348623157E308"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
	}
	for _, tt := range tests {
		if got := FormatDouble(tt.in); got != tt.want {
			t.Errorf("FormatDouble(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatFloat(t *testing.T) {
	tests := []struct {
		in   float32
		want string
	}{
		{1.1, "1.1"}, // float32 shortest digits, not 1.100000023841858
		{0.3, "0.3"},
		{3e10, "3.0E10"},
		{2.5, "2.5"},
	}
	for _, tt := range tests {
		if got := FormatFloat(tt.in); got != tt.want {
			t.Errorf("FormatFloat(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDateFormat(t *testing.T) {
	ts := time.Date(2024, time.March, 7, 15, 4, 5, 67*int(time.Millisecond), time.UTC)
	tests := []struct {
		pattern string
		want    string
	}{
		{"yyyyMMdd", "20240307"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", "2024-03-07T15:04:05.067Z"},
		{"yy/M/d", "24/3/7"},
		{"MMM MMMM", "Mar March"},
		{"EEE EEEE u", "Thu Thursday 4"},
		{"h:mm a", "3:04 PM"},
		{"K k H", "3 15 15"},
		{"D F", "67 1"},
		{"S SS SSSS", "67 67 0067"},
		{"'It''s' yyyy", "It's 2024"},
		{"''", "'"},
		{"G yyyy", "AD 2024"},
		{"Z X XX XXX z", "+0000 Z Z Z UTC"},
		{"yyyy-MM-dd-HH", "2024-03-07-15"},
	}
	for _, tt := range tests {
		f, err := CompileDateFormat(tt.pattern)
		if err != nil {
			t.Fatalf("CompileDateFormat(%q): %v", tt.pattern, err)
		}
		if got := f.Format(ts); got != tt.want {
			t.Errorf("Format(%q) = %q, want %q", tt.pattern, got, tt.want)
		}
	}

	// Offsets outside UTC.
	loc := time.FixedZone("X", -(5*3600 + 30*60))
	f, _ := CompileDateFormat("Z X XX XXX")
	if got, want := f.Format(ts.In(loc)), "-0530 -05 -0530 -05:30"; got != want {
		t.Errorf("offset format = %q, want %q", got, want)
	}
	// Midnight edge of k and h.
	f, _ = CompileDateFormat("k h a")
	if got, want := f.Format(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)), "24 12 AM"; got != want {
		t.Errorf("midnight = %q, want %q", got, want)
	}
}

func TestWeekLetters(t *testing.T) {
	// en-US weeks: Sunday first, week 1 contains January 1.
	tests := []struct {
		date string
		want string
	}{
		{"2024-12-28", "2024 52 4"}, // Saturday before the week of Jan 1 2025
		{"2024-12-29", "2025 01 5"}, // Sunday: the week holding Jan 1 2025
		{"2024-12-31", "2025 01 5"},
		{"2025-01-01", "2025 01 1"},
		{"2025-01-04", "2025 01 1"},
		{"2025-01-05", "2025 02 2"},
		{"2023-01-01", "2023 01 1"}, // a Sunday
		{"2023-12-31", "2024 01 6"},
	}
	f, err := CompileDateFormat("YYYY ww W")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		d, _ := time.Parse("2006-01-02", tt.date)
		if got := f.Format(d); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.date, got, tt.want)
		}
	}
}

func TestDateFormatErrors(t *testing.T) {
	for _, p := range []string{"yyyy-'MM", "q", "B"} {
		if _, err := CompileDateFormat(p); err == nil {
			t.Errorf("CompileDateFormat(%q) succeeded, want error", p)
		}
	}
}
