package gateway

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"

	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// The HTTP side of the gateway (HTTPAddr): every public RPC as HTTP/JSON.
//
// It is not a second way in. Each HTTP request becomes a gRPC call to this
// same gateway's gRPC server, in process (an in-memory connection), with
// the caller's Authorization header as its "authorization" metadata: the
// same authentication, role policy, abuse limits, forwarding with a signed
// assertion, metrics and logs as a call on the gRPC port, and the same
// errors.
//
// Protocols, on the path /<package>.<Service>/<Method>:
//   - Connect (connectrpc.com): POST with Content-Type application/json
//     (or application/proto) for unary calls, the body the request message
//     in protobuf JSON, the answer the response message; an error is a
//     JSON object {"code","message","details":[{"type","value","debug"}]}
//     whose debug holds the google.rpc.ErrorInfo (its reason) in JSON, with
//     an HTTP status for the code (404 not_found, 409 aborted, 412
//     400 failed_precondition and invalid_argument, 429 resource_exhausted
//     but 413 for a request over the size limit, ...). Connect
//     streaming (application/connect+json) and gRPC-Web are served too.
//   - Newline-delimited JSON for server streams (WatchTable): POST with
//     Content-Type application/json; each message is one line of protobuf
//     JSON, flushed as it comes. An error before the first message is
//     answered like a unary error; after it, as a last line {"error":{...}}
//     with the same object.

// httpServices are the services served over HTTP: the public ones.
var httpServices = []string{gatewayv1.GatewayService_ServiceDesc.ServiceName, tableService, walletService, shoeService}

// ndjsonContentType is the content type of a server stream as lines of
// JSON.
const ndjsonContentType = "application/x-ndjson"

// httpAPI serves the public RPCs over HTTP by calling the gateway's gRPC
// server through conn.
type httpAPI struct {
	conn     *grpc.ClientConn
	log      *slog.Logger
	maxBytes int64
	// streamCtx ends when the gateway stops: open streams are cut then.
	streamCtx context.Context
	mux       *http.ServeMux
	streaming map[string]protoreflect.MethodDescriptor
	// methods: every served method by path, for checkBody.
	methods map[string]protoreflect.MethodDescriptor
}

// inProcess returns an in-memory listener for srv to serve and a client
// connection to it. Its calls have the peer address inProcessAddr.
func inProcess(srv *grpc.Server, maxRecv int) (*grpc.ClientConn, net.Listener, error) {
	lis := bufconn.Listen(1 << 20)
	conn, err := grpc.NewClient("passthrough:///gateway-in-process",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecv), grpc.MaxCallSendMsgSize(maxRecv)),
	)
	if err != nil {
		return nil, nil, err
	}
	return conn, inProcessListener{lis}, nil
}

func newHTTPAPI(ctx context.Context, conn *grpc.ClientConn, files *protoregistry.Files, maxBytes int, log *slog.Logger, extra ...func(*http.ServeMux)) (*httpAPI, error) {
	h := &httpAPI{conn: conn, log: log, maxBytes: int64(maxBytes), streamCtx: ctx, mux: http.NewServeMux(),
		streaming: map[string]protoreflect.MethodDescriptor{}, methods: map[string]protoreflect.MethodDescriptor{}}
	for _, name := range httpServices {
		d, err := files.FindDescriptorByName(protoreflect.FullName(name))
		if err != nil {
			return nil, fmt.Errorf("gateway: http: %s: %w", name, err)
		}
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if !ok {
			return nil, fmt.Errorf("gateway: http: %s is not a service", name)
		}
		for i := 0; i < sd.Methods().Len(); i++ {
			md := sd.Methods().Get(i)
			proc := "/" + name + "/" + string(md.Name())
			h.methods[proc] = md
			opts := []connect.HandlerOption{connect.WithSchema(md), connect.WithRequestInitializer(initRequest),
				connect.WithReadMaxBytes(maxBytes), connect.WithCodec(jsonCodec{"json"}), connect.WithCodec(jsonCodec{"json; charset=utf-8"})}
			switch {
			case md.IsStreamingClient():
				continue // none is public
			case md.IsStreamingServer():
				h.streaming[proc] = md
				h.mux.Handle(proc, connect.NewServerStreamHandler(proc, h.serverStream(md), opts...))
			default:
				h.mux.Handle(proc, connect.NewUnaryHandler(proc, h.unary(md), opts...))
			}
		}
	}
	for _, f := range extra {
		f(h.mux)
	}
	return h, nil
}

