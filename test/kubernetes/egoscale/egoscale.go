// Package v3 stands in for Exoscale's API client, github.com/exoscale/egoscale/v3,
// which the Go module proxy does not serve. external-dns's exoscale provider
// is its only user in test/kubernetes: this package declares what that
// provider refers to, so that external-dns's main package builds, and
// NewClient fails, so that --provider=exoscale says it is not in this build.
// The pipeline test runs --provider=coredns.
package v3

import (
	"context"
	"errors"

	"github.com/exoscale/egoscale/v3/credentials"
)

// errNotBuilt is what every call returns.
var errNotBuilt = errors.New("the exoscale provider is not in this build of external-dns: its API client is a stub (see test/kubernetes)")

// UUID identifies a domain or a record.
type UUID string

// Endpoint is the API's URL.
type Endpoint string

// DNSDomain is a zone.
type DNSDomain struct {
	ID          UUID
	UnicodeName string
}

// DNSDomainRecordType is a record's type.
type DNSDomainRecordType string

// DNSDomainRecord is a record of a zone.
type DNSDomainRecord struct {
	ID      UUID
	Name    string
	Type    DNSDomainRecordType
	Content string
	Ttl     int64
}

// CreateDNSDomainRecordRequestType is the type of a record to create.
type CreateDNSDomainRecordRequestType string

// CreateDNSDomainRecordRequest is a record to create.
type CreateDNSDomainRecordRequest struct {
	Name    string
	Type    CreateDNSDomainRecordRequestType
	Content string
	Ttl     int64
}

// UpdateDNSDomainRecordRequest is a record's new content.
type UpdateDNSDomainRecordRequest struct {
	Content string
	Ttl     int64
}

// ListDNSDomainsResponse lists zones.
type ListDNSDomainsResponse struct {
	DNSDomains []DNSDomain
}

// ListDNSDomainRecordsResponse lists a zone's records.
type ListDNSDomainRecordsResponse struct {
	DNSDomainRecords []DNSDomainRecord
}

// OperationState is the state of an asynchronous operation.
type OperationState string

// OperationStateSuccess is a finished operation's state.
const OperationStateSuccess OperationState = "success"

// Operation is an asynchronous operation.
type Operation struct{}

// ClientOpt configures a Client.
type ClientOpt func(*Client) error

// ClientOptWithEndpoint sets the API's URL.
func ClientOptWithEndpoint(Endpoint) ClientOpt { return func(*Client) error { return nil } }

// Client is an API client. NewClient never returns one.
type Client struct{}

// NewClient fails: the API client is not in this build.
func NewClient(*credentials.Credentials, ...ClientOpt) (*Client, error) { return nil, errNotBuilt }

// ListDNSDomains fails.
func (*Client) ListDNSDomains(context.Context) (*ListDNSDomainsResponse, error) {
	return nil, errNotBuilt
}

// ListDNSDomainRecords fails.
func (*Client) ListDNSDomainRecords(context.Context, UUID) (*ListDNSDomainRecordsResponse, error) {
	return nil, errNotBuilt
}

// CreateDNSDomainRecord fails.
func (*Client) CreateDNSDomainRecord(context.Context, UUID, CreateDNSDomainRecordRequest) (*Operation, error) {
	return nil, errNotBuilt
}

// DeleteDNSDomainRecord fails.
func (*Client) DeleteDNSDomainRecord(context.Context, UUID, UUID) (*Operation, error) {
	return nil, errNotBuilt
}

// UpdateDNSDomainRecord fails.
func (*Client) UpdateDNSDomainRecord(context.Context, UUID, UUID, UpdateDNSDomainRecordRequest) (*Operation, error) {
	return nil, errNotBuilt
}

// Wait fails.
func (*Client) Wait(context.Context, *Operation, ...OperationState) (*Operation, error) {
	return nil, errNotBuilt
}
