package aerofake

import (
	"encoding/binary"
	"testing"
)

// The emulated Enterprise security answers every admin request, however
// malformed, with a result code; only a well-formed login with the right
// password gets a session, and only that session authenticates.
func TestSecurityAnswers(t *testing.T) {
	sec, err := newSecurity(&Security{Users: map[string]string{"u": "pw"}})
	if err != nil {
		t.Fatal(err)
	}
	field := func(id byte, data []byte) []byte {
		out := binary.BigEndian.AppendUint32(nil, uint32(len(data)+1))
		return append(append(out, id), data...)
	}
	req := func(cmd byte, nFields int, fields ...[]byte) []byte {
		b := make([]byte, adminHeaderSize)
		b[2], b[3] = cmd, byte(nFields)
		for _, f := range fields {
			b = append(b, f...)
		}
		return b
	}
	good := sec.hashes["u"]
	token := sec.token("u")
	for _, tc := range []struct {
		name string
		body []byte
		want ResultCode
	}{
		{"empty", nil, ParameterError},
		{"short header", make([]byte, 10), ParameterError},
		{"missing fields", req(adminCmdLogin, 2, field(adminFieldUser, []byte("u"))), ParameterError},
		{"field size zero", req(adminCmdLogin, 1, []byte{0, 0, 0, 0, 0}), ParameterError},
		{"field size past the end", req(adminCmdLogin, 1, []byte{0x7f, 0xff, 0xff, 0xff, 0, 'u'}), ParameterError},
		{"unknown user", req(adminCmdLogin, 2, field(adminFieldUser, []byte("x")), field(adminFieldCredential, good)), InvalidCredential},
		{"wrong password", req(adminCmdLogin, 2, field(adminFieldUser, []byte("u")), field(adminFieldCredential, []byte("nope"))), InvalidCredential},
		{"login", req(adminCmdLogin, 2, field(adminFieldUser, []byte("u")), field(adminFieldCredential, good)), OK},
		{"authenticate", req(adminCmdAuthenticate, 2, field(adminFieldUser, []byte("u")), field(adminFieldSessionTok, token)), OK},
		{"authenticate with a bad token", req(adminCmdAuthenticate, 2, field(adminFieldUser, []byte("u")), field(adminFieldSessionTok, []byte("t"))), NotAuthenticated},
		{"user management", req(1, 0), UnsupportedFeature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, fields := sec.answer(tc.body)
			if rc != tc.want {
				t.Fatalf("result %v, want %v", rc, tc.want)
			}
			if (rc == OK && tc.body[2] == adminCmdLogin) != (len(fields) == 2) {
				t.Fatalf("fields %v with result %v", fields, rc)
			}
		})
	}
}
