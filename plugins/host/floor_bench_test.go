package host_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkTransportFloor moves 1 KiB records in 1 MiB writes over a Unix
// socket, with and without TLS 1.3 (what AutoMTLS negotiates), both ends in
// this process: the cost below which no gRPC-over-TLS boundary can go on
// this machine. Compare its cpu-ns/record with BenchmarkBoundary's.
func BenchmarkTransportFloor(b *testing.B) {
	for _, useTLS := range []bool{false, true} {
		name := "unix"
		if useTLS {
			name = "unix+tls"
		}
		b.Run(name, func(b *testing.B) {
			sock := filepath.Join(b.TempDir(), "s")
			ln, err := net.Listen("unix", sock)
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			var srvCfg, cliCfg *tls.Config
			if useTLS {
				srvCfg, cliCfg = tlsPair(b)
				ln = tls.NewListener(ln, srvCfg)
			}
			done := make(chan int64)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					done <- 0
					return
				}
				n, _ := io.Copy(io.Discard, c)
				done <- n
			}()
			var c net.Conn
			c, err = net.Dial("unix", sock)
			if err != nil {
				b.Fatal(err)
			}
			if useTLS {
				c = tls.Client(c, cliCfg)
			}
			buf := make([]byte, 1<<20)
			b.SetBytes(1024)
			b.ResetTimer()
			cpu := startCPU(0)
			for i := 0; i < b.N; i += 1024 {
				if _, err := c.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			c.Close()
			<-done
			cpu.report(b)
		})
	}
}

func tlsPair(b *testing.B) (srv, cli *tls.Config) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		b.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, MinVersion: tls.VersionTLS12},
		&tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
}
