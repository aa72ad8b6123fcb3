// Command jwtcheck is test tooling for the natsauth library: it runs the
// reference implementation (github.com/nats-io/jwt/v2 and
// github.com/nats-io/nkeys, the code nats-server itself uses) on what the C++
// side produces, and produces tokens for the C++ side to decode. It is never
// part of the product.
//
// Secrets (seeds) arrive on stdin, never on the command line.
//
//	jwtcheck pubkey                  stdin: an encoded seed; prints its public key
//	jwtcheck sign                    stdin: {"seed":S,"message":base64url}; prints the base64url signature
//	jwtcheck verify PUBLIC           stdin: {"message":base64url,"signature":base64url}; exit 0 when valid
//	jwtcheck user ISSUER             stdin: a user JWT; decodes, validates, prints the claims as JSON
//	jwtcheck response ISSUER         stdin: an authorization response JWT; the same
//	jwtcheck request ISSUER          stdin: an authorization request JWT; the same
//	jwtcheck operator ISSUER         stdin: an operator JWT; the same, and it must be self-signed
//	jwtcheck account ISSUER          stdin: an account JWT; the same
//	jwtcheck delete ISSUER           stdin: a $SYS.REQ.CLAIMS.DELETE body, read as nats-server
//	                                 reads it (jwt.DecodeGeneric, self-signed); prints its claims
//	jwtcheck chain                   stdin: {"operator":JWT,"accounts":[JWT...],"users":[JWT...]};
//	                                 checks trust as the server does: the operator signed every
//	                                 account, and each user's account (issuer_account, or else
//	                                 its issuer) is one of them and signed it (its key or a
//	                                 listed signing key); prints "ok"
//	jwtcheck encode-user             stdin: {"seed":S,"claims":{...}}; prints a user JWT
//	jwtcheck encode-request          stdin: {"seed":S,"claims":{...}}; prints an authorization request JWT
//
// A decode prints {"claims":<the claims as jwt/v2 marshals them>,
// "text":<the same claims as JSON text, for a byte-exact comparison>,
// "jti":<the jti jwt/v2 computes for these claims>}. Any failure exits 1
// with the reason on stderr.
package main

import (
	"crypto/sha512"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: jwtcheck pubkey|sign|verify|user|response|request|operator|account|delete|chain|encode-user|encode-request [ISSUER]"))
	}
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	input := strings.TrimSpace(string(in))
	arg := ""
	if len(os.Args) > 2 {
		arg = os.Args[2]
	}
	var out string
	switch os.Args[1] {
	case "pubkey":
		out, err = publicKey(input)
	case "sign":
		out, err = sign(input)
	case "verify":
		out, err = verify(arg, input)
	case "user":
		out, err = decode(input, arg, func(t string) (jwt.Claims, error) { return jwt.DecodeUserClaims(t) })
	case "response":
		out, err = decode(input, arg, func(t string) (jwt.Claims, error) { return jwt.DecodeAuthorizationResponseClaims(t) })
	case "request":
		out, err = decode(input, arg, func(t string) (jwt.Claims, error) { return jwt.DecodeAuthorizationRequestClaims(t) })
	case "operator":
		out, err = decode(input, arg, func(t string) (jwt.Claims, error) {
			oc, err := jwt.DecodeOperatorClaims(t)
			if err == nil && !oc.IsSelfSigned() {
				err = errors.New("operator JWT is not self-signed")
			}
			return oc, err
		})
	case "account":
		out, err = decode(input, arg, func(t string) (jwt.Claims, error) { return jwt.DecodeAccountClaims(t) })
	case "delete":
		out, err = decodeDelete(input, arg)
	case "chain":
		out, err = chain(input)
	case "encode-user":
		out, err = encode(input, func(sub string) jwt.Claims { return jwt.NewUserClaims(sub) })
	case "encode-request":
		out, err = encode(input, func(sub string) jwt.Claims { return jwt.NewAuthorizationRequestClaims(sub) })
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
	fmt.Println(out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "jwtcheck:", err)
	os.Exit(1)
}

func publicKey(seed string) (string, error) {
	kp, err := nkeys.FromSeed([]byte(seed))
	if err != nil {
		return "", err
	}
	return kp.PublicKey()
}