// initRequest makes the dynamic request message of the method in spec.
func initRequest(spec connect.Spec, msg any) error {
	md, ok := spec.Schema.(protoreflect.MethodDescriptor)
	m, ok2 := msg.(*dynamicpb.Message)
	if !ok || !ok2 {
		return fmt.Errorf("gateway: http: no schema for %s", spec.Procedure)
	}
	*m = *dynamicpb.NewMessage(md.Input())
	return nil
}

func (h *httpAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if md, ok := h.methods[r.URL.Path]; ok && r.Method == http.MethodPost {
		if kind := bodyKind(r.Header.Get("Content-Type")); kind != "" {
			body, err := h.readBody(w, r)
			if errors.Is(err, errBodyTimeout) {
				// The client trickles: 408, and the connection closed.
				w.Header().Set("Connection", "close")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusRequestTimeout)
				_, _ = w.Write(errorJSON(connect.NewError(connect.CodeDeadlineExceeded, err)))
				return
			}
			if err != nil {
				writeError(w, connectError(err))
				return
			}
			if err := checkBody(md, kind, body); err != nil {
				writeError(w, connectError(err))
				return
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
	}
	if md, ok := h.streaming[r.URL.Path]; ok && r.Method == http.MethodPost && bodyKind(r.Header.Get("Content-Type")) == "json" {
		h.ndjson(w, r, md)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// readBody reads r's whole body, at most maxBytes: as it is, or
// decompressed (Content-Encoding gzip, the one Connect takes), the
// encoding then removed from r's headers, so that checkBody sees the
// message and Connect and the stream of lines read it plain. Errors:
// RESOURCE_EXHAUSTED REQUEST_TOO_LARGE (HTTP 413, no RetryInfo) for a
// body (or a decompressed one) over maxBytes, errBodyTimeout for one that
// did not arrive within the body timeout (bodyDeadline), INVALID_ARGUMENT
// MALFORMED_REQUEST for one that is not gzip or could not be read, and
// UNIMPLEMENTED for another encoding.
func (h *httpAPI) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	// readErr is the error of a body that could not be read whole: too
	// large, too slow, or another failure (with what to say of it).
	readErr := func(err error, what string) error {
		if mbe := new(http.MaxBytesError); errors.As(err, &mbe) {
			return requestTooLarge("%s: %v", what, err)
		}
		if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("%w: %v", errBodyTimeout, err)
		}
		return errs.New(codes.InvalidArgument, Domain, ReasonMalformedRequest, "%s: %v", what, err)
	}
	raw := http.MaxBytesReader(w, r.Body, h.maxBytes)
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		body, err := io.ReadAll(raw)
		if err != nil {
			return nil, readErr(err, "request body")
		}
		return body, nil
	case "gzip":
		zr, err := gzip.NewReader(raw)
		if err == nil {
			var body []byte
			body, err = io.ReadAll(io.LimitReader(zr, h.maxBytes+1))
			if err == nil && int64(len(body)) > h.maxBytes {
				return nil, requestTooLarge("request body over %d bytes once decompressed", h.maxBytes)
			}
			if err == nil {
				r.Header.Del("Content-Encoding")
				return body, nil
			}
		}
		return nil, readErr(err, "request body (Content-Encoding gzip)")
	default:
		return nil, status.Errorf(codes.Unimplemented, "Content-Encoding %q: only gzip is taken", enc)
	}
}

// bodyKind is "json" or "proto" for the content types of a request
// whose body is one whole request message (Connect unary, and a server
// stream's newline-delimited JSON); "" for the others (enveloped Connect
// streaming, gRPC-Web), which Connect reads itself.
func bodyKind(ct string) string {
	ct, _, _ = strings.Cut(ct, ";")
	switch strings.TrimSpace(strings.ToLower(ct)) {
	case "application/json":
		return "json"
	case "application/proto":
		return "proto"
	}
	return ""
}

// checkBody checks that body decodes as md's request: protobuf JSON
// (kind "json"; unknown field names are ignored, an enum value name the
// contract does not have is not: dropped, the call would go on with the
// field unset) or protobuf. An empty JSON body is an empty request for a
// server stream only (Connect refuses it for a unary call). Errors:
// INVALID_ARGUMENT MALFORMED_REQUEST.
func checkBody(md protoreflect.MethodDescriptor, kind string, body []byte) error {
	in := md.Input()
	malformed := func(err error) error {
		return errs.New(codes.InvalidArgument, Domain, ReasonMalformedRequest, "malformed %s: %v", in.FullName(), err)
	}
	m := dynamicpb.NewMessage(in)
	if kind == "proto" {
		if err := proto.Unmarshal(body, m); err != nil {
			return malformed(err)
		}
		return nil
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if md.IsStreamingServer() {
			return nil
		}
		return malformed(errors.New("empty body, not a JSON object"))
	}
	if err := jsonIn.Unmarshal(body, m); err != nil {
		return malformed(err)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return malformed(err)
	}
	if err := checkEnumNames(in, v); err != nil {
		return malformed(err)
	}
	return nil
}

