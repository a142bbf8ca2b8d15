package javafmt

import (
	"fmt"
	"strconv"
	"time"
)

// DateFormat is a compiled java.text.SimpleDateFormat pattern. It formats
// only; it is immutable and safe for concurrent use.
//
// Supported pattern letters: G y Y M L w W d D F E u a H k K h m s S z Z X,
// with Java's meaning of repetition (MM = zero-padded month, MMM = "Jan",
// MMMM = "January", yy = two-digit year, and so on), quoted literals ('T')
// and a doubled single quote for a single quote. Other ASCII letters are
// rejected, as Java rejects unknown letters. Text is English and the
// week-based letters (Y week year, w week of year, W week of month) follow
// the en-US week definition (weeks start on Sunday; week 1 is the week that
// contains January 1), as on a JVM with the US default locale.
type DateFormat struct {
	pattern string
	parts   []datePart
}

type datePart struct {
	letter  byte   // 0 for a literal
	count   int    // repetitions of letter
	literal string // when letter == 0
}

// CompileDateFormat parses a SimpleDateFormat pattern.
func CompileDateFormat(pattern string) (*DateFormat, error) {
	f := &DateFormat{pattern: pattern}
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			f.parts = append(f.parts, datePart{literal: string(lit)})
			lit = nil
		}
	}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			if i+1 < len(pattern) && pattern[i+1] == '\'' {
				lit = append(lit, '\'')
				i += 2
				continue
			}
			// Quoted text up to the closing quote; '' inside is a quote.
			j := i + 1
			closed := false
			for j < len(pattern) {
				if pattern[j] == '\'' {
					if j+1 < len(pattern) && pattern[j+1] == '\'' {
						lit = append(lit, '\'')
						j += 2
						continue
					}
					closed = true
					break
				}
				lit = append(lit, pattern[j])
				j++
			}
			if !closed {
				return nil, fmt.Errorf("unterminated quote in date pattern %q", pattern)
			}
			i = j + 1
		case isASCIILetter(c):
			if !supportedLetter(c) {
				return nil, fmt.Errorf("unsupported pattern letter '%c' in date pattern %q (supported: G y Y M L w W d D F E u a H k K h m s S z Z X)", c, pattern)
			}
			j := i
			for j < len(pattern) && pattern[j] == c {
				j++
			}
			flush()
			f.parts = append(f.parts, datePart{letter: c, count: j - i})
			i = j
		default:
			lit = append(lit, c)
			i++
		}
	}
	flush()
	return f, nil
}

// Pattern returns the pattern the format was compiled from.
func (f *DateFormat) Pattern() string { return f.pattern }

// Format renders t (in t's location) with the pattern.
func (f *DateFormat) Format(t time.Time) string {
	return string(f.AppendFormat(make([]byte, 0, len(f.pattern)+8), t))
}

var (
	shortMonths = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	shortDays   = [...]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
)

// AppendFormat appends the formatted t to dst.
func (f *DateFormat) AppendFormat(dst []byte, t time.Time) []byte {
	for _, p := range f.parts {
		if p.letter == 0 {
			dst = append(dst, p.literal...)
			continue
		}
		dst = appendField(dst, t, p.letter, p.count)
	}
	return dst
}

// appendField appends the field of pattern letter c repeated n times, as
// SimpleDateFormat writes it.
func appendField(dst []byte, t time.Time, c byte, n int) []byte {
	switch c {
	case 'G':
		return append(dst, pick(t.Year() > 0, "AD", "BC")...)
	case 'y':
		return appendYear(dst, yearOfEra(t.Year()), n)
	case 'Y':
		y, _ := weekYear(t)
		return appendYear(dst, y, n)
	case 'w':
		_, w := weekYear(t)
		return appendPadded(dst, int64(w), n)
	case 'W':
		first := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, t.Location())
		return appendPadded(dst, int64((t.Day()+int(first.Weekday())-1)/7+1), n)
	case 'M', 'L':
		return appendMonth(dst, t.Month(), n)
	case 'd':
		return appendPadded(dst, int64(t.Day()), n)
	case 'D':
		return appendPadded(dst, int64(t.YearDay()), n)
	case 'F':
		return appendPadded(dst, int64((t.Day()-1)/7+1), n)
	case 'E':
		return append(dst, pick(n >= 4, t.Weekday().String(), shortDays[t.Weekday()])...)
	case 'u':
		return appendPadded(dst, int64(isoWeekday(t.Weekday())), n)
	case 'a':
		return append(dst, pick(t.Hour() < 12, "AM", "PM")...)
	case 'H':
		return appendPadded(dst, int64(t.Hour()), n)
	case 'k':
		return appendPadded(dst, int64(nonZero(t.Hour(), 24)), n)
	case 'K':
		return appendPadded(dst, int64(t.Hour()%12), n)
	case 'h':
		return appendPadded(dst, int64(nonZero(t.Hour()%12, 12)), n)
	case 'm':
		return appendPadded(dst, int64(t.Minute()), n)
	case 's':
		return appendPadded(dst, int64(t.Second()), n)
	case 'S':
		return appendPadded(dst, int64(t.Nanosecond()/int(time.Millisecond)), n)
	case 'z':
		name, _ := t.Zone()
		return append(dst, name...)
	case 'Z':
		return appendOffset(dst, t, false, false)
	case 'X':
		return appendISOOffset(dst, t, n)
	}
	return dst
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

