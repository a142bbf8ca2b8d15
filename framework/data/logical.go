package data

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Names of Kafka Connect's logical types.
const (
	DecimalName             = "org.apache.kafka.connect.data.Decimal"
	DecimalScaleParam       = "scale"
	DateName                = "org.apache.kafka.connect.data.Date"
	TimeName                = "org.apache.kafka.connect.data.Time"
	TimestampName           = "org.apache.kafka.connect.data.Timestamp"
	millisPerDay      int64 = 24 * 60 * 60 * 1000
)

// DecimalSchema starts a Decimal schema: bytes holding the two's-complement
// unscaled value, with the scale as parameter; values are Decimal.
func DecimalSchema(scale int32) *Builder {
	return Build(Bytes).Name(DecimalName).Version(1).Parameter(DecimalScaleParam, strconv.Itoa(int(scale)))
}

// DateSchema starts a Date schema: int32 days since the epoch; values are
// time.Time at midnight UTC.
func DateSchema() *Builder { return Build(Int32).Name(DateName).Version(1) }

// TimeSchema starts a Time schema: int32 milliseconds since midnight;
// values are time.Time on 1970-01-01 UTC.
func TimeSchema() *Builder { return Build(Int32).Name(TimeName).Version(1) }

// TimestampSchema starts a Timestamp schema: int64 milliseconds since the
// epoch; values are time.Time.
func TimestampSchema() *Builder { return Build(Int64).Name(TimestampName).Version(1) }

// DecimalScale returns the scale parameter of a Decimal schema.
func DecimalScale(s *Schema) (int32, error) {
	p, ok := s.Parameters[DecimalScaleParam]
	if !ok {
		return 0, errors.New("invalid Decimal schema: scale parameter not found")
	}
	n, err := strconv.ParseInt(p, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("invalid Decimal schema: scale parameter %q is not an integer", p)
	}
	return int32(n), nil
}

// Decimal is an arbitrary-precision decimal, Unscaled × 10^-Scale (Java's
// BigDecimal). The zero value is 0 with scale 0.
type Decimal struct {
	Unscaled *big.Int
	Scale    int32
}

// NewDecimal returns unscaled × 10^-scale.
func NewDecimal(unscaled int64, scale int32) Decimal {
	return Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}
}

func (d Decimal) unscaled() *big.Int {
	if d.Unscaled == nil {
		return new(big.Int)
	}
	return d.Unscaled
}

// ParseDecimal parses decimal text as Java's BigDecimal(String) does:
// "12.50" has scale 2, "1E+3" has scale -3, "1.5e-2" has scale 3.
func ParseDecimal(s string) (Decimal, error) {
	orig := s
	mant, exp := s, int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.ParseInt(s[i+1:], 10, 32)
		if err != nil {
			return Decimal{}, fmt.Errorf("invalid decimal %q", orig)
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	sign := ""
	if strings.HasPrefix(digits, "-") || strings.HasPrefix(digits, "+") {
		sign, digits = digits[:1], digits[1:]
	}
	if digits == "" || strings.Trim(digits, "0123456789") != "" || strings.ContainsAny(frac, "+-") {
		return Decimal{}, fmt.Errorf("invalid decimal %q", orig)
	}
	u, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return Decimal{}, fmt.Errorf("invalid decimal %q", orig)
	}
	if sign == "-" {
		u.Neg(u)
	}
	scale := int64(len(frac)) - exp
	if scale > math.MaxInt32 || scale < math.MinInt32 {
		return Decimal{}, fmt.Errorf("decimal %q: scale out of range", orig)
	}
	return Decimal{Unscaled: u, Scale: int32(scale)}, nil
}

// String renders d as Java's BigDecimal.toString: plain notation unless the
// scale is negative or the number is very small, then scientific
// ("1E+3", "1.5E-8").
func (d Decimal) String() string {
	u := d.unscaled()
	digits := new(big.Int).Abs(u).String()
	neg := u.Sign() < 0
	adjusted := -int64(d.Scale) + int64(len(digits)-1)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	if d.Scale >= 0 && adjusted >= -6 {
		b.WriteString(plain(digits, int(d.Scale)))
		return b.String()
	}
	b.WriteString(digits[:1])
	if len(digits) > 1 {
		b.WriteByte('.')
		b.WriteString(digits[1:])
	}
	b.WriteByte('E')
	if adjusted >= 0 {
		b.WriteByte('+')
	}
	b.WriteString(strconv.FormatInt(adjusted, 10))
	return b.String()
}

// PlainString renders d without an exponent (Java's toPlainString).
func (d Decimal) PlainString() string {
	u := d.unscaled()
	digits := new(big.Int).Abs(u).String()
	s := ""
	if d.Scale >= 0 {
		s = plain(digits, int(d.Scale))
	} else if u.Sign() == 0 {
		s = "0"
	} else {
		s = digits + strings.Repeat("0", int(-d.Scale))
	}
	if u.Sign() < 0 {
		return "-" + s
	}
	return s
}

