// The entry of @chemmy/client: the gateway's services as Connect clients
// over HTTP (the gateway's HTTP/JSON address), with the bearer token on
// every call. Written by hand; the messages and services are generated
// into gen/ (make generate-ts).
import { createRegistry } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { file_chemmy_events_v1_events } from "./gen/chemmy/events/v1/events_pb.js";
import { file_chemmy_events_v1_shoe_events } from "./gen/chemmy/events/v1/shoe_events_pb.js";
import { file_chemmy_events_v1_wallet_events } from "./gen/chemmy/events/v1/wallet_events_pb.js";
import { file_chemmy_gateway_v1_gateway, GatewayService } from "./gen/chemmy/gateway/v1/gateway_pb.js";
import { file_chemmy_shoe_v1_shoe, ShoeService } from "./gen/chemmy/shoe/v1/shoe_pb.js";
import { file_chemmy_table_v1_table, TableService } from "./gen/chemmy/table/v1/table_pb.js";
import { file_chemmy_wallet_v1_wallet, WalletService } from "./gen/chemmy/wallet/v1/wallet_pb.js";

export { Code, ConnectError, createClient };

// registry holds every message of the contracts: the JSON of a
// google.protobuf.Any (an event's house rules) is read and written by it.
export const registry = createRegistry(
  file_chemmy_gateway_v1_gateway,
  file_chemmy_table_v1_table,
  file_chemmy_wallet_v1_wallet,
  file_chemmy_shoe_v1_shoe,
  file_chemmy_events_v1_events,
  file_chemmy_events_v1_shoe_events,
  file_chemmy_events_v1_wallet_events,
);
export { GatewayService, ShoeService, TableService, WalletService };
export * as gatewayv1 from "./gen/chemmy/gateway/v1/gateway_pb.js";
export * as shoev1 from "./gen/chemmy/shoe/v1/shoe_pb.js";
export * as tablev1 from "./gen/chemmy/table/v1/table_pb.js";
export * as walletv1 from "./gen/chemmy/wallet/v1/wallet_pb.js";

// createChemmyTransport is a Connect transport to the gateway at baseUrl
// (its HTTP address, e.g. "http://127.0.0.1:7080", or "" for the page's
// own origin) that sends "Authorization: Bearer <token>" with every call.
// token is a string, or a function returning one (or a promise of one),
// asked before each call (a JWT that is renewed); none: no header. JSON
// is read with the registry (an Any's message) and fields this version
// does not know are ignored (a newer gateway's).
export function createChemmyTransport({ baseUrl, token, fetch, useBinaryFormat = false, interceptors = [] }) {
  const auth = (next) => async (req) => {
    const t = typeof token === "function" ? await token() : token;
    if (t) {
      req.header.set("Authorization", "Bearer " + t);
    }
    return next(req);
  };
  return createConnectTransport({
    baseUrl: baseUrl ?? "",
    useBinaryFormat,
    jsonOptions: { registry, ignoreUnknownFields: true },
    binaryOptions: { readUnknownFields: true },
    fetch,
    interceptors: [auth, ...interceptors],
  });
}

// createChemmyClients is one client of each public service, on one
// transport (createChemmyTransport's options).
export function createChemmyClients(options) {
  const transport = createChemmyTransport(options);
  return {
    transport,
    gateway: createClient(GatewayService, transport),
    table: createClient(TableService, transport),
    wallet: createClient(WalletService, transport),
    shoe: createClient(ShoeService, transport),
  };
}

// errorReason is the reason of a gateway or service error (the
// google.rpc.ErrorInfo detail's reason, as "NOT_YOUR_TURN"), or "" for
// an error without one.
export function errorReason(err) {
  const ce = ConnectError.from(err);
  for (const d of ce.details) {
    if (d.type === "google.rpc.ErrorInfo" && d.debug && typeof d.debug === "object") {
      return typeof d.debug.reason === "string" ? d.debug.reason : "";
    }
  }
  return "";
}
