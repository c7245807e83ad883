package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// HashPassword hashes a password with bcrypt; "" (no password) stays "".
func HashPassword(password string) (string, error) {
	if password == "" {
		return "", nil
	}
	if len(password) > 72 {
		return "", errors.New("password is longer than 72 bytes")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	return string(h), err
}

// CheckPassword reports whether password matches hash. A user with no
// password ("" hash) logs in with an empty password only.
func CheckPassword(hash, password string) bool {
	if hash == "" {
		return password == ""
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

var (
	dummyOnce sync.Once
	dummyHash []byte
)

// WasteTime spends as long as checking a real password, so a login for an
// unknown user cannot be told apart by its timing.
func WasteTime(password string) {
	dummyOnce.Do(func() { dummyHash, _ = bcrypt.GenerateFromPassword([]byte("resolute"), bcrypt.DefaultCost) })
	bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
}

// NewToken returns a new random session token and the hash to store.
func NewToken() (token string, hash []byte) {
	b := make([]byte, 32)
	rand.Read(b)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token)
}

// HashToken is what the database keeps of a token.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}
