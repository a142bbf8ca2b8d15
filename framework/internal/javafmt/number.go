package javafmt

import (
	"math"
	"strconv"
	"strings"
)

// FormatDouble renders f as java.lang.Double.toString does: the shortest
// decimal that round-trips, in plain notation with at least one fractional
// digit for 1e-3 <= |f| < 1e7 ("1.0", "0.25"), otherwise in computerized
// scientific notation ("1.0E10", "1.5E-5"); "NaN", "Infinity", "-Infinity".
func FormatDouble(f float64) string { return format(f, 64) }

// FormatFloat renders f as java.lang.Float.toString does (see FormatDouble).
func FormatFloat(f float32) string { return format(float64(f), 32) }

// AppendDouble appends FormatDouble(f) to dst.
func AppendDouble(dst []byte, f float64) []byte { return appendFormat(dst, f, 64) }

// AppendFloat appends FormatFloat(f) to dst.
func AppendFloat(dst []byte, f float32) []byte { return appendFormat(dst, float64(f), 32) }

func format(f float64, bits int) string {
	var buf [32]byte
	return string(appendFormat(buf[:0], f, bits))
}

func appendFormat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'f', -1, bits)
		if !containsByte(dst[start:], '.') {
			dst = append(dst, '.', '0')
		}
		return dst
	}
	// Shortest digits in Go's e-notation ("1.5e-05"), then rewritten as
	// Java writes it ("1.5E-5").
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, bits)
	s := string(e)
	mant, exp, _ := strings.Cut(s, "e")
	dst = append(dst, mant...)
	if !strings.Contains(mant, ".") {
		dst = append(dst, '.', '0')
	}
	dst = append(dst, 'E')
	if exp[0] == '-' {
		dst = append(dst, '-')
	}
	exp = strings.TrimLeft(exp[1:], "0")
	if exp == "" {
		exp = "0"
	}
	return append(dst, exp...)
}

func containsByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}
