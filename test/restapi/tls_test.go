package restapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/rest/client"
	"github.com/connectd/connectd/internal/kafkatest"
)

type ca struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T, cn string) *ca {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &ca{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// leaf issues a PEM key store (key + certificate) valid for 127.0.0.1 as
// both server and client, as a worker needs for mTLS between workers.
func (c *ca) leaf(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalPKCS8PrivateKey(key)
	return append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
}

// TestMutualTLSClusterOnWorkers runs two workers with https listeners that
// require client certificates; a write through either worker is forwarded
// to the leader over mTLS, and clients without a trusted certificate are
// refused at the handshake.
func TestMutualTLSClusterOnWorkers(t *testing.T) {
	dir := t.TempDir()
	root := newCA(t, "connectd-test-ca")
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	workerKS := write("worker.pem", root.leaf(t, "worker"))
	extra := map[string]string{
		"listeners.https.ssl.keystore.type":       "PEM",
		"listeners.https.ssl.keystore.location":   workerKS,
		"listeners.https.ssl.truststore.type":     "PEM",
		"listeners.https.ssl.truststore.location": write("ca.pem", root.pem),
		"listeners.https.ssl.client.auth":         "required",
	}
	opsKS := root.leaf(t, "ops")
	kp, err := tls.X509KeyPair(opsKS, opsKS)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(root.pem)
	c := newClusterTLS(t, 2, extra, &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{kp}, MinVersion: tls.VersionTLS12})
	ctx := context.Background()

	cfg := map[string]string{"connector.class": datagenClass, "tasks.max": "2", "kafka.topic": kafkatest.Topic(t), "max.interval": "50"}
	for i := range c.workers {
		name := "tls-" + string(rune('a'+i))
		if _, err := c.client(i).Create(ctx, name, cfg, ""); err != nil {
			t.Fatalf("create through worker %d: %v", i, err)
		}
	}
	for i := range c.workers {
		waitState(t, c.client(0), "tls-"+string(rune('a'+i)), "RUNNING", 2, "RUNNING")
	}
	if names, err := c.client(1).Connectors(ctx); err != nil || len(names) != 2 {
		t.Fatalf("list: %v %v", names, err)
	}

	// No client certificate, or one from another CA: the handshake fails.
	for _, tc := range []struct {
		name string
		conf *tls.Config
	}{
		{"no client certificate", &tls.Config{RootCAs: pool}},
		{"untrusted client certificate", func() *tls.Config {
			other := newCA(t, "rogue").leaf(t, "mallory")
			kp, _ := tls.X509KeyPair(other, other)
			return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{kp}}
		}()},
	} {
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tc.conf}, Timeout: 10 * time.Second}
		cl, _ := client.New(c.workers[0].url, client.WithHTTPClient(hc), client.WithBasicAuth(user, password))
		if _, err := cl.Connectors(ctx); err == nil {
			t.Fatalf("%s: request succeeded", tc.name)
		}
	}
	// Plain http to the https port is not served.
	cl, _ := client.New("http"+c.workers[0].url[len("https"):], client.WithBasicAuth(user, password))
	if names, err := cl.Connectors(ctx); err == nil {
		t.Fatalf("plain http answered: %v", names)
	}
}
