// Package testca makes a throwaway certificate authority and a server
// certificate it signs for loopback (127.0.0.1, ::1, localhost), for tests
// that run a TLS server and a client which must trust it through its CA
// alone, as a company CA is trusted in production.
package testca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority and the loopback server certificate it
// signed, each in PEM.
type CA struct {
	CertPEM           []byte // the CA's certificate: what a client trusts
	ServerPEM, KeyPEM []byte // the server's certificate and key
	Pool              *x509.CertPool
	ServerCertificate tls.Certificate
}

// New makes a CA valid for a day and a server certificate it signs.
func New() (*CA, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "watchdogd test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("server certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	ca := &CA{CertPEM: pemBlock("CERTIFICATE", caDER), ServerPEM: pemBlock("CERTIFICATE", der),
		KeyPEM: pemBlock("PRIVATE KEY", keyDER), Pool: x509.NewCertPool()}
	ca.Pool.AddCert(caCert)
	if ca.ServerCertificate, err = tls.X509KeyPair(ca.ServerPEM, ca.KeyPEM); err != nil {
		return nil, err
	}
	return ca, nil
}

// ServerConfig is a TLS server configuration presenting the server
// certificate.
func (ca *CA) ServerConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{ca.ServerCertificate}, MinVersion: tls.VersionTLS12}
}

// Write writes ca.crt, server.crt and server.key into dir and returns their
// paths in that order.
func (ca *CA) Write(dir string) (caFile, certFile, keyFile string, err error) {
	caFile, certFile, keyFile = filepath.Join(dir, "ca.crt"), filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	for _, f := range []struct {
		path string
		b    []byte
	}{{caFile, ca.CertPEM}, {certFile, ca.ServerPEM}, {keyFile, ca.KeyPEM}} {
		if err = os.WriteFile(f.path, f.b, 0o644); err != nil {
			return "", "", "", err
		}
	}
	return caFile, certFile, keyFile, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