func sign(input string) (string, error) {
	var req struct {
		Seed    string `json:"seed"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(input), &req); err != nil {
		return "", err
	}
	msg, err := base64.RawURLEncoding.DecodeString(req.Message)
	if err != nil {
		return "", err
	}
	kp, err := nkeys.FromSeed([]byte(req.Seed))
	if err != nil {
		return "", err
	}
	sig, err := kp.Sign(msg)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(sig), nil
}

func verify(public, input string) (string, error) {
	var req struct {
		Message   string `json:"message"`
		Signature string `json:"signature"`
	}
	if err := json.Unmarshal([]byte(input), &req); err != nil {
		return "", err
	}
	msg, err := base64.RawURLEncoding.DecodeString(req.Message)
	if err != nil {
		return "", err
	}
	sig, err := base64.RawURLEncoding.DecodeString(req.Signature)
	if err != nil {
		return "", err
	}
	kp, err := nkeys.FromPublicKey(public)
	if err != nil {
		return "", err
	}
	if err := kp.Verify(msg, sig); err != nil {
		return "", err
	}
	return "ok", nil
}

// decode runs the reference decoder (header, version, signature, issuer
// prefix), then the claim type's own validation, and checks the issuer.
func decode(token, issuer string, decoder func(string) (jwt.Claims, error)) (string, error) {
	claims, err := decoder(token)
	if err != nil {
		return "", err
	}
	if issuer != "" && claims.Claims().Issuer != issuer {
		return "", fmt.Errorf("issuer %q, want %q", claims.Claims().Issuer, issuer)
	}
	// Time checks count, as they do when the server takes a token.
	vr := jwt.CreateValidationResults()
	claims.Validate(vr)
	if vr.IsBlocking(true) {
		var issues []string
		for _, i := range vr.Issues {
			issues = append(issues, i.Error())
		}
		return "", fmt.Errorf("validation: %s", strings.Join(issues, "; "))
	}
	jti, err := referenceJti(*claims.Claims())
	if err != nil {
		return "", err
	}
	text, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	out, err := json.Marshal(struct {
		Claims jwt.Claims `json:"claims"`
		Text   string     `json:"text"`
		Jti    string     `json:"jti"`
	}{claims, string(text), jti})
	return string(out), err
}

// referenceJti is the jti jwt/v2 gives claims when it encodes them: the
// base32 (no padding) SHA-512/256 of the standard claims' JSON with the jti
// empty. jwt/v2 keeps this unexported, so it is restated here for the test to
// compare with.
func referenceJti(c jwt.ClaimsData) (string, error) {
	c.ID = ""
	j, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	sum := sha512.Sum512_256(j)
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:]), nil
}

// encode starts from the library's constructor (its defaults, e.g. the
// unlimited user limits), overlays the given claims and signs them.
func encode(input string, newClaims func(subject string) jwt.Claims) (string, error) {
	var req struct {
		Seed   string          `json:"seed"`
		Claims json.RawMessage `json:"claims"`
	}
	if err := json.Unmarshal([]byte(input), &req); err != nil {
		return "", err
	}
	var sub struct {
		Subject string `json:"sub"`
	}
	if err := json.Unmarshal(req.Claims, &sub); err != nil {
		return "", err
	}
	claims := newClaims(sub.Subject)
	if claims == nil {
		return "", errors.New("claims need a sub")
	}
	if err := json.Unmarshal(req.Claims, claims); err != nil {
		return "", err
	}
	kp, err := nkeys.FromSeed([]byte(req.Seed))
	if err != nil {
		return "", err
	}
	return claims.Encode(kp)
}

// decodeDelete reads a claims delete request the way nats-server's
// handleDeleteRequest does: a generic JWT, self-signed by the operator key,
// with nats.accounts a list of account keys.
func decodeDelete(token, issuer string) (string, error) {
	gc, err := jwt.DecodeGeneric(token)
	if err != nil {
		return "", err
	}
	if gc.Subject != gc.Issuer {
		return "", errors.New("not self signed")
	}
	if gc.Issuer != issuer {
		return "", fmt.Errorf("issuer %q, want %q", gc.Issuer, issuer)
	}
	list, ok := gc.Data["accounts"].([]any)
	if !ok {
		return "", errors.New("malformed request: no accounts list")
	}
	for _, a := range list {
		if s, ok := a.(string); !ok || !nkeys.IsValidPublicAccountKey(s) {
			return "", fmt.Errorf("malformed request: %v is not an account key", a)
		}
	}
	text, err := json.Marshal(gc)
	if err != nil {
		return "", err
	}
	out, err := json.Marshal(struct {
		Claims *jwt.GenericClaims `json:"claims"`
		Text   string             `json:"text"`
	}{gc, string(text)})
	return string(out), err
}

// chain checks a whole operator-mode trust chain as a server would accept it.
func chain(input string) (string, error) {
	var req struct {
		Operator string   `json:"operator"`
		Accounts []string `json:"accounts"`
		Users    []string `json:"users"`
	}
	if err := json.Unmarshal([]byte(input), &req); err != nil {
		return "", err
	}
	oc, err := jwt.DecodeOperatorClaims(req.Operator)
	if err != nil {
		return "", fmt.Errorf("operator: %w", err)
	}
	if err := validate(oc); err != nil {
		return "", fmt.Errorf("operator: %w", err)
	}
	accounts := map[string]*jwt.AccountClaims{}
	for i, t := range req.Accounts {
		ac, err := jwt.DecodeAccountClaims(t)
		if err != nil {
			return "", fmt.Errorf("account %d: %w", i, err)
		}
		if err := validate(ac); err != nil {
			return "", fmt.Errorf("account %d (%s): %w", i, ac.Name, err)
		}
		if !oc.DidSign(ac) {
			return "", fmt.Errorf("account %d (%s): not signed by the operator", i, ac.Name)
		}
		accounts[ac.Subject] = ac
	}
	for i, t := range req.Users {
		uc, err := jwt.DecodeUserClaims(t)
		if err != nil {
			return "", fmt.Errorf("user %d: %w", i, err)
		}
		if err := validate(uc); err != nil {
			return "", fmt.Errorf("user %d (%s): %w", i, uc.Name, err)
		}
		account := uc.Issuer
		if uc.IssuerAccount != "" {
			account = uc.IssuerAccount
		}
		ac, ok := accounts[account]
		if !ok {
			return "", fmt.Errorf("user %d (%s): account %s is not in the chain", i, uc.Name, account)
		}
		if !ac.DidSign(uc) {
			return "", fmt.Errorf("user %d (%s): not signed by account %s or one of its signing keys", i, uc.Name, ac.Name)
		}
	}
	return "ok", nil
}

func validate(c jwt.Claims) error {
	vr := jwt.CreateValidationResults()
	c.Validate(vr)
	if vr.IsBlocking(true) {
		var issues []string
		for _, i := range vr.Issues {
			issues = append(issues, i.Error())
		}
		return fmt.Errorf("validation: %s", strings.Join(issues, "; "))
	}
	return nil
}