// nonZero returns v, or instead when v is 0: the hour of a clock that
// counts 1 to 24 ('k') or 1 to 12 ('h').
func nonZero(v, instead int) int {
	if v == 0 {
		return instead
	}
	return v
}

// yearOfEra is the year as Java shows it: 1 BC for year 0, 2 BC for -1.
func yearOfEra(y int) int {
	if y <= 0 {
		return 1 - y
	}
	return y
}

// appendYear writes a year: two digits for "yy", else at least n digits.
func appendYear(dst []byte, y, n int) []byte {
	if n == 2 {
		return appendPadded(dst, int64(y%100), 2)
	}
	return appendPadded(dst, int64(y), n)
}

// appendMonth writes a month: its name from four letters, its short name
// at three, else its number.
func appendMonth(dst []byte, m time.Month, n int) []byte {
	switch {
	case n >= 4:
		return append(dst, m.String()...)
	case n == 3:
		return append(dst, shortMonths[m-1]...)
	}
	return appendPadded(dst, int64(m), n)
}

// isoWeekday numbers Monday 1 to Sunday 7.
func isoWeekday(wd time.Weekday) int {
	if wd == time.Sunday {
		return 7
	}
	return int(wd)
}

// appendISOOffset writes the 'X' field: Z for UTC, else +hh, +hhmm or
// +hh:mm by the letter count.
func appendISOOffset(dst []byte, t time.Time, n int) []byte {
	if _, off := t.Zone(); off == 0 {
		return append(dst, 'Z')
	}
	switch n {
	case 1:
		return appendOffset(dst, t, false, true)
	case 2:
		return appendOffset(dst, t, false, false)
	}
	return appendOffset(dst, t, true, false)
}

func appendOffset(dst []byte, t time.Time, colon, hoursOnly bool) []byte {
	_, off := t.Zone()
	sign := byte('+')
	if off < 0 {
		sign = '-'
		off = -off
	}
	dst = append(dst, sign)
	dst = appendPadded(dst, int64(off/3600), 2)
	if hoursOnly {
		return dst
	}
	if colon {
		dst = append(dst, ':')
	}
	return appendPadded(dst, int64(off%3600/60), 2)
}

func appendPadded(dst []byte, v int64, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], v, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

func isASCIILetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func supportedLetter(c byte) bool {
	switch c {
	case 'G', 'y', 'Y', 'M', 'L', 'w', 'W', 'd', 'D', 'F', 'E', 'u', 'a', 'H', 'k', 'K', 'h', 'm', 's', 'S', 'z', 'Z', 'X':
		return true
	}
	return false
}

// weekYear returns the en-US week-based year and week of year of t: weeks
// run Sunday to Saturday and week 1 is the one containing January 1, so the
// last days of December can belong to week 1 of the next year.
func weekYear(t time.Time) (year, week int) {
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	sunday := day.AddDate(0, 0, -int(day.Weekday()))
	year = t.Year()
	if sunday.AddDate(0, 0, 6).Year() > year { // this week holds January 1 of next year
		year++
	}
	jan1 := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)
	start := jan1.AddDate(0, 0, -int(jan1.Weekday()))
	week = int(sunday.Sub(start).Hours()/24)/7 + 1
	return year, week
}