// checkEnumNames reports the first enum value name in the JSON value v
// (of message md) that md's contract does not have, at any depth.
func checkEnumNames(md protoreflect.MessageDescriptor, v any) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	for k, x := range obj {
		fd := md.Fields().ByJSONName(k)
		if fd == nil {
			fd = md.Fields().ByTextName(k)
		}
		if fd == nil {
			continue // an unknown field, ignored
		}
		var items []any
		switch {
		case fd.IsMap():
			fd = fd.MapValue()
			m, _ := x.(map[string]any)
			for _, y := range m {
				items = append(items, y)
			}
		case fd.IsList():
			items, _ = x.([]any)
		default:
			items = []any{x}
		}
		for _, y := range items {
			if err := checkEnumValue(fd, y); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkEnumValue checks one value of field fd (checkEnumNames).
func checkEnumValue(fd protoreflect.FieldDescriptor, v any) error {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		if name, ok := v.(string); ok && fd.Enum().Values().ByName(protoreflect.Name(name)) == nil {
			return fmt.Errorf("%s: %q is not a value of %s", fd.FullName(), name, fd.Enum().FullName())
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		// The well-known types have JSON forms of their own (a
		// Timestamp is a string) and no enum of the contracts.
		if !strings.HasPrefix(string(fd.Message().FullName()), "google.protobuf.") {
			return checkEnumNames(fd.Message(), v)
		}
	}
	return nil
}

// outgoing is the gRPC context of an HTTP call from remote (host:port):
// the caller's bearer token (and nothing else he says) as metadata, and
// the HTTP client's address for the gateway's own use (clientaddr.go):
// remote, and the X-Forwarded-For header, believed only when remote is a
// trusted proxy.
func outgoing(ctx context.Context, hdr http.Header, remote string) context.Context {
	md := metadata.Pairs(mdHTTPPeer, remote)
	for _, v := range hdr.Values("Authorization") {
		md.Append("authorization", v)
	}
	if xff := hdr.Values("X-Forwarded-For"); len(xff) > 0 {
		md.Append(mdHTTPForwardedFor, xff...)
	}
	return metadata.NewOutgoingContext(ctx, md)
}

func (h *httpAPI) unary(md protoreflect.MethodDescriptor) func(context.Context, *connect.Request[dynamicpb.Message]) (*connect.Response[dynamicpb.Message], error) {
	method := "/" + string(md.Parent().FullName()) + "/" + string(md.Name())
	return func(ctx context.Context, req *connect.Request[dynamicpb.Message]) (*connect.Response[dynamicpb.Message], error) {
		resp := dynamicpb.NewMessage(md.Output())
		if err := h.conn.Invoke(outgoing(ctx, req.Header(), req.Peer().Addr), method, req.Msg, resp); err != nil {
			return nil, connectError(err)
		}
		return connect.NewResponse(resp), nil
	}
}

func (h *httpAPI) openStream(ctx context.Context, md protoreflect.MethodDescriptor, hdr http.Header, remote string, req proto.Message) (grpc.ClientStream, error) {
	method := "/" + string(md.Parent().FullName()) + "/" + string(md.Name())
	cs, err := h.conn.NewStream(outgoing(ctx, hdr, remote), &grpc.StreamDesc{ServerStreams: true}, method)
	if err != nil {
		return nil, err
	}
	if err := cs.SendMsg(req); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if err := cs.CloseSend(); err != nil {
		return nil, err
	}
	return cs, nil
}

// streamErr is the error that ended a server stream: GATEWAY_DRAINING
// when the gateway is stopping and cut it (withStop), so that the client
// watches again, as over gRPC (proxy.drain); err otherwise.
func (h *httpAPI) streamErr(err error) error {
	if h.streamCtx.Err() != nil && (status.Code(err) == codes.Canceled || errors.Is(err, context.Canceled)) {
		return drainErr()
	}
	return err
}

// withStop ends ctx also when the gateway stops.
func (h *httpAPI) withStop(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(h.streamCtx, cancel)
	return ctx, func() { stop(); cancel() }
}

func (h *httpAPI) serverStream(md protoreflect.MethodDescriptor) func(context.Context, *connect.Request[dynamicpb.Message], *connect.ServerStream[dynamicpb.Message]) error {
	return func(ctx context.Context, req *connect.Request[dynamicpb.Message], ss *connect.ServerStream[dynamicpb.Message]) error {
		ctx, cancel := h.withStop(ctx)
		defer cancel()
		cs, err := h.openStream(ctx, md, req.Header(), req.Peer().Addr, req.Msg)
		if err != nil {
			return connectError(err)
		}
		for {
			m := dynamicpb.NewMessage(md.Output())
			if err := cs.RecvMsg(m); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return connectError(h.streamErr(err))
			}
			if err := ss.Send(m); err != nil {
				return err
			}
		}
	}
}

var jsonIn = protojson.UnmarshalOptions{DiscardUnknown: true}

// jsonOut writes every field of a message, zero values included
// (EmitDefaultValues): a hand total of 0, a coup's commission of 0 or a
// player's net of 0 is in the JSON as 0, not left out, so a client need
// not know protobuf's rule that an absent number is 0. Unset messages and
// fields of explicit presence (optional) stay out: absent there means
// unknown, not 0.
var jsonOut = protojson.MarshalOptions{EmitDefaultValues: true}

// jsonCodec is Connect's JSON codec with jsonOut (requests are read as
// Connect reads them: unknown fields ignored).
type jsonCodec struct{ name string }

func (c jsonCodec) Name() string { return c.name }

func (c jsonCodec) Marshal(m any) ([]byte, error) {
	pm, ok := m.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("gateway: http: %T is not a protobuf message", m)
	}
	return jsonOut.Marshal(pm)
}

