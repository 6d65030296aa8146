package mysqlproto

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/pem"
	"errors"
)

// Authentication plugin names.
const (
	AuthNativePassword = "mysql_native_password"
	AuthCachingSha2    = "caching_sha2_password"
	AuthSha256Password = "sha256_password"
	AuthClearPassword  = "mysql_clear_password"
)

// Auth exchange packet headers and caching_sha2_password status bytes.
const (
	AuthSwitchRequestHeader = 0xfe
	AuthMoreDataHeader      = 0x01
	CachingSha2RequestKey   = 0x02 // client asks for the server's RSA key
	CachingSha2FastAuthOK   = 0x03 // server: the cached hash matched
	CachingSha2FullAuth     = 0x04 // server: send the password in full
)

// ScrambleLen is the length of the scramble obgate generates.
const ScrambleLen = 20

// NewScramble returns 20 random bytes in 1..127 without '$', as MySQL
// servers generate them (some clients treat the scramble as a C string).
func NewScramble() []byte {
	s := make([]byte, ScrambleLen)
	FillScramble(s)
	return s
}

// FillScramble fills s with random scramble bytes.
func FillScramble(s []byte) {
	_, _ = rand.Read(s)
	for i := range s {
		s[i] &= 0x7f
		if s[i] == 0 || s[i] == '$' {
			s[i]++
		}
	}
}

// PasswordStage1 is SHA1(password): what ODP stores for its own passwords
// (as 40 hex digits) and what a mysql_native_password client proves it knows.
func PasswordStage1(password []byte) []byte {
	h := sha1.Sum(password)
	return h[:]
}

// PasswordStage2 is SHA1(SHA1(password)): what MySQL stores in mysql.user
// (as '*' and 40 hex digits).
func PasswordStage2(stage1 []byte) []byte {
	h := sha1.Sum(stage1)
	return h[:]
}

// NativeToken computes the mysql_native_password auth response for a
// password: SHA1(pw) XOR SHA1(scramble || SHA1(SHA1(pw))). An empty password
// gives an empty token.
func NativeToken(scramble, password []byte) []byte {
	if len(password) == 0 {
		return nil
	}
	return NativeTokenFromStage1(scramble, PasswordStage1(password))
}

// NativeTokenFromStage1 computes the mysql_native_password auth response
// from SHA1(password) alone, without the plaintext.
func NativeTokenFromStage1(scramble, stage1 []byte) []byte {
	stage2 := sha1.Sum(stage1)
	h := sha1.New()
	h.Write(scrambleBytes(scramble))
	h.Write(stage2[:])
	mix := h.Sum(nil)
	for i := range mix {
		mix[i] ^= stage1[i]
	}
	return mix
}

// RecoverNativeStage1 undoes a mysql_native_password token with the stored
// SHA1(SHA1(password)) and reports whether the token was right. On success
// it returns SHA1(password), which lets a server-side component log in
// elsewhere as the same user.
func RecoverNativeStage1(scramble, token, stage2 []byte) ([]byte, bool) {
	if len(token) != sha1.Size || len(stage2) != sha1.Size {
		return nil, false
	}
	h := sha1.New()
	h.Write(scrambleBytes(scramble))
	h.Write(stage2)
	stage1 := h.Sum(nil)
	for i := range stage1 {
		stage1[i] ^= token[i]
	}
	check := sha1.Sum(stage1)
	if subtle.ConstantTimeCompare(check[:], stage2) != 1 {
		return nil, false
	}
	return stage1, true
}

// VerifyNativeStage1 checks a mysql_native_password token against a known
// SHA1(password). An empty stage1 accepts only an empty token.
func VerifyNativeStage1(scramble, token, stage1 []byte) bool {
	if len(stage1) == 0 {
		return len(token) == 0
	}
	want := NativeTokenFromStage1(scramble, stage1)
	return subtle.ConstantTimeCompare(want, token) == 1
}