func plain(digits string, scale int) string {
	if scale == 0 {
		return digits
	}
	if len(digits) <= scale {
		return "0." + strings.Repeat("0", scale-len(digits)) + digits
	}
	return digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
}

// Rescale returns d with the given scale if that loses no digits.
func (d Decimal) Rescale(scale int32) (Decimal, error) {
	if scale == d.Scale {
		return d, nil
	}
	u := d.unscaled()
	if scale > d.Scale {
		m := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale-d.Scale)), nil)
		return Decimal{Unscaled: m.Mul(m, u), Scale: scale}, nil
	}
	div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale-scale)), nil)
	q, r := new(big.Int).QuoRem(u, div, new(big.Int))
	if r.Sign() != 0 {
		return Decimal{}, fmt.Errorf("decimal %s cannot be represented with scale %d without rounding", d, scale)
	}
	return Decimal{Unscaled: q, Scale: scale}, nil
}

// Cmp compares values, ignoring scale (1.0 == 1.00).
func (d Decimal) Cmp(o Decimal) int {
	return d.Rat().Cmp(o.Rat())
}

// Equal reports equal value and equal scale, as Java's BigDecimal.equals.
func (d Decimal) Equal(o Decimal) bool {
	return d.Scale == o.Scale && d.unscaled().Cmp(o.unscaled()) == 0
}

// Rat returns d as an exact rational.
func (d Decimal) Rat() *big.Rat {
	r := new(big.Rat).SetInt(d.unscaled())
	if d.Scale > 0 {
		r.Quo(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil)))
	} else if d.Scale < 0 {
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-d.Scale)), nil)))
	}
	return r
}

// Float64 returns the nearest float64.
func (d Decimal) Float64() float64 {
	f, _ := d.Rat().Float64()
	return f
}

// UnscaledBytes returns the unscaled value as minimal big-endian two's
// complement bytes (Java's BigInteger.toByteArray), the Decimal wire form.
func (d Decimal) UnscaledBytes() []byte {
	u := d.unscaled()
	if u.Sign() >= 0 {
		b := u.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// Two's complement of a negative number in the fewest bytes n with
	// u >= -2^(8n-1): the bytes of 2^(8n) + u.
	n := 1
	for lim := new(big.Int).Lsh(big.NewInt(1), 7); new(big.Int).Neg(lim).Cmp(u) > 0; lim.Lsh(lim, 8) {
		n++
	}
	return new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), uint(8*n)), u).Bytes()
}

// DecimalFromBytes decodes big-endian two's complement unscaled bytes.
func DecimalFromBytes(b []byte, scale int32) Decimal {
	u := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return Decimal{Unscaled: u, Scale: scale}
}

// DateToDays converts a Date value to its int32 wire form. The time must be
// midnight UTC, as Kafka requires.
func DateToDays(t time.Time) (int32, error) {
	ms := t.UnixMilli()
	if t.Nanosecond()%int(time.Millisecond) != 0 || floorMod(ms, millisPerDay) != 0 {
		return 0, &Error{Msg: "Kafka Connect Date type should not have any time fields set to non-zero values."}
	}
	days := floorDiv(ms, millisPerDay)
	if days > math.MaxInt32 || days < math.MinInt32 {
		return 0, fmt.Errorf("date %s is out of the Date type's range", t.UTC().Format(time.DateOnly))
	}
	return int32(days), nil
}

// DaysToDate converts a Date wire value to midnight UTC of that day.
func DaysToDate(days int32) time.Time { return time.UnixMilli(int64(days) * millisPerDay).UTC() }

// TimeToMillis converts a Time value to its int32 wire form. The time must
// lie on 1970-01-01 UTC, as Kafka requires.
func TimeToMillis(t time.Time) (int32, error) {
	ms := t.UnixMilli()
	if ms < 0 || ms > millisPerDay {
		return 0, &Error{Msg: "Kafka Connect Time type should not have any date fields set to non-zero values."}
	}
	return int32(ms), nil
}

// MillisToTime converts a Time wire value to a time.Time on 1970-01-01 UTC.
func MillisToTime(ms int32) time.Time { return time.UnixMilli(int64(ms)).UTC() }

// TimestampToMillis converts a Timestamp value to milliseconds since the
// epoch (sub-millisecond digits are dropped, towards the past).
func TimestampToMillis(t time.Time) int64 { return t.UnixMilli() }

// MillisToTimestamp converts a Timestamp wire value to a time.Time in UTC.
func MillisToTimestamp(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