func (c jsonCodec) Unmarshal(b []byte, m any) error {
	pm, ok := m.(proto.Message)
	if !ok {
		return fmt.Errorf("gateway: http: %T is not a protobuf message", m)
	}
	if len(b) == 0 {
		return errors.New("zero-length payload is not a valid JSON object")
	}
	if err := jsonIn.Unmarshal(b, pm); err != nil {
		return fmt.Errorf("unmarshal into %T: %w", m, err)
	}
	return nil
}

// ndjson serves a server stream as lines of JSON.
func (h *httpAPI) ndjson(w http.ResponseWriter, r *http.Request, md protoreflect.MethodDescriptor) {
	ctx, cancel := h.withStop(r.Context())
	defer cancel()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBytes))
	if err != nil {
		writeError(w, connectError(requestTooLarge("request body: %v", err)))
		return
	}
	req := dynamicpb.NewMessage(md.Input())
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := jsonIn.Unmarshal(body, req); err != nil {
			writeError(w, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("request body: %w", err)))
			return
		}
	}
	cs, err := h.openStream(ctx, md, r.Header, r.RemoteAddr, req)
	if err != nil {
		writeError(w, connectError(err))
		return
	}
	fl, _ := w.(http.Flusher)
	bw := bufio.NewWriter(w)
	for n := 0; ; n++ {
		m := dynamicpb.NewMessage(md.Output())
		err := cs.RecvMsg(m)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return
			}
			ce := connectError(h.streamErr(err))
			if n == 0 {
				writeError(w, ce)
				return
			}
			line, _ := json.Marshal(map[string]json.RawMessage{"error": errorJSON(ce)})
			_, _ = bw.Write(append(line, '\n'))
			_ = bw.Flush()
			return
		}
		if n == 0 {
			w.Header().Set("Content-Type", ndjsonContentType)
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("X-Accel-Buffering", "no")
			w.WriteHeader(http.StatusOK)
		}
		line, err := jsonOut.Marshal(m)
		if err != nil {
			h.log.Warn("http: encode stream message", "err", err)
			return
		}
		if _, err := bw.Write(append(line, '\n')); err != nil {
			return
		}
		if bw.Flush() != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
}

// connectError turns a gRPC status into a Connect error with the same
// code, message and details (the ErrorInfo, RetryInfo, ...).
func connectError(err error) *connect.Error {
	st, ok := status.FromError(err)
	if !ok {
		return connect.NewError(connect.CodeUnknown, err)
	}
	ce := connect.NewError(connect.Code(st.Code()), errors.New(st.Message()))
	for _, d := range st.Proto().GetDetails() {
		if ed, err := connect.NewErrorDetail(d); err == nil {
			ce.AddDetail(ed)
		}
	}
	return ce
}

