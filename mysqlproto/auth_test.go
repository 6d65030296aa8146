package mysqlproto

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"testing"
)

func seqScramble() []byte {
	s := make([]byte, 20)
	for i := range s {
		s[i] = byte(i + 1)
	}
	return s
}

// Expected values computed independently with Python's hashlib.
func TestNativeToken(t *testing.T) {
	s := seqScramble()
	got := hex.EncodeToString(NativeToken(s, []byte("secret")))
	if want := "b32bb3a583e1340c0a1108d58b1be49781ad8c2f"; got != want {
		t.Fatalf("NativeToken = %s, want %s", got, want)
	}
	if NativeToken(s, nil) != nil {
		t.Fatal("empty password must give an empty token")
	}
	stage1 := PasswordStage1([]byte("secret"))
	token := NativeTokenFromStage1(s, stage1)
	if !VerifyNativeStage1(s, token, stage1) {
		t.Fatal("VerifyNativeStage1 rejected a good token")
	}
	if VerifyNativeStage1(NewScramble(), token, stage1) {
		t.Fatal("VerifyNativeStage1 accepted a token for another scramble")
	}
	if !VerifyNativeStage1(s, nil, nil) || VerifyNativeStage1(s, token, nil) {
		t.Fatal("empty stored password must accept exactly an empty token")
	}
	rec, ok := RecoverNativeStage1(s, token, PasswordStage2(stage1))
	if !ok || hex.EncodeToString(rec) != hex.EncodeToString(stage1) {
		t.Fatal("RecoverNativeStage1 failed")
	}
	token[0] ^= 1
	if _, ok := RecoverNativeStage1(s, token, PasswordStage2(stage1)); ok {
		t.Fatal("RecoverNativeStage1 accepted a wrong token")
	}
}

func TestCachingSha2Token(t *testing.T) {
	s := seqScramble()
	tok := CachingSha2Token(s, []byte("secret"))
	if got, want := hex.EncodeToString(tok), "746ebe205d56a0707acb3e796e834e0dd7b1d61743b26bd5202c7a623230c7c9"; got != want {
		t.Fatalf("CachingSha2Token = %s, want %s", got, want)
	}
	p2 := sha256twice([]byte("secret"))
	if !VerifyCachingSha2(s, tok, p2) {
		t.Fatal("VerifyCachingSha2 rejected a good token")
	}
	tok[3] ^= 0x40
	if VerifyCachingSha2(s, tok, p2) {
		t.Fatal("VerifyCachingSha2 accepted a bad token")
	}
}

func TestEncryptPassword(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	s := seqScramble()
	enc, err := EncryptPassword([]byte("secret"), s, pemKey)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := rsa.DecryptOAEP(sha1.New(), nil, key, enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range plain {
		plain[i] ^= s[i%len(s)]
	}
	if string(plain) != "secret\x00" {
		t.Fatalf("decrypted %q", plain)
	}
}

func TestNewScramble(t *testing.T) {
	for range 100 {
		for _, c := range NewScramble() {
			if c == 0 || c == '$' || c > 127 {
				t.Fatalf("bad scramble byte %d", c)
			}
		}
	}
}

func TestAuthSwitchRoundTrip(t *testing.T) {
	req := AuthSwitchRequest{Plugin: AuthNativePassword, Data: seqScramble()}
	got, ok := ParseAuthSwitchRequest(req.Append(nil))
	if !ok || got.Plugin != req.Plugin || string(got.Data) != string(req.Data) {
		t.Fatalf("round trip: %+v %v", got, ok)
	}
	for _, bad := range [][]byte{{}, {0xfe}, {0xfe, 'a'}, {0x00}} {
		if _, ok := ParseAuthSwitchRequest(bad); ok {
			t.Fatalf("accepted %x", bad)
		}
	}
}

func sha256twice(b []byte) []byte {
	h1 := sha256Sum(b)
	return sha256Sum(h1)
}
