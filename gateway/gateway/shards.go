package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/shard"
	"github.com/chemmy/chemmy/services/kit/trust"
)

// Sharding (see package shard): table-svc and its shoe-svc may run as
// several shards, shard i at position i of Config.TableAddr and
// Config.ShoeAddr. The gateway routes a call by the id it names:
//
//   - a request with a table_id goes to the table's shard, one with a
//     shoe_id to the shoe's, one naming only a coup_id to the coup's
//     ("s<k>-..." is shard k, an id without a prefix shard 0);
//   - a request that names neither (CreateTable without a prepared shoe,
//     CreateShoe, GetOdds of a composition) goes to the shard picked by a
//     hash of the caller and its request_id, so that a retry lands where
//     the first try did; without a request_id, shard 0;
//   - ListTables, and ListRounds that names no table, ask every shard
//     in turn and page through them (list, fanOuts); a shard that does
//     not answer is skipped and named in the response's unreachable, so
//     one shard down does not take the lobby (or a player's history)
//     down.
//
// WalletService is never sharded: one wallet holds the money.

// Reasons of the gateway's routing errors.
const (
	// ReasonShardNotFound: the id names a shard this gateway does not
	// know (NOT_FOUND).
	ReasonShardNotFound = "SHARD_NOT_FOUND"
	// ReasonPageTokenInvalid: a fan-out's page_token this gateway did not
	// make (INVALID_ARGUMENT).
	ReasonPageTokenInvalid = "PAGE_TOKEN_INVALID"
	// ReasonMalformedRequest: a request message that does not decode
	// (INVALID_ARGUMENT).
	ReasonMalformedRequest = "MALFORMED_REQUEST"
	// ReasonInvalidArgument: a field out of range (INVALID_ARGUMENT), as
	// table-svc answers it.
	ReasonInvalidArgument = "INVALID_ARGUMENT"
)

// splitAddrs reads a comma-separated list of addresses (shard i at
// position i); blanks around commas are ignored, an empty item is an
// error.
func splitAddrs(list string) ([]string, error) {
	var out []string
	for _, a := range strings.Split(list, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			return nil, fmt.Errorf("empty address in %q", list)
		}
		out = append(out, a)
	}
	return out, nil
}

// pick returns the backend of svc that serves the call whose first
// request message is first (nil when the client sent none) and whose
// request descriptor is in (nil when unknown).
func pick(shards []*backend, in protoreflect.MessageDescriptor, c auth.Caller, first *frame) (*backend, error) {
	if len(shards) == 1 {
		return shards[0], nil
	}
	if first == nil || in == nil {
		return shards[0], nil
	}
	m := dynamicpb.NewMessage(in)
	if err := proto.Unmarshal(first.data, m); err != nil {
		return nil, errs.New(codes.InvalidArgument, Domain, ReasonMalformedRequest, "malformed %s: %v", in.FullName(), err)
	}
	for _, name := range []protoreflect.Name{"table_id", "shoe_id", "coup_id"} {
		if id := stringField(m, name); id != "" {
			k, ok := shard.Of(id)
			if !ok || k >= len(shards) {
				return nil, errs.New(codes.NotFound, Domain, ReasonShardNotFound,
					"%s %q names no shard of this deployment (%d shards)", name, id, len(shards))
			}
			return shards[k], nil
		}
	}
	if rid := stringField(m, "request_id"); rid != "" {
		// The same on every gateway replica: a retry through another one
		// lands on the same shard.
		h := sha256.Sum256([]byte(string(c.Role) + "\x00" + c.Subject + "\x00" + rid))
		return shards[binary.BigEndian.Uint64(h[:8])%uint64(len(shards))], nil
	}
	return shards[0], nil
}

// stringField is m's singular string field name, "" when m has none.
func stringField(m protoreflect.Message, name protoreflect.Name) string {
	fd := m.Descriptor().Fields().ByName(name)
	if fd == nil || fd.Kind() != protoreflect.StringKind || fd.Cardinality() == protoreflect.Repeated {
		return ""
	}
	return m.Get(fd).String()
}