// errorJSON is the Connect protocol's JSON form of an error, with each
// detail's content in JSON under "debug" (where the ErrorInfo's reason
// shows).
func errorJSON(ce *connect.Error) json.RawMessage {
	type detail struct {
		Type  string          `json:"type"`
		Value string          `json:"value"`
		Debug json.RawMessage `json:"debug,omitempty"`
	}
	out := struct {
		Code    string   `json:"code"`
		Message string   `json:"message,omitempty"`
		Details []detail `json:"details,omitempty"`
	}{Code: ce.Code().String(), Message: ce.Message()}
	for _, d := range ce.Details() {
		dd := detail{Type: d.Type(), Value: base64.RawStdEncoding.EncodeToString(d.Bytes())}
		if m, err := d.Value(); err == nil {
			if a, ok := m.(*anypb.Any); ok {
				if inner, err := a.UnmarshalNew(); err == nil {
					m = inner
				}
			}
			dd.Debug, _ = protojson.Marshal(m)
		}
		out.Details = append(out.Details, dd)
	}
	b, _ := json.Marshal(out)
	return b
}

// writeError answers an HTTP request with ce as Connect does for a unary
// call: its HTTP status and its JSON; a request over the size limit
// (REQUEST_TOO_LARGE) is 413, not the 429 of RESOURCE_EXHAUSTED, which
// says to retry later.
func writeError(w http.ResponseWriter, ce *connect.Error) {
	code := httpStatus(ce.Code())
	if tooLarge(ce) {
		code = http.StatusRequestEntityTooLarge
		w.Header().Set("Connection", "close") // the rest of the body is not read
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(errorJSON(ce))
}

// tooLarge reports whether ce is the gateway's REQUEST_TOO_LARGE.
func tooLarge(ce *connect.Error) bool {
	if ce.Code() != connect.CodeResourceExhausted {
		return false
	}
	for _, d := range ce.Details() {
		if m, err := d.Value(); err == nil {
			if info, ok := m.(*errdetails.ErrorInfo); ok && info.GetDomain() == Domain && info.GetReason() == ReasonRequestTooLarge {
				return true
			}
		}
	}
	return false
}

// httpStatus is the Connect protocol's HTTP status for code.
func httpStatus(c connect.Code) int {
	switch c {
	case connect.CodeCanceled:
		return 499
	case connect.CodeInvalidArgument, connect.CodeFailedPrecondition, connect.CodeOutOfRange:
		return http.StatusBadRequest
	case connect.CodeDeadlineExceeded:
		return http.StatusGatewayTimeout
	case connect.CodeNotFound:
		return http.StatusNotFound
	case connect.CodeAlreadyExists, connect.CodeAborted:
		return http.StatusConflict
	case connect.CodePermissionDenied:
		return http.StatusForbidden
	case connect.CodeResourceExhausted:
		return http.StatusTooManyRequests
	case connect.CodeUnimplemented:
		return http.StatusNotImplemented
	case connect.CodeUnavailable:
		return http.StatusServiceUnavailable
	case connect.CodeUnauthenticated:
		return http.StatusUnauthorized
	}
	return http.StatusInternalServerError
}

// serveHTTP serves h on lis until ctx is done, then shuts down, waiting
// up to stopTimeout for calls in flight (streams are cut at once). A
// request's headers must arrive within cc.HeaderTimeout and its body
// within cc.BodyTimeout (bodyDeadline); a connection idle between
// requests is closed after cc.IdleTimeout.
func serveHTTP(ctx context.Context, lis net.Listener, h http.Handler, cc ConnConfig, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           bodyDeadline(h, cc.BodyTimeout),
		ReadHeaderTimeout: cc.HeaderTimeout,
		IdleTimeout:       cc.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lis) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// bodyDeadline gives a request's body d to arrive: a read deadline on its
// connection from the handler's start, lifted once the body has been read
// to its end (so that a stream of lines, its request read, runs as long
// as it runs). A request without a body gets none: net/http already
// reads its connection in the background then, and a deadline there
// would cancel the request. A body read past the deadline fails with a
// timeout (readBody: errBodyTimeout, 408). http.Server.ReadTimeout would
// bound the whole request, streams included.
func bodyDeadline(next http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			rc := http.NewResponseController(w)
			if err := rc.SetReadDeadline(time.Now().Add(d)); err == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts its connection's read deadline once read to EOF.
type deadlineBody struct {
	io.ReadCloser
	once sync.Once
	lift func()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.once.Do(b.lift)
	}
	return n, err
}
