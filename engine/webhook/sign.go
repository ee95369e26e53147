package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader is the header that carries a delivery's signature:
//
//	Bread-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">
const SignatureHeader = "Bread-Signature"

// Sign returns the SignatureHeader value of body sent at t, keyed by
// secret.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return m.Sum(nil)
}

// ErrBadSignature is wrapped by every refusal of Verify.
var ErrBadSignature = errors.New("webhook: bad signature")

// Verify checks a SignatureHeader value against body: a v1 HMAC keyed by
// secret, made at most tolerance from now (tolerance <= 0 skips the age
// check), so a captured delivery cannot be replayed later. The comparison
// takes constant time. Any failure wraps ErrBadSignature.
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts, sig string
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" {
		return errors.Join(ErrBadSignature, errors.New("webhook: the header needs t=<unix seconds> and v1=<hex>"))
	}
	got, err := hex.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(secret, ts, body)) {
		return ErrBadSignature
	}
	if age := now.Sub(time.Unix(unix, 0)); tolerance > 0 && (age > tolerance || age < -tolerance) {
		return errors.Join(ErrBadSignature, errors.New("webhook: the signature is older than the tolerance"))
	}
	return nil
}
