// The types of index.js (written by hand beside it).
import type { Registry } from "@bufbuild/protobuf";
import type { Client, Interceptor, Transport } from "@connectrpc/connect";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { GatewayService } from "./gen/chemmy/gateway/v1/gateway_pb.js";
import { ShoeService } from "./gen/chemmy/shoe/v1/shoe_pb.js";
import { TableService } from "./gen/chemmy/table/v1/table_pb.js";
import { WalletService } from "./gen/chemmy/wallet/v1/wallet_pb.js";

export { Code, ConnectError, createClient };
export { GatewayService, ShoeService, TableService, WalletService };
export * as gatewayv1 from "./gen/chemmy/gateway/v1/gateway_pb.js";
export * as shoev1 from "./gen/chemmy/shoe/v1/shoe_pb.js";
export * as tablev1 from "./gen/chemmy/table/v1/table_pb.js";
export * as walletv1 from "./gen/chemmy/wallet/v1/wallet_pb.js";

/** Every message of the contracts (for the JSON of a google.protobuf.Any, with toJson and fromJson). */
export declare const registry: Registry;

export interface ChemmyOptions {
  /** The gateway's HTTP address, as "http://127.0.0.1:7080"; "" or none: the page's own origin. */
  baseUrl?: string;
  /** The bearer token (or a function giving it before each call); none: no Authorization header. */
  token?: string | (() => string | Promise<string>);
  /** The fetch to call with; the global one by default. */
  fetch?: typeof globalThis.fetch;
  /** Protobuf instead of JSON on the wire (both are served); JSON by default. */
  useBinaryFormat?: boolean;
  /** More interceptors, called after the one that sets the token. */
  interceptors?: Interceptor[];
}

export declare function createChemmyTransport(options: ChemmyOptions): Transport;

export interface ChemmyClients {
  transport: Transport;
  gateway: Client<typeof GatewayService>;
  table: Client<typeof TableService>;
  wallet: Client<typeof WalletService>;
  shoe: Client<typeof ShoeService>;
}

export declare function createChemmyClients(options: ChemmyOptions): ChemmyClients;

/** The reason of a gateway or service error (its google.rpc.ErrorInfo), as "NOT_YOUR_TURN"; "" if none. */
export declare function errorReason(err: unknown): string;
