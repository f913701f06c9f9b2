// Package credentials stands in for egoscale's credentials package: see
// package v3.
package credentials

// Credentials are an API key and secret.
type Credentials struct{}

// NewStaticCredentials returns credentials; the stub keeps nothing.
func NewStaticCredentials(key, secret string) *Credentials { return &Credentials{} }
