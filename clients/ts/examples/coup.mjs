// One coup of chemin de fer through the gateway with @chemmy/client, as
// examples/coup-http.sh plays it with curl: the operator funds alice, bob
// and carol, the croupier opens a table, alice takes a bank of 1000, bob
// bets 600 and carol 400, the coup is dealt and every draw decision is
// answered "draw". Along the way: an error and its reason, a call without
// a token, one call in protobuf instead of JSON, and the first message of
// the table's stream (WatchTable). The last line printed is a summary in
// JSON (cmd/e2e TestTypeScriptClient reads it).
//
//   node examples/coup.mjs            # the gateway of make run
//   CHEMMY_HTTP=http://127.0.0.1:7080 RUN_ID=r2 node examples/coup.mjs
import {
  Code,
  createChemmyClients,
  errorReason,
  gatewayv1,
  tablev1,
} from "@chemmy/client";

const baseUrl = process.env.CHEMMY_HTTP || "http://127.0.0.1:7080";
const run = process.env.RUN_ID || "ts-" + Date.now();
const as = (who, more = {}) => createChemmyClients({ baseUrl, token: who + "-token", ...more });
const operator = as("operator");
const croupier = as("croupier");
const players = { alice: as("alice"), bob: as("bob"), carol: as("carol") };
const summary = { run };

const me = await players.alice.gateway.getCaller({});
summary.caller = { subject: me.subject, role: gatewayv1.Role[me.role] };
console.log(`alice is ${me.subject}, role ${summary.caller.role}`);

for (const p of Object.keys(players)) {
  await operator.wallet.deposit({ requestId: `${run}-deposit-${p}`, accountId: "player:" + p, amount: 5000n });
}

const created = await croupier.table.createTable({
  requestId: `${run}-table`,
  houseRules: { minimumBank: 100n },
});
const tableId = created.table.tableId;
summary.tableId = tableId;
console.log(`table ${tableId}`);

for (const [p, c] of Object.entries(players)) {
  await c.table.joinTable({ requestId: `${run}-join-${p}`, tableId, playerId: p });
}
await players.alice.table.acceptBank({ requestId: `${run}-bank`, tableId, playerId: "alice", amount: 1000n });

// carol bets before bob: refused, with the reason of the error.
try {
  await players.carol.table.placeBet({ requestId: `${run}-early-carol`, tableId, playerId: "carol", amount: 400n });
  summary.earlyBet = { code: "ok" };
} catch (err) {
  summary.earlyBet = { code: Code[err.code], reason: errorReason(err) };
  console.log(`carol's early bet: ${Code[err.code]} ${errorReason(err)}`);
}

// Without a token: the gateway's UNAUTHENTICATED.
try {
  await createChemmyClients({ baseUrl }).gateway.getCaller({});
  summary.noToken = { code: "ok" };
} catch (err) {
  summary.noToken = { code: Code[err.code], reason: errorReason(err) };
}

await players.bob.table.placeBet({ requestId: `${run}-bet-bob`, tableId, playerId: "bob", amount: 600n });
// carol's bet in protobuf on the wire (both encodings are served).
await as("carol", { useBinaryFormat: true }).table.placeBet({
  requestId: `${run}-bet-carol`, tableId, playerId: "carol", amount: 400n,
});

for (let i = 1; i <= 4; i++) {
  const { table } = await croupier.table.getTable({ tableId });
  if (table.state !== tablev1.TableState.DECISION) {
    break;
  }
  const who = table.coup.decisionPlayerId;
  const advice = await players[who].table.getAdvice({ tableId, playerId: who });
  console.log(`${who} decides for ${tablev1.Hand[table.coup.decisionHand]}: the advice is ${tablev1.DrawChoice[advice.best]} (${advice.rule}); draw`);
  await players[who].table.decideDraw({ requestId: `${run}-decide-${i}`, tableId, playerId: who, choice: tablev1.DrawChoice.DRAW });
}

// The table's stream: its first message is the table as it stands.
const ctl = new AbortController();
for await (const msg of players.bob.table.watchTable({ tableId }, { signal: ctl.signal })) {
  summary.watched = { case: msg.update.case, tableId: msg.update.case === "table" ? msg.update.value.tableId : "" };
  break;
}
ctl.abort();

const { table } = await croupier.table.getTable({ tableId });
summary.outcome = tablev1.Outcome[table.lastCoup.outcome];
summary.settled = table.lastCoup.settled;
console.log(`outcome ${summary.outcome}`);
summary.balances = {};
for (const a of ["player:alice", "player:bob", "player:carol", "house:commission"]) {
  const { account } = await operator.wallet.getAccount({ accountId: a });
  summary.balances[a] = Number(account.balance);
  console.log(`${a} ${account.balance}`);
}
console.log(JSON.stringify(summary));