// outgoing is ctx with the metadata a backend call carries: the client's
// forwardable metadata and the caller, as an assertion signed for be (or
// plain metadata in insecure mode).
func (p *proxy) outgoing(ctx context.Context, c auth.Caller, be *backend) (context.Context, error) {
	out := forwardMD(ctx)
	if p.signer == nil {
		out.Set(auth.MDSubject, c.Subject)
		out.Set(auth.MDRole, string(c.Role))
		if c.Session != "" {
			out.Set(auth.MDSession, c.Session)
		}
		if c.Operator != "" {
			out.Set(auth.MDOperator, c.Operator)
		}
	} else {
		a, err := p.signer.Assert(c, be.identity)
		if err != nil {
			p.log.Error("cannot sign the caller assertion", "err", err)
			return nil, status.Error(codes.Internal, "cannot sign the caller assertion")
		}
		out.Set(trust.MDAssertion, a)
	}
	return metadata.NewOutgoingContext(ctx, out), nil
}

// fanOut says how a List method is answered over every shard: its
// request and response types. Each response has one repeated message
// field (the items), next_page_token and unreachable; each request has
// page_size and page_token (AIP-158).
type fanOut struct {
	req, resp func() proto.Message
	// sharded reports whether the request is answered by every shard;
	// false: it names its shard (pick routes it).
	sharded func(proto.Message) bool
}

// fanOuts are the List methods answered over every table shard:
// ListTables always, ListRounds unless it names a table (a player's
// rounds, or all of them, are on every shard his tables are).
var fanOuts = map[string]fanOut{
	tablev1.TableService_ListTables_FullMethodName: {
		req:     func() proto.Message { return new(tablev1.ListTablesRequest) },
		resp:    func() proto.Message { return new(tablev1.ListTablesResponse) },
		sharded: func(proto.Message) bool { return true },
	},
	tablev1.TableService_ListRounds_FullMethodName: {
		req:  func() proto.Message { return new(tablev1.ListRoundsRequest) },
		resp: func() proto.Message { return new(tablev1.ListRoundsResponse) },
		sharded: func(m proto.Message) bool {
			return m.(*tablev1.ListRoundsRequest).GetTableId() == ""
		},
	},
}

// listFields are the paging fields of a fan-out's messages.
type listFields struct {
	size, token                  protoreflect.FieldDescriptor // request
	items, next, unreachableList protoreflect.FieldDescriptor // response
}

func fieldsOf(req, resp protoreflect.Message) (listFields, error) {
	rf, pf := req.Descriptor().Fields(), resp.Descriptor().Fields()
	f := listFields{size: rf.ByName("page_size"), token: rf.ByName("page_token"),
		next: pf.ByName("next_page_token"), unreachableList: pf.ByName("unreachable")}
	for i := 0; i < pf.Len(); i++ {
		if fd := pf.Get(i); fd.IsList() && fd.Kind() == protoreflect.MessageKind {
			if f.items != nil {
				return f, fmt.Errorf("%s has two repeated message fields", resp.Descriptor().FullName())
			}
			f.items = fd
		}
	}
	if f.size == nil || f.token == nil || f.next == nil || f.unreachableList == nil || f.items == nil {
		return f, fmt.Errorf("%s/%s lack the paging fields", req.Descriptor().FullName(), resp.Descriptor().FullName())
	}
	return f, nil
}

