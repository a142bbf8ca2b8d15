package aerofake

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/aerospike/aerospike-client-go/v7/pkg/bcrypt"
)

// Security configures an emulated Aerospike Enterprise server with security
// enabled (Config.EnterpriseSecurity). Only logging in is modelled: users
// log in with their password and authenticate new connections with the
// session token; roles, permissions and user management are not, and
// commands are not refused on connections that did not log in.
type Security struct {
	// Users maps each user name to its password.
	Users map[string]string
}

// Admin (security) protocol: a 16-byte header after the proto header, then
// fields of u32 size (data + 1), u8 id, data. Command ids and field ids are
// the client's (admin_command.go).
const (
	adminHeaderSize       = 16
	adminCmdAuthenticate  = 0
	adminCmdLogin         = 20
	adminFieldUser        = 0
	adminFieldCredential  = 3
	adminFieldSessionTok  = 5
	adminFieldSessionTTL  = 6
	sessionTTLSeconds     = 86400 // the real server's default session-ttl
	clientPasswordHashing = "$2a$10$7EqJtq98hPqEX7fNZaFWoO"
)

// Admin result codes.
const (
	SecurityNotSupported ResultCode = 51
	InvalidCredential    ResultCode = 65
	NotAuthenticated     ResultCode = 80
)

// security is the server side of Config.EnterpriseSecurity.
type security struct {
	// hashes holds each user's password as the client sends it: bcrypt
	// with the client's fixed salt.
	hashes map[string][]byte
	// secret signs session tokens, so a token is valid only for the user
	// and server it was issued to.
	secret [32]byte
}

func newSecurity(cfg *Security) (*security, error) {
	sec := &security{hashes: make(map[string][]byte, len(cfg.Users))}
	for user, pw := range cfg.Users {
		h, err := bcrypt.Hash(pw, clientPasswordHashing)
		if err != nil {
			return nil, fmt.Errorf("aerofake: hashing the password of %q: %w", user, err)
		}
		sec.hashes[user] = []byte(h)
	}
	if _, err := rand.Read(sec.secret[:]); err != nil {
		return nil, fmt.Errorf("aerofake: session secret: %w", err)
	}
	return sec, nil
}

func (sec *security) token(user string) []byte {
	m := hmac.New(sha256.New, sec.secret[:])
	m.Write([]byte(user))
	return m.Sum(nil)
}

// adminFields parses the fields of an admin request body; nil when they
// are malformed.
func adminFields(body []byte) map[byte][]byte {
	if len(body) < adminHeaderSize {
		return nil
	}
	n := int(body[3])
	fields := make(map[byte][]byte, n)
	rest := body[adminHeaderSize:]
	for range n {
		if len(rest) < 5 {
			return nil
		}
		size := int(binary.BigEndian.Uint32(rest))
		if size < 1 || size-1 > len(rest)-5 {
			return nil
		}
		fields[rest[4]] = rest[5 : 4+size]
		rest = rest[4+size:]
	}
	return fields
}

// answer handles one admin request of an Enterprise server with security
// enabled: the result code and, for a login, the session fields.
func (sec *security) answer(body []byte) (ResultCode, []adminField) {
	fields := adminFields(body)
	if fields == nil {
		return ParameterError, nil
	}
	user := string(fields[adminFieldUser])
	switch body[2] {
	case adminCmdLogin:
		want, ok := sec.hashes[user]
		if !ok || !hmac.Equal(want, fields[adminFieldCredential]) {
			return InvalidCredential, nil
		}
		ttl := binary.BigEndian.AppendUint32(nil, sessionTTLSeconds)
		return OK, []adminField{{adminFieldSessionTok, sec.token(user)}, {adminFieldSessionTTL, ttl}}
	case adminCmdAuthenticate:
		if _, ok := sec.hashes[user]; !ok || !hmac.Equal(sec.token(user), fields[adminFieldSessionTok]) {
			return NotAuthenticated, nil
		}
		return OK, nil
	}
	return UnsupportedFeature, nil
}

type adminField struct {
	id   byte
	data []byte
}
