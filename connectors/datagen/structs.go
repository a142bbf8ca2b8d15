package datagen

import (
	"time"

	"github.com/connectd/connectd/framework/data"
)

// Struct forms of the quickstarts (value.struct=true). The schemas are
// named, so that a Schema Registry converter registers a named record
// (Avro) or message (Protobuf) rather than a default name, and fixed, so
// that every record of a topic registers the same schema once.
var (
	// CounterSchema is the counter quickstart's value: key, amount and
	// seq as in the map form, plus created_at (Timestamp) and price
	// (Decimal), so that the logical types travel through a pipeline too.
	CounterSchema = data.Build(data.Struct).Name("connectd.datagen.Counter").
			Field("key", data.PrimitiveSchema(data.String)).
			Field("amount", data.PrimitiveSchema(data.Int64)).
			Field("seq", data.PrimitiveSchema(data.Int64)).
			Field("created_at", data.TimestampSchema().MustSchema()).
			Field("price", data.DecimalSchema(PriceScale).MustSchema()).
			MustSchema()

	// PageviewSchema is the pageviews quickstart's value.
	PageviewSchema = data.Build(data.Struct).Name("connectd.datagen.Pageview").
			Field("viewtime", data.PrimitiveSchema(data.Int64)).
			Field("userid", data.PrimitiveSchema(data.String)).
			Field("pageid", data.PrimitiveSchema(data.String)).
			MustSchema()
)

// PriceScale is the scale of the counter's price field.
const PriceScale = 2

// counterEpoch anchors created_at: a fixed instant, so that the field is a
// pure function of seq like every other.
const counterEpoch = 1_700_000_000_000

// CreatedAt is the counter record's created_at: one millisecond per seq
// after a fixed epoch.
func (c CounterRecord) CreatedAt() time.Time { return time.UnixMilli(counterEpoch + c.Seq).UTC() }

// Price is the counter record's price: amount × 1.25, exactly, at scale 2.
func (c CounterRecord) Price() data.Decimal { return data.NewDecimal(c.Amount*125, PriceScale) }

// CounterStruct is the struct form of a counter record.
func CounterStruct(c CounterRecord) *data.StructValue {
	return data.NewStruct(CounterSchema).
		MustPut("key", c.Key).
		MustPut("amount", c.Amount).
		MustPut("seq", c.Seq).
		MustPut("created_at", c.CreatedAt()).
		MustPut("price", c.Price())
}

// PageviewStruct is the struct form of a pageview.
func PageviewStruct(p Pageview) *data.StructValue {
	return data.NewStruct(PageviewSchema).
		MustPut("viewtime", p.ViewTime).
		MustPut("userid", p.UserID).
		MustPut("pageid", p.PageID)
}