// list answers a fan-out method over every table shard: the shards in
// order, each paged with its own tokens, a page filled from the next shard
// when one runs out (so a page is ordered within each shard, not across
// them). The page token is the gateway's: the shard and that shard's
// token. A shard that does not answer is skipped and named in the
// response's unreachable (AIP-217).
func (p *proxy) list(ss grpc.ServerStream, c auth.Caller, shards []*backend, method string, fo fanOut, req proto.Message) error {
	rm := req.ProtoReflect()
	resp := fo.resp()
	f, err := fieldsOf(rm, resp.ProtoReflect())
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	k, token, err := parsePageToken(rm.Get(f.token).String(), len(shards))
	if err != nil {
		return err
	}
	size := int(rm.Get(f.size).Int())
	if size < 0 || size > maxListPage {
		return errs.New(codes.InvalidArgument, Domain, ReasonInvalidArgument, "page_size must be 0..%d, got %d", maxListPage, size)
	}
	if size == 0 {
		size = defaultListPage
	}
	out := resp.ProtoReflect()
	items := out.Mutable(f.items).List()
	unreachable := out.Mutable(f.unreachableList).List()
	for ; k < len(shards); k, token = k+1, "" {
		be := shards[k]
		ctx, err := p.outgoing(ss.Context(), c, be)
		if err != nil {
			return err
		}
		sub := proto.Clone(req).ProtoReflect()
		sub.Set(f.size, protoreflect.ValueOfInt32(int32(size-items.Len())))
		sub.Set(f.token, protoreflect.ValueOfString(token))
		data, err := proto.Marshal(sub.Interface())
		if err != nil {
			return err
		}
		got, seen := new(frame), new(atomic.Bool)
		if err := be.conn.Invoke(context.WithValue(ctx, trailerSeenKey{}, seen), method, &frame{data: data}, got); err != nil {
			if err := p.backendErr(be, method, err, seen); errs.Reason(err) != ReasonBackendUnavailable {
				return err
			}
			unreachable.Append(protoreflect.ValueOfString(fmt.Sprintf("shard-%d", k)))
			continue
		}
		page := fo.resp()
		if err := proto.Unmarshal(got.data, page); err != nil {
			return status.Errorf(codes.Internal, "malformed %s from shard %d", out.Descriptor().Name(), k)
		}
		pm := page.ProtoReflect()
		for i, l := 0, pm.Get(f.items).List(); i < l.Len(); i++ {
			items.Append(l.Get(i))
		}
		if next := pm.Get(f.next).String(); next != "" {
			out.Set(f.next, protoreflect.ValueOfString(pageToken(k, next)))
			break
		}
		if items.Len() >= size {
			if k+1 < len(shards) {
				out.Set(f.next, protoreflect.ValueOfString(pageToken(k+1, "")))
			}
			break
		}
	}
	data, err := proto.Marshal(resp)
	if err != nil {
		return err
	}
	return ss.SendMsg(&frame{data: data})
}

// fanOutRequest returns the fan-out of method and its decoded request
// when the call is answered over every shard.
func fanOutRequest(method string, first *frame) (fanOut, proto.Message, bool, error) {
	fo, ok := fanOuts[method]
	if !ok {
		return fo, nil, false, nil
	}
	if first == nil {
		return fo, nil, false, errs.New(codes.InvalidArgument, Domain, ReasonMalformedRequest, "no request for %s", method)
	}
	req := fo.req()
	if err := proto.Unmarshal(first.data, req); err != nil {
		return fo, nil, false, errs.New(codes.InvalidArgument, Domain, ReasonMalformedRequest, "malformed %s: %v",
			req.ProtoReflect().Descriptor().FullName(), err)
	}
	return fo, req, fo.sharded(req), nil
}

// The page sizes of ListTables and ListRounds (table-svc's, kept in step): the default
// when the request gives none, and the largest.
const (
	defaultListPage = 50
	maxListPage     = 100
)

// pageToken is the gateway's page token of a fan-out: shard k, then that
// shard's own token.
func pageToken(k int, inner string) string {
	return "g1." + base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(k)+"\x00"+inner))
}

// parsePageToken reads a token of pageToken; "" is the first page.
func parsePageToken(tok string, shards int) (int, string, error) {
	if tok == "" {
		return 0, "", nil
	}
	bad := errs.New(codes.InvalidArgument, Domain, ReasonPageTokenInvalid, "page_token %q was not made by this gateway (or the shards changed)", tok)
	b64, ok := strings.CutPrefix(tok, "g1.")
	if !ok {
		return 0, "", bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(b64)
	if err != nil {
		return 0, "", bad
	}
	ks, inner, ok := strings.Cut(string(raw), "\x00")
	k, err := strconv.Atoi(ks)
	if !ok || err != nil || k < 0 || k >= shards || strconv.Itoa(k) != ks {
		return 0, "", bad
	}
	return k, inner, nil
}
