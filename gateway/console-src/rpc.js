// The table console's calls to the gateway, through the client generated
// from the protos (clients/ts). make console-js bundles this file with
// the client and its dependencies (esbuild, pinned in clients/ts) into
// gateway/gateway/console/rpc.js, a script that defines the global
// chemmyRPC for app.js; make check-generated keeps the bundle up to date.
//
// app.js reads and writes messages in protobuf JSON, the shape it was
// written for (camelCase fields, enums by name, 64-bit integers as
// strings); this module turns that JSON into the client's messages and
// back (fromJson, toJson: a field at its zero value is left out, as
// before; an Any by the registry of the contracts), and every error
// into {code, message, reason, domain, metadata}, code as the Connect
// protocol names it ("not_found").
import { fromJson, toJson } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createChemmyTransport,
  createClient,
  GatewayService,
  registry,
  ShoeService,
  TableService,
  WalletService,
} from "../../clients/ts/index.js";

const services = Object.fromEntries([GatewayService, TableService, WalletService, ShoeService].map((s) => [s.typeName, s]));

let token = "";
// The calls go to the page's own origin (the gateway serves the console),
// with the signed-in token.
const transport = createChemmyTransport({ baseUrl: location.origin, token: () => token });
const clients = {};

// setToken sets the bearer token of the calls that follow.
export function setToken(t) {
  token = t || "";
}

function method(service, name) {
  const s = services[service];
  const m = s && s.method[name.charAt(0).toLowerCase() + name.slice(1)];
  if (!m) {
    throw { code: "unimplemented", message: "no method " + service + "/" + name, reason: "", domain: "", metadata: {} };
  }
  clients[service] = clients[service] || createClient(s, transport);
  return { m, client: clients[service][m.localName] };
}

// request is the request message of m from JSON (unknown fields
// ignored, as the gateway ignores them); a body that is not one (a
// field of the wrong type, an enum name the contract does not have) is
// refused as the gateway refuses it, invalid_argument MALFORMED_REQUEST.
function request(m, body) {
  try {
    return fromJson(m.input, JSON.parse(JSON.stringify(body || {})), { registry, ignoreUnknownFields: true });
  } catch (e) {
    throw { code: "invalid_argument", message: "malformed " + m.input.typeName + ": " + e.message, reason: "MALFORMED_REQUEST", domain: "", metadata: {} };
  }
}

// snake is a Code's name as the Connect protocol writes it.
const snake = (c) => (Code[c] || "unknown").replace(/[A-Z]/g, (x, i) => (i ? "_" : "") + x.toLowerCase());

// failure is err as app.js reads it: the code, message and ErrorInfo.
function failure(err) {
  if (err && typeof err === "object" && !(err instanceof Error) && "code" in err) {
    return err; // already one
  }
  const ce = ConnectError.from(err);
  if (err instanceof TypeError || ce.cause instanceof TypeError) {
    return { code: "unavailable", message: "The gateway is not reachable: " + ce.rawMessage, reason: "", domain: "", metadata: {} };
  }
  const out = { code: snake(ce.code), message: ce.rawMessage, reason: "", domain: "", metadata: {} };
  for (const d of ce.details) {
    if (d.type === "google.rpc.ErrorInfo" && d.debug && typeof d.debug === "object") {
      out.reason = d.debug.reason || "";
      out.domain = d.debug.domain || "";
      out.metadata = d.debug.metadata || {};
    }
  }
  return out;
}

// call calls service ("chemmy.table.v1.TableService") method ("GetTable")
// with the request body in JSON and answers the response in JSON.
export async function call(service, name, body) {
  const { m, client } = method(service, name);
  try {
    return toJson(m.output, await client(request(m, body)), { registry });
  } catch (e) {
    throw failure(e);
  }
}

// watch follows a server stream (WatchTable) until it ends or signal
// aborts: onOpen when the gateway has answered, then onMessage with each
// message in JSON. It throws the stream's error as a failure, and an
// exception of onMessage as it is.
export async function watch(service, name, body, { signal, onOpen, onMessage }) {
  const { m, client } = method(service, name);
  let own = null; // an exception of onMessage's, thrown as it is
  try {
    for await (const msg of client(request(m, body), { signal, onHeader: () => onOpen && onOpen() })) {
      try {
        onMessage(toJson(m.output, msg, { registry }));
      } catch (e) {
        own = e;
        throw e;
      }
    }
  } catch (e) {
    throw e === own ? e : failure(e);
  }
}