// scrambleBytes trims the scramble to the 20 bytes that are hashed.
func scrambleBytes(s []byte) []byte {
	if len(s) > ScrambleLen {
		return s[:ScrambleLen]
	}
	return s
}

// CachingSha2Token computes the caching_sha2_password fast-auth response:
// SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) || scramble).
func CachingSha2Token(scramble, password []byte) []byte {
	if len(password) == 0 {
		return nil
	}
	p1 := sha256.Sum256(password)
	p2 := sha256.Sum256(p1[:])
	h := sha256.New()
	h.Write(p2[:])
	h.Write(scrambleBytes(scramble))
	mix := h.Sum(nil)
	for i := range mix {
		mix[i] ^= p1[i]
	}
	return mix
}

// VerifyCachingSha2 checks a fast-auth token against SHA256(SHA256(pw)).
func VerifyCachingSha2(scramble, token, p2 []byte) bool {
	if len(token) != sha256.Size || len(p2) != sha256.Size {
		return false
	}
	h := sha256.New()
	h.Write(p2)
	h.Write(scrambleBytes(scramble))
	mix := h.Sum(nil)
	for i := range mix {
		mix[i] ^= token[i]
	}
	// mix is now the candidate SHA256(pw); its hash must equal p2.
	check := sha256.Sum256(mix)
	return subtle.ConstantTimeCompare(check[:], p2) == 1
}

// EncryptPassword encrypts password||NUL XOR scramble with the server's RSA
// public key (PEM), as caching_sha2_password and sha256_password do on a
// connection without TLS. Both the key and the scramble come from the
// server; an empty scramble (an auth switch may carry none) is an error,
// not a division by zero.
func EncryptPassword(password, scramble, pemKey []byte) ([]byte, error) {
	if len(scramble) == 0 {
		return nil, errors.New("mysqlproto: no scramble to encrypt the password with")
	}
	block, _ := pem.Decode(pemKey)
	if block == nil {
		return nil, errors.New("mysqlproto: server public key is not PEM")
	}
	parsed, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		rsaKey, err2 := x509.ParsePKCS1PublicKey(block.Bytes)
		if err2 != nil {
			return nil, err
		}
		parsed = rsaKey
	}
	pub, ok := parsed.(*rsa.PublicKey)
	if !ok {
		return nil, errors.New("mysqlproto: server public key is not RSA")
	}
	plain := make([]byte, len(password)+1)
	copy(plain, password)
	s := scrambleBytes(scramble)
	for i := range plain {
		plain[i] ^= s[i%len(s)]
	}
	return rsa.EncryptOAEP(sha1.New(), rand.Reader, pub, plain, nil)
}

// AuthSwitchRequest asks the client to authenticate again with another
// plugin.
type AuthSwitchRequest struct {
	Plugin string
	Data   []byte
}

// ParseAuthSwitchRequest decodes an auth switch request payload (0xfe
// header). Data is borrowed from b, with a trailing NUL removed.
func ParseAuthSwitchRequest(b []byte) (AuthSwitchRequest, bool) {
	if len(b) < 1 || b[0] != AuthSwitchRequestHeader {
		return AuthSwitchRequest{}, false
	}
	if len(b) == 1 {
		// Old-style request for the pre-4.1 password: not supported.
		return AuthSwitchRequest{}, false
	}
	name, pos, ok := ReadNullString(b, 1)
	if !ok {
		return AuthSwitchRequest{}, false
	}
	data := b[pos:]
	if l := len(data); l > 0 && data[l-1] == 0 {
		data = data[:l-1]
	}
	return AuthSwitchRequest{Plugin: string(name), Data: data}, true
}

// Append encodes the request; Data gets the trailing NUL servers send.
func (r AuthSwitchRequest) Append(dst []byte) []byte {
	dst = append(dst, AuthSwitchRequestHeader)
	dst = AppendNullString(dst, r.Plugin)
	dst = append(dst, r.Data...)
	return append(dst, 0)
}
