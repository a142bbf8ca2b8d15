package wire

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/plugins/internal/datachan"
	"github.com/connectd/connectd/plugins/pluginpb"
)

func mustMarshal(t testing.TB, m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeAttachesBulk: a batch's or put's records travel as the frame's
// bulk and come back as the message's records field, the same buffer;
// bulk anywhere else is refused.
func TestDecodeAttachesBulk(t *testing.T) {
	recs := AppendRecord(nil, &chain.Raw{Topic: "t", Value: []byte("v")})
	batch := mustMarshal(t, &pluginpb.SourceResponse{Msg: &pluginpb.SourceResponse_Batch{Batch: &pluginpb.SourceBatch{Seq: 3, Count: 1, Final: true}}})
	v, err := DecodeForHost(KindSource, batch, recs)
	if err != nil {
		t.Fatal(err)
	}
	got := v.(*pluginpb.SourceResponse).GetBatch()
	if got.GetSeq() != 3 || &got.GetRecords()[0] != &recs[0] {
		t.Fatalf("batch %v: records not the frame's bulk", got)
	}
	put := mustMarshal(t, &pluginpb.SinkRequest{Msg: &pluginpb.SinkRequest_Put{Put: &pluginpb.SinkPut{Id: 9, Count: 1, Final: true}}})
	v, err = DecodeForPlugin(KindSink, put, recs)
	if err != nil {
		t.Fatal(err)
	}
	if p := v.(*pluginpb.SinkRequest).GetPut(); p.GetId() != 9 || &p.GetRecords()[0] != &recs[0] {
		t.Fatalf("put %v: records not the frame's bulk", p)
	}

	inline := mustMarshal(t, &pluginpb.SourceResponse{Msg: &pluginpb.SourceResponse_Batch{Batch: &pluginpb.SourceBatch{Records: recs}}})
	started := mustMarshal(t, &pluginpb.SourceResponse{Msg: &pluginpb.SourceResponse_Started{Started: &pluginpb.Empty{}}})
	flush := mustMarshal(t, &pluginpb.SinkRequest{Msg: &pluginpb.SinkRequest_Flush{Flush: &pluginpb.SinkFlush{Id: 1}}})
	bad := []struct {
		name       string
		host       bool
		kind       byte
		meta, bulk []byte
	}{
		{"bulk on a started", true, KindSource, started, recs},
		{"bulk and inline records", true, KindSource, inline, recs},
		{"bulk on a flush", false, KindSink, flush, recs},
		{"bulk on a sink response", true, KindSink, mustMarshal(t, &pluginpb.SinkResponse{Msg: &pluginpb.SinkResponse_Credit{Credit: &pluginpb.Credit{N: 1}}}), recs},
		{"bulk on a source request", false, KindSource, mustMarshal(t, &pluginpb.SourceRequest{Msg: &pluginpb.SourceRequest_Credit{Credit: &pluginpb.Credit{N: 1}}}), recs},
		{"empty response", true, KindSource, nil, nil},
		{"not protobuf", true, KindSink, []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, nil},
		{"unknown kind", false, 7, flush, nil},
	}
	for _, c := range bad {
		decode := DecodeForPlugin
		if c.host {
			decode = DecodeForHost
		}
		if _, err := decode(c.kind, c.meta, c.bulk); err == nil {
			t.Errorf("%s: decoded", c.name)
		}
	}
}

// FuzzTaskFrames feeds bytes through everything the receiving side of the
// data channel does with them: frame decoding, message decoding for either
// side and stream kind, and the packed records of batches and puts. Nothing
// may panic or read outside its input.
func FuzzTaskFrames(f *testing.F) {
	recs := AppendRecord(nil, &chain.Raw{Topic: "t", Key: []byte("k"), Value: []byte("v")})
	recs = AppendSourceExtras(recs, []byte(`{"p":1}`), []byte(`{"o":2}`), 0)
	frame := func(meta, bulk []byte) []byte {
		b := datachan.AppendHeader(nil, datachan.TypeMsg, 1, len(meta), len(bulk))
		return append(append(b, meta...), bulk...)
	}
	f.Add(frame(mustMarshal(f, &pluginpb.SourceResponse{Msg: &pluginpb.SourceResponse_Batch{Batch: &pluginpb.SourceBatch{Seq: 1, Count: 1, Final: true}}}), recs))
	f.Add(frame(mustMarshal(f, &pluginpb.SinkRequest{Msg: &pluginpb.SinkRequest_Put{Put: &pluginpb.SinkPut{Id: 1, Count: 1, Final: true}}}), recs))
	f.Add(frame(mustMarshal(f, &pluginpb.SinkResponse{Msg: &pluginpb.SinkResponse_Credit{Credit: &pluginpb.Credit{N: 2}}}), nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := datachan.NewFrameReader(bytes.NewReader(data), 1<<20)
		for {
			frm, err := fr.Next()
			if err != nil {
				return
			}
			for _, kind := range []byte{KindSource, KindSink} {
				if v, err := DecodeForHost(kind, frm.Meta, frm.Bulk); err == nil {
					if sr, ok := v.(*pluginpb.SourceResponse); ok && sr.GetBatch() != nil {
						decodeAll(sr.GetBatch().GetRecords(), int(sr.GetBatch().GetCount()), true)
					}
				}
				if v, err := DecodeForPlugin(kind, frm.Meta, frm.Bulk); err == nil {
					if sr, ok := v.(*pluginpb.SinkRequest); ok && sr.GetPut() != nil {
						decodeAll(sr.GetPut().GetRecords(), int(sr.GetPut().GetCount()), false)
					}
				}
			}
		}
	})
}

// decodeAll decodes count records as the receiving side does, stopping at
// the first error.
func decodeAll(buf []byte, count int, source bool) {
	if count < 0 || count > len(buf) {
		return
	}
	var d Decoder
	d.Reset(buf)
	for range count {
		var r chain.Raw
		if d.Record(&r) != nil {
			return
		}
		if source {
			if _, _, _, err := d.SourceExtras(); err != nil {
				return
			}
		}
	}
}
