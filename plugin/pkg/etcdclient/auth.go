package etcdclient

import (
	"context"
	"errors"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
)

// authenticate is the gRPC method that logs in.
const authenticate = "/etcdserverpb.Auth/Authenticate"

// tokenCredentials sends the client's auth token with every request but
// the login: etcd 3.4 refuses a login that carries a token it no longer
// knows (etcd-io/etcd#12165), which is what etcd's own client sends when
// it logs in again after the token expired or its user was re-created.
type tokenCredentials struct{ c *Client }

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (t tokenCredentials) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	if ri, ok := credentials.RequestInfoFromContext(ctx); ok && ri.Method == authenticate {
		return nil, nil
	}
	if token := t.c.currentToken(); token != "" {
		return map[string]string{rpctypes.TokenFieldNameGRPC: token}, nil
	}
	return nil, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials: Check
// has refused credentials over an unencrypted endpoint unless allowed.
func (tokenCredentials) RequireTransportSecurity() bool { return false }

// unary is the client's interceptor of requests: it gives a request
// without a deadline Timeout (the etcd plugin asks a lease's time to live
// without one), logs in before the first request, and again when etcd
// refuses the token, then asks once more; it notes each answer.
func (c *Client) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, Timeout)
		defer cancel()
	}
	if c.cfg.Username == "" || method == authenticate {
		err := invoker(ctx, method, req, reply, cc, opts...)
		c.answered(err)
		return err
	}
	token := c.token.Load()
	if token == nil {
		if err := c.login(ctx, nil); err != nil {
			return err
		}
		token = c.token.Load()
	}
	err := invoker(ctx, method, req, reply, cc, opts...)
	c.answered(err)
	if !tokenRefused(err) && !(*token == "" && userRefused(err)) {
		return err
	}
	if err := c.login(ctx, token); err != nil {
		return err
	}
	err = invoker(ctx, method, req, reply, cc, opts...)
	c.answered(err)
	return err
}

// stream is the client's interceptor of streams (watches): etcd checks the
// token when a watch starts, and then no more, so a new stream logs in
// first, with a fresh token. Each message received is noted as an answer.
func (c *Client) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if c.cfg.Username != "" {
		if err := c.login(ctx, c.token.Load()); err != nil {
			return nil, err
		}
	}
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, err
	}
	return heardStream{s, c}, nil
}

// heardStream notes each message received on a stream as an answer.
type heardStream struct {
	grpc.ClientStream
	c *Client
}

// RecvMsg implements grpc.ClientStream.
func (s heardStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err == nil {
		s.c.hear()
	}
	return err
}

// tokenRefused reports whether err says the token is no longer valid.
func tokenRefused(err error) bool {
	err = rpctypes.Error(err)
	return errors.Is(err, rpctypes.ErrInvalidAuthToken) || errors.Is(err, rpctypes.ErrAuthOldRevision) || errors.Is(err, rpctypes.ErrUserEmpty)
}

// userRefused reports whether err says the request has no user etcd
// knows: after a login while auth was disabled (no token), once it is
// enabled.
func userRefused(err error) bool {
	err = rpctypes.Error(err)
	return errors.Is(err, rpctypes.ErrUserNotFound) || errors.Is(err, rpctypes.ErrPermissionDenied)
}

// answered notes an answer from etcd: err is nil or an error etcd sent,
// not one of an unreachable, leaderless or silent cluster.
func (c *Client) answered(err error) {
	if err == nil {
		c.hear()
		return
	}
	switch status.Code(err) {
	case codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied,
		codes.FailedPrecondition, codes.OutOfRange, codes.Unauthenticated, codes.ResourceExhausted:
		c.hear()
	}
}
