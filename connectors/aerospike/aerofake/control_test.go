package aerofake_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	as "github.com/aerospike/aerospike-client-go/v7"
	"github.com/aerospike/aerospike-client-go/v7/types"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
)

func controlDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// Faults injected over the control API disturb the real client exactly as
// the Go API's do; listing, clearing and bad requests behave as documented.
func TestControlAPI(t *testing.T) {
	srv, c := testServer(t)
	hs := httptest.NewServer(srv.ControlHandler())
	t.Cleanup(hs.Close)
	k := mustKey(t, "test", "demo", "ctl")

	if code, body := controlDo(t, "POST", hs.URL+"/faults", `{"ops":["write"],"times":2,"result_code":14}`); code != http.StatusNoContent {
		t.Fatalf("POST /faults = %d %s", code, body)
	}
	code, body := controlDo(t, "GET", hs.URL+"/faults", "")
	var pending []aerofake.ControlFault
	if err := json.Unmarshal([]byte(body), &pending); err != nil || code != 200 {
		t.Fatalf("GET /faults = %d %s (%v)", code, body, err)
	}
	if len(pending) != 1 || pending[0].Times != 2 || pending[0].ResultCode != 14 || len(pending[0].Ops) != 1 || pending[0].Ops[0] != "write" {
		t.Fatalf("pending = %+v", pending)
	}
	wantRC(t, c.Put(nil, k, as.BinMap{"v": 1}), types.KEY_BUSY)
	if code, _ := controlDo(t, "DELETE", hs.URL+"/faults", ""); code != http.StatusNoContent {
		t.Fatalf("DELETE /faults = %d", code)
	}
	noErr(t, c.Put(nil, k, as.BinMap{"v": 1}))

	// Latency is accepted and listed; drop closes live connections.
	if code, body := controlDo(t, "POST", hs.URL+"/faults", `{"ops":["read","write"],"delay_ms":5}`); code != http.StatusNoContent {
		t.Fatalf("POST latency = %d %s", code, body)
	}
	noErr(t, c.Put(nil, k, as.BinMap{"v": 2}))
	controlDo(t, "DELETE", hs.URL+"/faults", "")
	if code, body := controlDo(t, "POST", hs.URL+"/connections/drop", ""); code != 200 || !strings.Contains(body, `"dropped"`) {
		t.Fatalf("drop = %d %s", code, body)
	}
	code, body = controlDo(t, "GET", hs.URL+"/stats", "")
	var st aerofake.Stats
	if err := json.Unmarshal([]byte(body), &st); err != nil || code != 200 || st.FaultsInjected < 1 || st.Writes < 2 {
		t.Fatalf("stats = %d %s (%v)", code, body, err)
	}

	for _, bad := range []string{
		`{"ops":["writes"],"result_code":14}`,
		`{"result_code":300}`,
		`{"times":-1,"result_code":14}`,
		`{"delay_ms":-5}`,
		`{}`,
		`{"ops":["write"],"result_code":14,"extra":1}`,
		`not json`,
	} {
		if code, body := controlDo(t, "POST", hs.URL+"/faults", bad); code != http.StatusBadRequest || !strings.Contains(body, `"error"`) {
			t.Errorf("POST /faults %s = %d %s, want 400 with an error", bad, code, body)
		}
	}
	if n := len(srv.PendingFaults()); n != 0 {
		t.Fatalf("bad requests installed %d rules", n)
	}
}
