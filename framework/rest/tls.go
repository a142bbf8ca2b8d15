package rest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// keyPair loads the PEM key store: one file (or inline text) holding the
// private key and the certificate chain, as Kafka's PEM key store type.
func (t TLSConfig) keyPair() (*tls.Certificate, error) {
	if t.KeystoreType != "" && !strings.EqualFold(t.KeystoreType, "PEM") {
		return nil, fmt.Errorf("ssl.keystore.type=%s is not supported; use PEM", t.KeystoreType)
	}
	var certPEM, keyPEM []byte
	switch {
	case t.KeystoreLocation != "":
		b, err := os.ReadFile(t.KeystoreLocation)
		if err != nil {
			return nil, fmt.Errorf("ssl.keystore.location: %w", err)
		}
		certPEM, keyPEM = b, b
	case t.KeystoreKey != "" || t.KeystoreCertificateChain != "":
		certPEM, keyPEM = []byte(t.KeystoreCertificateChain), []byte(t.KeystoreKey)
	default:
		return nil, nil
	}
	if t.KeyPassword != "" || hasBlock(keyPEM, "ENCRYPTED PRIVATE KEY") {
		return nil, errors.New("encrypted private keys (ssl.key.password) are not supported; store the key unencrypted with file permissions 0600")
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// The error text of crypto/tls names the missing part, never key bytes.
		return nil, fmt.Errorf("ssl.keystore: %w", err)
	}
	return &c, nil
}

func hasBlock(b []byte, typ string) bool {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return false
		}
		if blk.Type == typ {
			return true
		}
	}
}

// trustPool loads the PEM trust store; nil when none is configured.
func (t TLSConfig) trustPool() (*x509.CertPool, error) {
	if t.TruststoreType != "" && !strings.EqualFold(t.TruststoreType, "PEM") {
		return nil, fmt.Errorf("ssl.truststore.type=%s is not supported; use PEM", t.TruststoreType)
	}
	var b []byte
	switch {
	case t.TruststoreLocation != "":
		var err error
		if b, err = os.ReadFile(t.TruststoreLocation); err != nil {
			return nil, fmt.Errorf("ssl.truststore.location: %w", err)
		}
	case t.TruststoreCertificates != "":
		b = []byte(t.TruststoreCertificates)
	default:
		return nil, nil
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(b) {
		return nil, errors.New("ssl.truststore: no PEM certificates found")
	}
	return p, nil
}

// serverConfig builds the https listeners' TLS config; nil when no https
// listener is configured.
func (t TLSConfig) serverConfig(needTLS bool) (*tls.Config, error) {
	if !needTLS {
		return nil, nil
	}
	kp, err := t.keyPair()
	if err != nil {
		return nil, err
	}
	if kp == nil {
		return nil, errors.New("an https listener needs a key store: set listeners.https.ssl.keystore.location (PEM key and certificate chain)")
	}
	pool, err := t.trustPool()
	if err != nil {
		return nil, err
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{*kp}, ClientCAs: pool}
	switch strings.ToLower(t.ClientAuth) {
	case "", "none":
		c.ClientAuth = tls.NoClientCert
	case "requested":
		c.ClientAuth = tls.VerifyClientCertIfGiven
	case "required":
		c.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, fmt.Errorf("ssl.client.auth=%s: want none, requested or required", t.ClientAuth)
	}
	if c.ClientAuth != tls.NoClientCert && pool == nil {
		return nil, fmt.Errorf("ssl.client.auth=%s needs a trust store of client CAs (ssl.truststore.location)", t.ClientAuth)
	}
	return c, nil
}

// ClientConfig is the TLS config for calls to other workers (forwarding,
// and the herder's internal requests through client.Peer): their
// certificates are checked against the trust store (system roots when
// none), and the key store is offered as the client certificate.
func (t TLSConfig) ClientConfig() (*tls.Config, error) {
	pool, err := t.trustPool()
	if err != nil {
		return nil, err
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	kp, err := t.keyPair()
	if err != nil {
		return nil, err
	}
	if kp != nil {
		c.Certificates = []tls.Certificate{*kp}
	}
	return c, nil
}
