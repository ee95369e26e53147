package oauth2

import (
	jose "github.com/go-jose/go-jose/v4"

	"github.com/breadai/bread/extensions/auth/jwt"
)

// parseSigned parses a compact JWS allowing only the asymmetric algorithms
// bread verifies.
func parseSigned(raw string) (*jose.JSONWebSignature, error) {
	var algs []jose.SignatureAlgorithm
	for _, a := range jwt.AsymmetricAlgorithms() {
		algs = append(algs, jose.SignatureAlgorithm(a))
	}
	jws, err := jose.ParseSignedCompact(raw, algs)
	if err != nil {
		return nil, err
	}
	return jws, nil
}
