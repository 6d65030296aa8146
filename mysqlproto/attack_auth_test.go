package mysqlproto

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"testing"
)

// TestEncryptPasswordEmptyScramble: a server whose auth switch carries no
// scramble, then asks for the password under its RSA key, gets an error
// from the internal client, not a division by zero.
func TestEncryptPasswordEmptyScramble(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	sw, ok := ParseAuthSwitchRequest([]byte{AuthSwitchRequestHeader, 'c', 0})
	if !ok || len(sw.Data) != 0 {
		t.Fatalf("auth switch without data: %+v %v", sw, ok)
	}
	if _, err := EncryptPassword([]byte("secret"), sw.Data, pemKey); err == nil {
		t.Fatal("encrypted a password with an empty scramble")
	}
}
