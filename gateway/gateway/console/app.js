// chemmy table console: plain JS over the gateway's HTTP side, through the
// client generated from the protos (rpc.js, chemmyRPC: the Connect
// protocol, for calls and for WatchTable; gateway/console-src/rpc.js).
// Every call carries the signed-in token; the gateway authenticates,
// authorizes and redacts exactly as for gRPC. It plays the four games:
// chemin de fer, punto banco, baccarat banque and the old baccarat.
"use strict";

const T = "chemmy.table.v1.TableService";
const W = "chemmy.wallet.v1.WalletService";
const G = "chemmy.gateway.v1.GatewayService";
const $ = (id) => document.getElementById(id);
const state = {
  issued: 0, // calls whose answer holds the table, numbered as issued (render)
  token: sessionStorage.getItem("chemmy-token") || "", me: "", role: "",
  table: null, tableId: "", watch: null, refreshTimer: null,
  decisions: {}, // coup id -> [{hand, draw}] from draw_decided events
  advised: "", // the decision (coup id/hand) advice was asked for
  moneyKey: null, // what the balance was last read after
  balanceRead: 0, // the latest balance read (an older answer is dropped)
  currency: "", // the wallet's default currency, once known
  spotsFor: "", // the rules the spot buttons were made for
  seedTried: {}, // seed key -> a CommitSeed was tried (once per shoe)
  seedRevealTried: {}, // seed key -> a RevealSeed was tried
  seedTries: {}, // seed key -> calls made (transient failures are tried again, a few times)
  seedNotes: {}, // seed key -> what went wrong with the player's seed, in words
  elsewhereBusy: false, // revealElsewhere is reading tables
};

// friendly: a plain message per ErrorInfo reason, from reasons.json (a
// test checks it names every reason the services return).
let friendly = {};
async function loadReasons() {
  try {
    const r = await fetch("/console/reasons.json");
    if (r.ok) friendly = await r.json();
  } catch (e) { /* the messages fall back to the services' own */ }
}

function rid() {
  const r = (globalThis.crypto && crypto.randomUUID) ? crypto.randomUUID() : String(Math.random()).slice(2) + Date.now();
  return "console-" + r;
}

class CallError extends Error {
  constructor(code, message, reason, domain, metadata) {
    super(message); this.code = code; this.reason = reason; this.domain = domain; this.metadata = metadata || {};
  }
}

// errorFrom is a CallError of a failure as chemmyRPC reports it: the
// code as the Connect protocol names it, the message, and the ErrorInfo
// (reason, domain, metadata).
function errorFrom(f) {
  if (f instanceof CallError) return f;
  f = f || {};
  return new CallError(f.code || "unknown", f.message || String(f), f.reason || "", f.domain || "", f.metadata);
}

// sparse reads a message's JSON into the shape this console was written
// for: its checks ("x ? ... : ...") take a missing field for zero, so the
// zero values of fields of implicit presence (a hand total of 0, an unset
// enum's _UNSPECIFIED name, an empty list) are dropped (JSON.parse
// reviver; chemmyRPC's JSON already leaves most out). The fields of
// explicit presence keep theirs: 0 there is a value, not "unset".
const explicit = new Set(["commissionBp", "bankerOption3Vs9", "bankerOption5Vs4", "resultPauseMs", "maxMoveTop",
  "currencyExponent", "balanceBefore", "balanceAfter", "exponent"]);
function sparse(key, v) {
  if (Array.isArray(this) || explicit.has(key)) return v;
  if (v === 0 || v === "0" || v === false || v === "" || (Array.isArray(v) && v.length === 0) ||
      (typeof v === "string" && v.endsWith("_UNSPECIFIED"))) return undefined;
  return v;
}

// reshape is a message's JSON (chemmyRPC) as sparse shapes it.
const reshape = (j) => JSON.parse(JSON.stringify(j || {}), sparse);

// call calls service's method with the request body (JSON) through the
// generated client, with the signed-in token, and answers the response's
// JSON; a failure is thrown as a CallError.
async function call(service, method, body) {
  chemmyRPC.setToken(state.token);
  try {
    return reshape(await chemmyRPC.call(service, method, body || {}));
  } catch (e) {
    throw errorFrom(e);
  }
}

// explain is the plain text of an error: its reason's message, the
// reason, and what the service said.
function explain(e) {
  const reason = e.reason || "";
  const text = friendly[reason] || e.message || String(e);
  const meta = Object.entries(e.metadata || {}).map(([k, v]) => k + ": " + String(v).replace(/_/g, " ")).join(", ");
  return text + (meta ? " (" + meta + ")" : "") + (reason ? " [" + reason + "]" : "") + (friendly[reason] && e.message ? " — " + e.message : "");
}

function showError(e) {
  const box = $("error");
  if (!e) { box.hidden = true; box.textContent = ""; box.dataset.reason = ""; return; }
  box.textContent = explain(e);
  box.dataset.reason = e.reason || "";
  box.dataset.code = e.code || "";
  box.hidden = false;
}

async function act(fn) {
  showError(null);
  try { return await fn(); } catch (e) { showError(e); return null; }
}

const short = (v, prefix) => (v || "").replace(prefix, "");
const lower = (v, prefix) => short(v, prefix).replace(/_/g, " ").toLowerCase();
const num = (v) => Number(v || 0);
const isStaff = () => state.role === "ROLE_CROUPIER" || state.role === "ROLE_OPERATOR";
const isPlayer = () => state.role === "ROLE_PLAYER";
const you = (p) => (p && p === state.me ? p + " (you)" : p || "");
const names = (ids) => (ids || []).map(you).join(", ");
const two = (n) => String(n).padStart(2, "0");
// clock is a timestamp's local time of day, HH:MM:SS.
function clock(ts) {
  const d = new Date(ts);
  return isNaN(d) ? "?" : two(d.getHours()) + ":" + two(d.getMinutes()) + ":" + two(d.getSeconds());
}

// The games: their key (for data-games), name and house rules' field.
const GAMES = {
  VARIANT_CHEMIN_DE_FER: { key: "cf", name: "chemin de fer", rules: "houseRules" },
  VARIANT_PUNTO_BANCO: { key: "pb", name: "punto banco", rules: "puntoBancoRules" },
  VARIANT_BACCARAT_BANQUE: { key: "banque", name: "baccarat banque", rules: "banqueRules" },
  VARIANT_OLD_BACCARAT: { key: "old", name: "old baccarat", rules: "oldBaccaratRules" },
};
const gameOf = (t) => GAMES[t.variant] || GAMES.VARIANT_CHEMIN_DE_FER;
const rulesOf = (t) => t[gameOf(t).rules] || {};

function range(lo, hi) { return num(lo) + (num(hi) ? "–" + num(hi) : "+"); }

// stakesText: a table's stakes from its house rules.
function stakesText(t) {
  const r = rulesOf(t);
  switch (gameOf(t).key) {
    case "pb": return "bets " + range(r.minBet, r.maxBet) + (num(r.houseLimit) ? ", house limit " + num(r.houseLimit) : "");
    case "banque": return (r.houseBank ? "house bank" : "bank from " + num(r.minimumBank)) + ", bets " + range(r.minBet, r.maxBet);
    case "old": return "bank from " + num(r.minimumBank) + ", stakes " + range(r.minStake, r.maxStake);
    default: return "bank from " + num(r.minimumBank) + (num(r.houseLimit) ? ", house limit " + num(r.houseLimit) : "");
  }
}

// seatsText: seats taken of those the house rules give.
function seatsText(t) {
  const r = rulesOf(t), seats = t.seats || [];
  if (gameOf(t).key === "banque") {
    const per = num(r.maxSeatsPerSide);
    const n = (side) => seats.filter((s) => s.side === side).length;
    return "right " + n("BANQUE_SIDE_RIGHT") + "/" + per + ", left " + n("BANQUE_SIDE_LEFT") + "/" + per;
  }
  const max = num(r.maxSeats);
  return seats.length + "/" + max + " (" + Math.max(0, max - seats.length) + " free)";
}

async function signIn() {
  state.token = $("token").value.trim() || state.token;
  sessionStorage.setItem("chemmy-token", state.token);
  const r = await act(() => call(G, "GetCaller", {}));
  if (!r) { $("whoami").textContent = ""; return; }
  state.me = r.subject; state.role = r.role; state.currency = "";
  $("whoami").textContent = r.subject + " (" + lower(r.role, "ROLE_") + ")";
  $("whoami").dataset.subject = r.subject;
  visibility();
  state.moneyKey = null;
  refreshBalance();
  await lobby();
  const q = new URLSearchParams(location.search).get("table");
  if (q && q !== state.tableId) openTable(q);
}

// refreshBalance shows the signed-in player's account in the currency of
// the open table (wallet GetAccount, see ownAccount): its balance, its
// currency and what is held on it; 0 when he has no account there yet.
async function refreshBalance() {
  const el = $("balance");
  if (!isPlayer()) { el.textContent = ""; return; }
  const n = ++state.balanceRead;
  const cur = (state.table && state.table.currencyCode) || "";
  let a = {};
  try {
    a = await ownAccount(cur);
  } catch (e) {
    if (e.reason !== "ACCOUNT_NOT_FOUND") { if (n === state.balanceRead) showError(e); return; }
  }
  if (n !== state.balanceRead) return; // a later read (another table) shows its own
  const code = a.currencyCode || cur || state.currency;
  el.textContent = "balance " + num(a.balance) + (code ? " " + code : "") + (num(a.held) ? " · held " + num(a.held) : "");
  el.dataset.balance = String(num(a.balance));
  el.dataset.held = String(num(a.held));
  el.dataset.currency = code;
}

// ownAccount reads the signed-in player's wallet account in currency cur
// (docs/walkthroughs/chemin-de-fer.md, "Currency"): player:<id> in the wallet's default currency (or
// cur ""), player:<id>@<cur> in another. The default currency is learnt
// from the player:<id> account, or from the wallet refusing the suffix of
// its default currency (INVALID_ACCOUNT: that account has no suffix).
// No account yet: ACCOUNT_NOT_FOUND.
async function ownAccount(cur) {
  const base = "player:" + state.me;
  if (cur && cur !== state.currency) {
    try {
      return (await call(W, "GetAccount", { accountId: base + "@" + cur })).account || {};
    } catch (e) {
      if (e.reason !== "INVALID_ACCOUNT") throw e;
      state.currency = cur;
    }
  }
  const a = (await call(W, "GetAccount", { accountId: base })).account || {};
  if (a.currencyCode) state.currency = a.currencyCode;
  return a;
}

// lobby lists the first 100 tables that pass the lobby's filters
// (ListTables, paging on past short pages: a call reads at most 1,000
// tables, so a page may hold few or none); it is read again every few
// seconds while the page is shown.
async function lobby() {
  if (!state.me) return;
  const tables = [];
  try {
    let token;
    for (let calls = 0; calls < 20 && tables.length < 100; calls++) {
      const r = await call(T, "ListTables", { pageSize: 100 - tables.length, pageToken: token,
        variant: $("lobby-game").value || undefined, excludeClosed: $("lobby-open").checked });
      tables.push(...(r.tables || []));
      token = r.nextPageToken;
      if (!token) break;
    }
  } catch (e) { $("lobby-live").textContent = "not updated"; showError(e); return; }
  $("lobby-live").textContent = "updated " + new Date().toLocaleTimeString();
  const body = $("tables");
  body.textContent = "";
  for (const t of tables) body.append(lobbyRow(t));
}
setInterval(() => { if (document.visibilityState === "visible") lobby(); }, 5000);

// lobbyRow is a table's row in the lobby: its game, stakes, seats, state.
function lobbyRow(t) {
  const tr = document.createElement("tr");
  tr.dataset.table = t.tableId;
  tr.dataset.game = gameOf(t).key;
  tr.dataset.state = t.state || "";
  if (t.tableId === state.tableId) tr.className = "current";
  const cells = [gameOf(t).name + (t.certification ? " (certification)" : ""), stakesText(t), seatsText(t), lower(t.state, "TABLE_STATE_")];
  for (const [i, text] of cells.entries()) {
    const td = document.createElement("td");
    td.textContent = text;
    td.className = ["game", "stakes", "seats", "state"][i];
    tr.append(td);
  }
  const td = document.createElement("td");
  const b = document.createElement("button");
  b.type = "button"; b.textContent = "Open"; b.dataset.table = t.tableId; b.title = t.tableId;
  b.addEventListener("click", () => openTable(t.tableId));
  td.append(b);
  tr.append(td);
  return tr;
}

// The open table's lobby row follows the table view at once.
function updateLobbyRow(t) {
  const old = document.querySelector('#tables tr[data-table="' + CSS.escape(t.tableId) + '"]');
  if (old) old.replaceWith(lobbyRow(t));
}

function openTable(id) {
  if (state.watch) state.watch.abort();
  state.tableId = id; state.table = null; state.decisions = {}; state.advised = ""; state.spotsFor = "";
  history.replaceState(null, "", "?table=" + encodeURIComponent(id));
  $("table-view").hidden = false;
  $("table-id").textContent = id;
  $("log").textContent = "";
  $("reality").hidden = true;
  $("advice-text").textContent = "";
  for (const tr of document.querySelectorAll("#tables tr")) tr.classList.toggle("current", tr.dataset.table === id);
  watch(id);
}

// watch follows WatchTable (a server stream of the generated client):
// the table first, then its events; each event refreshes the view with
// GetTable (made for this viewer). The stream is opened again if it ends.
async function watch(id) {
  const ctl = new AbortController();
  state.watch = ctl;
  $("live").textContent = "connecting";
  chemmyRPC.setToken(state.token);
  try {
    await chemmyRPC.watch(T, "WatchTable", { tableId: id }, {
      signal: ctl.signal,
      onOpen: () => { $("live").textContent = "live"; },
      onMessage: (m) => onWatch(reshape(m)),
    });
  } catch (e) {
    if (ctl.signal.aborted) return;
    if (!(e instanceof Error)) e = errorFrom(e); // a failure of the call, not the page's own
    showError(e);
    if (e instanceof CallError && e.code !== "unavailable" && e.code !== "resource_exhausted") { $("live").textContent = "stopped"; return; }
  }
  if (ctl.signal.aborted || state.tableId !== id) return;
  $("live").textContent = "reconnecting";
  setTimeout(() => { if (state.tableId === id && state.watch === ctl) watch(id); }, 2000);
}

// The envelope's fields (chemmy.events.v1.TableEvent); the other one is
// the payload, named by its kind.
const EVENT_FIELDS = ["eventId", "tableId", "coupId", "sequence", "occurTime", "certification", "currencyCode", "currencyExponent", "operatorId"];

function onWatch(m) {
  if (m.table) { render(m.table); return; }
  if (m.event) {
    const ev = m.event;
    const kind = Object.keys(ev).find((k) => !EVENT_FIELDS.includes(k)) || "event";
    const p = ev[kind] || {};
    if (kind === "drawDecided" && ev.coupId) {
      (state.decisions[ev.coupId] = state.decisions[ev.coupId] || []).push({ hand: p.hand, draw: !!p.draw });
    }
    if (kind === "realityCheck" && p.playerId === state.me) showRealityCheck(p);
    if (kind === "realityCheckAnswered" && p.playerId === state.me) hideRealityCheck(p.checkNumber);
    const li = document.createElement("li");
    li.textContent = (ev.sequence ? "#" + ev.sequence + " " : "") + describe(kind, p);
    li.dataset.kind = kind;
    $("log").prepend(li);
    clearTimeout(state.refreshTimer);
    state.refreshTimer = setTimeout(refresh, 80);
  }
}

const handNames = { HAND_PLAYER: "player", HAND_BANKER: "banker", HAND_RIGHT: "right", HAND_LEFT: "left", HAND_PUNTER: "punter" };
const handName = (h) => handNames[h] || "hand";
const outcomeNames = { OUTCOME_BANK_WINS: "the bank wins", OUTCOME_BANK_LOSES: "the bank loses", OUTCOME_STAND_OFF: "stand-off" };

function cardText(c) {
  if (!c || c.faceDown) return "face down";
  const code = c.code || "";
  return code.slice(0, -1).replace("T", "10") + (suits[code.slice(-1)] || "");
}

// A reality check (the player's alone: WatchTable sends it to him only)
// asks him to go on or stop; his answer is AnswerRealityCheck. Stop ends
// his session at the table once the coup he plays in is over.
function showRealityCheck(p) {
  const mins = Math.floor(num(p.sessionElapsedMs) / 60000);
  $("reality-text").textContent = "Reality check " + num(p.checkNumber) + ": you have played " + num(p.coupsPlayed) +
    " coups in " + mins + " minutes at this table, net " + num(p.sessionNet) + ". Continue, or stop?";
  $("reality").dataset.check = String(num(p.checkNumber));
  $("reality").hidden = false;
}

function hideRealityCheck(n) {
  if (n === undefined || $("reality").dataset.check === String(num(n))) $("reality").hidden = true;
}

async function answerRealityCheck(answer) {
  const n = $("reality").dataset.check;
  const r = await tableAct("AnswerRealityCheck", { checkNumber: n, answer });
  if (r) hideRealityCheck(n);
}

// describe is one line of the event log.
function describe(kind, p) {
  switch (kind) {
    case "tableCreated": return "table opened" + (p.createdBy ? " by " + p.createdBy : "");
    case "playerSeated": return p.playerId + " sits down at seat " + p.seatNumber;
    case "playerLeft": return p.playerId + " leaves seat " + p.seatNumber;
    case "galleryJoined": return p.playerId + " joins the gallery";
    case "bankOffered": return p.playerId ? "the bank is offered to " + p.playerId : "the bank is open to any seated player at " + num(p.amount);
    case "bankChanged": return (p.bankerPlayerId ? p.bankerPlayerId + " holds a bank of " + num(p.bank) : "no banker") + " (" + lower(p.reason, "BANK_CHANGE_REASON_") + ")";
    case "bankAuctionOpened": return "the bank is auctioned (round " + (p.round || 1) + ")";
    case "bankBid": return num(p.amount) ? p.playerId + " bids " + num(p.amount) + " for the bank" : p.playerId + " will not bid";
    case "betPlaced": return p.playerId + " bets " + num(p.amount) + (p.spot ? " on " + p.spot.replace("_", " ") : "");
    case "betDeclined": return p.playerId + " passes";
    case "betReduced": return p.playerId + "'s bet is cut to " + num(p.amount);
    case "bancoCalled": return p.playerId + ": banco! (" + num(p.amount) + ")";
    case "cardDealt": return (p.holderPlayerId ? p.holderPlayerId + "'s " : "") + handName(p.hand) + " hand, card " + p.position + ": " + cardText(p.card);
    case "naturalShown": return handName(p.hand) + " shows a natural " + num(p.total);
    case "drawDecided": return handName(p.hand) + (p.draw ? ": carte (draws)" : ": non (stands)");
    case "coupResulted": return "result: " + (outcomeNames[p.outcome] || (p.hands || []).map((h) => handName(h.hand) + " " + (outcomeNames[h.outcome] || "")).join(", "));
    case "coupSettled": return "settled: banker net " + num(p.bankerNet) + ", commission " + num(p.commission) + (p.houseNet ? ", house net " + num(p.houseNet) : "");
    case "coupVoided": return "the coup is voided by " + (p.by || "the table") + ": " + (p.reason || "");
    case "bettingReopened": return "no bet: the betting opens again";
    case "bettingWindowStarted": return "the betting window is open";
    case "bettingClosed": return "no more bets (" + (p.betsCount || 0) + ")";
    case "turnTimedOut": return p.playerId + "'s time ran out (" + p.turn + "): " + (p.action || "").replace(/_/g, " ");
    case "seatFeeCharged": return p.playerId + " pays seat time " + num(p.fee);
    case "staffAction": return p.actorId + ": " + (p.action || "").replace(/_/g, " ") + (p.reason ? " (" + p.reason + ")" : "");
    case "tableClosed": return "the table is closed" + (p.abandoned ? " (abandoned)" : "") + (p.reason ? ": " + p.reason : "");
    case "shoeChanged": return "a new shoe (number " + (p.shoeNumber || 1) + ")";
    case "topCardsMoved": return p.bankerPlayerId + " moves " + (p.count || 0) + " cards from the top to the bottom";
    case "realityCheck": return "reality check " + num(p.checkNumber) + " for " + p.playerId + ": " + num(p.coupsPlayed) + " coups, net " + num(p.sessionNet);
    case "realityCheckAnswered": return p.playerId + " answers reality check " + num(p.checkNumber) + ": " + lower(p.answer, "REALITY_CHECK_ANSWER_");
    case "seedCommitted": return p.playerId + " commits a seed to the shoe";
    case "seedRevealed": return p.playerId + " reveals his seed";
    case "seedCommitmentsFixed": return "the seed commitments are fixed (" + ((p.seedCommitments || []).map((c) => c.playerId).join(", ") || "none") + "): reveal by " + clock(p.revealDeadline);
    case "shoeAbandoned": {
      const w = p.withheldPlayerIds || [];
      return "the shoe was abandoned: " + (w.join(", ") || "a player") + (w.length > 1 ? " withheld their seeds" : " withheld a seed");
    }
    case "shoeSeeded": return "the shoe is seeded " + ((p.playerIds || []).length ? "with the seeds of " + p.playerIds.join(", ") + (p.source === "cutter" ? " (the cut)" : "") :
      "with no player's seed (no player entropy)");
  }
  return kind + " " + JSON.stringify(p);
}

async function refresh() {
  if (!state.tableId) return;
  try {
    const n = ++state.issued;
    const r = await call(T, "GetTable", { tableId: state.tableId });
    render(r.table, n);
  } catch (e) { showError(e); }
}

const suits = { C: "♣", D: "♦", H: "♥", S: "♠" };

function cards(el, list) {
  el.textContent = "";
  for (const c of list || []) {
    const s = document.createElement("span");
    s.className = "card";
    if (c.faceDown) {
      s.classList.add("face-down"); s.dataset.faceDown = "true"; s.textContent = "?"; s.title = "face down";
    } else {
      s.dataset.code = c.code || "";
      s.textContent = cardText(c);
      if (/[DH]$/.test(c.code || "")) s.classList.add("red");
    }
    el.append(s);
  }
}

// handsOf: the hands of coup cp as this game lays them out, each with a
// key (data-hand), a label, its holder, cards, total and outcome.
function handsOf(t, cp) {
  const g = gameOf(t).key;
  const hands = cp.hands || [];
  const banker = { key: "banker", label: g === "pb" ? "Bank" : "Banker", holder: g === "pb" ? "" : cp.bankerPlayerId, cards: cp.bankerCards, total: cp.bankerTotal };
  if (g === "cf" || g === "pb") {
    return [{ key: "player", label: "Player", holder: g === "cf" ? cp.handHolderPlayerId : "", cards: cp.playerCards, total: cp.playerTotal }, banker];
  }
  const of = (h) => ({ key: g === "old" ? "punter-" + h.holderPlayerId : handName(h.hand), label: g === "old" ? "Punter" : handName(h.hand) === "right" ? "Right" : "Left",
    holder: h.holderPlayerId, cards: h.cards, total: h.total, outcome: h.outcome });
  return g === "old" ? [banker, ...hands.map(of)] : [...hands.map(of), banker];
}

function renderHands(t, cp) {
  const box = $("hands");
  box.textContent = "";
  for (const h of handsOf(t, cp)) {
    const div = document.createElement("div");
    div.className = "hand";
    div.dataset.hand = h.key;
    if (h.holder && h.holder === state.me) div.classList.add("mine");
    const title = document.createElement("h4");
    const list = h.cards || [];
    const whole = list.length && !list.some((c) => c.faceDown);
    title.textContent = h.label + (h.holder ? " · " + you(h.holder) : "") + (whole ? " (" + num(h.total) + ")" : "") +
      (h.outcome && h.outcome !== "OUTCOME_UNSPECIFIED" ? " — " + outcomeNames[h.outcome] : "");
    const c = document.createElement("div");
    c.className = "cards";
    cards(c, list);
    div.append(title, c);
    box.append(div);
  }
}

// live: a coup with something on it (bets or cards); a coup just opened
// for betting shows the last coup's cards until it has.
function live(cp) {
  return cp && ((cp.bets || []).length || (cp.playerCards || []).length || (cp.bankerCards || []).length ||
    (cp.hands || []).some((h) => (h.cards || []).length));
}

function resultText(t, cp) {
  if (!cp) return "";
  if (cp.voided) return "Coup " + (cp.number || "") + " voided: " + (cp.voidReason || "");
  const g = gameOf(t).key;
  let res = "";
  if (g === "pb" && cp.outcome && cp.outcome !== "OUTCOME_UNSPECIFIED") {
    res = "player " + num(cp.playerTotal) + ", bank " + num(cp.bankerTotal) + ": " +
      { OUTCOME_BANK_WINS: "bank wins", OUTCOME_BANK_LOSES: "player wins", OUTCOME_STAND_OFF: "tie" }[cp.outcome] + (cp.natural ? " (natural)" : "") +
      (cp.playerPair ? ", player pair" : "") + (cp.bankerPair ? ", bank pair" : "") +
      (cp.settled ? ", settled: house net " + num(cp.houseNet) + ", commission " + num(cp.commission) : "");
  } else if (cp.outcome && cp.outcome !== "OUTCOME_UNSPECIFIED") {
    res = lower(cp.outcome, "OUTCOME_") + (cp.natural ? " (natural)" : "");
  } else {
    const decided = (cp.hands || []).filter((h) => h.outcome && h.outcome !== "OUTCOME_UNSPECIFIED");
    if (decided.length) res = decided.map((h) => (g === "old" ? h.holderPlayerId : handName(h.hand)) + ": " + outcomeNames[h.outcome]).join("; ") + (cp.natural ? " (natural)" : "");
  }
  if (res && cp.settled && g !== "pb") res += ", settled: commission " + num(cp.commission) + ", banker net " + num(cp.bankerNet);
  return res ? "Coup " + (cp.number || "") + ": " + res : "";
}

function betText(t, b) {
  const g = gameOf(t).key;
  let s = you(b.playerId) + " " + num(b.amount);
  if (b.banco) s += " banco";
  if (g === "pb") s += " on " + lower(b.spot, "BET_SPOT_");
  if (g === "banque") s += " " + (b.side === "BANQUE_SIDE_CHEVAL" ? "à cheval" : lower(b.side, "BANQUE_SIDE_"));
  if (num(b.won)) s += " → won " + num(b.won) + (num(b.commission) ? " less " + num(b.commission) : "");
  if (num(b.lost)) s += " → lost " + num(b.lost);
  return s;
}

// turnOf says who the table waits for and what for.
function turnOf(t) {
  const g = gameOf(t).key, cp = t.coup || {}, st = t.state || "";
  const decision = () => ({ who: cp.decisionPlayerId, what: "draw or stand (" + handName(cp.decisionHand || (g === "old" && cp.decisionPlayerId === t.bankerPlayerId ? "HAND_BANKER" : "HAND_PUNTER")) + " hand)" });
  switch (st) {
    case "TABLE_STATE_WAITING_FOR_PLAYERS": return { who: "", what: g === "old" ? "three players to sit down" : "players to sit down" };
    case "TABLE_STATE_OFFERING_BANK":
      if (num(t.openOfferAmount)) return { who: "", what: "any seated player to take the bank at " + num(t.openOfferAmount) };
      return { who: t.offeredPlayerId, what: g === "old" ? "take the bank (a baccarat) or decline" : "take the bank or decline" };
    case "TABLE_STATE_AUCTION": return { who: "", what: "bids for the bank" + (num(t.highestBid) ? " (highest " + num(t.highestBid) + " by " + t.highestBidderPlayerId + ")" : "") };
    case "TABLE_STATE_BETTING":
      if (g === "pb") return { who: "", what: "bets on the layout" };
      if (g === "old") return { who: "", what: "punters' stakes against " + (t.bankerPlayerId || "the bank") };
      return { who: cp.turnPlayerId, what: "bet" + (g === "cf" ? ", banco or pass (" + num(cp.uncovered) + " uncovered)" : " on a side, or pass") };
    case "TABLE_STATE_DECISION": return decision();
    case "TABLE_STATE_BANK_RAISE": return { who: t.bankerPlayerId, what: "raise the bank or not" };
    case "TABLE_STATE_DEALING":
      if (g === "old" && t.turnDeadline) return { who: t.bankerPlayerId, what: "announce a move of top cards (0.." + num(rulesOf(t).maxMoveTop) + ")" };
      return { who: "", what: "the deal" };
    case "TABLE_STATE_SETTLING": return { who: "", what: "the settlement" };
    case "TABLE_STATE_RESULT": return { who: "", what: "the next coup (result shown)" };
    case "TABLE_STATE_CLOSED": return { who: "", what: "nothing: the table is closed" };
  }
  return { who: "", what: "" };
}

// visibility shows the controls of this viewer's role (.player-only,
// .staff-only) and of this table's game (data-games, e.g. "cf banque").
function visibility() {
  const key = state.table ? gameOf(state.table).key : "";
  for (const el of document.querySelectorAll("[data-games], .player-only, .staff-only")) {
    el.hidden = (el.classList.contains("player-only") && !isPlayer()) || (el.classList.contains("staff-only") && !isStaff()) ||
      (el.dataset.games !== undefined && !el.dataset.games.split(" ").includes(key));
  }
}

// spots makes the punto banco bet buttons for the spots this table offers.
function spots(t) {
  const r = rulesOf(t), box = $("spots");
  const want = JSON.stringify([r.bankNaturalBetOff, r.pairBets, r.tiePays, r.pairPays, r.bankNaturalPays]);
  if (state.spotsFor === want) return;
  state.spotsFor = want;
  box.textContent = "";
  const offered = [["BANK", "Bank"], ["PLAYER", "Player"], ["TIE", "Tie " + num(r.tiePays) + ":1"]];
  if (!r.bankNaturalBetOff) offered.push(["BANK_NATURAL", "Bank natural " + num(r.bankNaturalPays) + ":1"]);
  if (r.pairBets) offered.push(["PLAYER_PAIR", "Player pair " + num(r.pairPays) + ":1"], ["BANK_PAIR", "Bank pair " + num(r.pairPays) + ":1"]);
  for (const [spot, label] of offered) {
    const b = document.createElement("button");
    b.type = "button"; b.id = "spot-" + spot; b.textContent = label; b.dataset.spot = spot;
    b.addEventListener("click", () => tableAct("PlaceBet", { amount: $("bet-amount").value, spot: "BET_SPOT_" + spot }));
    box.append(b);
  }
}

// render shows t, the table in an answer to the call issued n-th
// (state.issued; none for WatchTable's first message). Answers can arrive
// out of order (a GetTable sent before a commitment, answered after the
// commitment's own answer): a view of an older event, or of the same
// event from an earlier call, is not shown over a newer one.
function render(t, n) {
  if (!t || t.tableId !== state.tableId) return;
  const cur = state.table && state.table.tableId === t.tableId ? state.table : null;
  if (cur) {
    const a = num(t.eventSequence), b = num(cur.eventSequence);
    if (a < b || (a === b && n !== undefined && n < (state.shownIssued || 0))) return;
  } else state.shownIssued = 0;
  if (n !== undefined) state.shownIssued = Math.max(state.shownIssued || 0, n);
  state.table = t;
  const g = gameOf(t), cp = t.coup || null;
  const shown = live(cp) ? cp : (t.lastCoup || cp || {});
  visibility();
  updateLobbyRow(t);
  $("game-name").textContent = g.name;
  $("game-name").dataset.game = g.key;
  $("state").textContent = lower(t.state, "TABLE_STATE_");
  $("state").dataset.state = t.state || "";
  $("banker").textContent = g.key === "pb" || (g.key === "banque" && rulesOf(t).houseBank) ? "the house" : you(t.bankerPlayerId) || "—";
  $("bank").textContent = g.key === "pb" ? "—" : String(num(t.bank)) + (num(t.bankSetAside) ? " (" + num(t.bankSetAside) + " set aside)" : "");
  $("offered").textContent = you(t.offeredPlayerId) || (num(t.highestBid) ? "highest bid " + num(t.highestBid) + " by " + you(t.highestBidderPlayerId) : "—");
  $("stakes").textContent = stakesText(t) + " · seats " + seatsText(t);
  $("shoe").textContent = "shoe " + (t.shoeNumber || 1) + ", " + num(t.coupsPlayed) + " coups played" + (t.certification ? " (certification shoe)" : "");

  const turn = turnOf(t);
  $("turn").textContent = turn.who ? you(turn.who) + ": " + turn.what : turn.what || "—";
  $("turn").dataset.player = turn.who || "";
  const mine = !!turn.who && turn.who === state.me;
  $("prompt").textContent = mine ? "Your turn: " + turn.what + "." : "";
  $("prompt").classList.toggle("mine", mine);

  const seats = $("seats"); seats.textContent = "";
  for (const s of t.seats || []) {
    const li = document.createElement("li");
    const marks = [];
    if (s.playerId === t.bankerPlayerId) marks.push("banker");
    if (s.side && s.side !== "BANQUE_SIDE_UNSPECIFIED") marks.push(lower(s.side, "BANQUE_SIDE_") + " side");
    if (s.playerId === t.rightHandPlayerId) marks.push("plays the right hand");
    if (s.playerId === t.leftHandPlayerId) marks.push("plays the left hand");
    li.textContent = "seat " + s.number + ": " + you(s.playerId) + (marks.length ? " (" + marks.join(", ") + ")" : "");
    li.dataset.player = s.playerId;
    if (s.playerId === state.me) li.className = "me";
    seats.append(li);
  }
  $("gallery").textContent = (t.galleryPlayerIds || []).length ? "Gallery: " + t.galleryPlayerIds.map(you).join(", ") : "";

  $("coup-label").textContent = shown.number ? "· coup " + shown.number + (shown === cp ? "" : " (last)") : "";
  const bets = $("bets"); bets.textContent = "";
  for (const b of shown.bets || []) {
    const li = document.createElement("li");
    li.textContent = betText(t, b);
    li.dataset.player = b.playerId;
    if (b.spot) li.dataset.spot = short(b.spot, "BET_SPOT_");
    bets.append(li);
  }
  renderHands(t, shown);
  const dec = state.decisions[shown.coupId] || [];
  $("decisions").textContent = dec.length ? "Decisions: " + dec.map((d) => handName(d.hand) + " " + (d.draw ? "carte" : "non")).join(", ") : "";

  $("result").textContent = resultText(t, shown);
  $("result").dataset.outcome = shown.outcome || ((shown.hands || []).some((h) => h.outcome) ? "HANDS" : "");
  $("result").dataset.settled = shown.settled ? "true" : "";
  $("last-result").textContent = shown === cp && t.lastCoup ? "Last " + resultText(t, t.lastCoup).replace(/^Coup/, "coup") : "";

  $("roads").hidden = g.key !== "pb";
  if (g.key === "pb") { spots(t); ChemmyRoads.draw($("roads"), t.roads); }

  const voidable = cp && cp.coupId && !cp.settled;
  $("void").textContent = voidable ? "Void coup " + cp.number : "Void the coup";
  $("void").dataset.coup = voidable ? cp.coupId : "";
  advise(t);
  renderFair(t);
  seedsFor(t, true);
  tick();
  const key = [t.tableId, t.lastCoup && t.lastCoup.coupId, t.lastCoup && t.lastCoup.settled, t.lastCoup && t.lastCoup.voided, t.bankerPlayerId, t.bank,
    t.highestBid, cp && cp.coupId, cp && (cp.bets || []).length].join("|");
  if (key !== state.moneyKey) { state.moneyKey = key; refreshBalance(); }
}

// advise asks for the croupier's advice (GetAdvice) once per decision that
// is the viewer's, and shows it; a game without advice shows none.
async function advise(t) {
  const cp = t.coup || {}, box = $("advice-text");
  const mine = t.state === "TABLE_STATE_DECISION" && cp.decisionPlayerId === state.me && isPlayer();
  const key = mine ? cp.coupId + "/" + (cp.decisionHand || "") : "";
  if (key === state.advised) return;
  state.advised = key;
  box.textContent = ""; box.dataset.reason = "";
  if (!mine) return;
  try {
    const r = await call(T, "GetAdvice", { tableId: t.tableId, playerId: state.me });
    if (state.advised !== key) return;
    const ev = (v) => Number(v || 0).toFixed(4);
    box.textContent = "Croupier's advice (" + (r.rule || "") + "): " + lower(r.best, "DRAW_CHOICE_") + " — draw EV " + ev(r.drawEv) + ", stand EV " + ev(r.standEv);
    box.dataset.best = r.best || "";
  } catch (e) {
    if (state.advised !== key) return;
    box.dataset.reason = e.reason || "";
    if (e.reason !== "WRONG_VARIANT") box.textContent = explain(e);
  }
}

// ---- Player seeds (docs/guide-fairness.md; TableService "Player
// seeds"). The console takes the player's part for him: while the
// table's shoe collects it commits SHA-256 of a fresh secret seed
// (CommitSeed), and once the commitments are fixed it reveals the seed
// (RevealSeed), then shows him that his seed is in the shoe and how to
// check it (chemmy verify). The seed is kept in localStorage under
// "chemmy-seed/<table id>/<shoe id>/<player id>" (a JSON record: seed,
// commitment and the shoe's server commitment in hex, revealed, inShoe,
// done), written before the commitment is sent, so a reload before the
// reveal still has it.
//
// A committed seed that is not revealed in time abandons the shoe and
// bars the player from seeds at that table. So the console commits only
// for a player who takes part at the table (seated, in the gallery, or
// with a bet in the coup), not for every table he looks at; and while it
// is open it reveals his seeds at every table, not just the open one
// (revealElsewhere). A console closed before the reveal reveals nothing.
// Each step is tried once per shoe; a refusal (SEEDS_FULL,
// SEEDS_NOT_COLLECTING, ...) is shown in words in the "Fair shoe" line,
// and only a failure to reach the service is tried again, a few times.
const SEED_PREFIX = "chemmy-seed/";
const SEED_KEEP_MS = 30 * 24 * 3600 * 1000; // a record is kept 30 days (to check the shoe once closed)
const seedKey = (tableId, shoeId, player) => SEED_PREFIX + tableId + "/" + shoeId + "/" + player;

function storedSeed(key) {
  try { return JSON.parse(localStorage.getItem(key) || "null"); } catch (e) { return null; }
}

function storeSeed(key, rec) {
  try { localStorage.setItem(key, JSON.stringify(rec)); return storedSeed(key) !== null; } catch (e) { return false; }
}

// updateSeed sets fields of a kept record as it stands now (another
// render, or another tab, may have changed it since it was read).
function updateSeed(key, fields) {
  const rec = storedSeed(key);
  if (rec) storeSeed(key, Object.assign(rec, fields));
}

// ownSeeds are the signed-in player's seed records: [key, record].
function ownSeeds() {
  const out = [];
  try {
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      if (!key || !key.startsWith(SEED_PREFIX)) continue;
      const rec = storedSeed(key);
      if (rec && rec.player === state.me) out.push([key, rec]);
    }
  } catch (e) { /* no storage: no records */ }
  return out;
}

function pruneSeeds() {
  try {
    const old = [];
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      const rec = key && key.startsWith(SEED_PREFIX) ? storedSeed(key) : null;
      if (key && key.startsWith(SEED_PREFIX) && (!rec || Date.now() - num(rec.at) > SEED_KEEP_MS)) old.push(key);
    }
    for (const key of old) localStorage.removeItem(key);
  } catch (e) { /* no storage */ }
}

// takesPart: the viewer plays at table t (a seat, the gallery, or a bet
// in the coup: punto banco bets from behind).
function takesPart(t) {
  const cp = t.coup || {};
  return (t.seats || []).some((s) => s.playerId === state.me) || (t.galleryPlayerIds || []).includes(state.me) ||
    (cp.bets || []).some((b) => b.playerId === state.me);
}

// transient: a failure to reach the service, worth trying again.
const transient = (e) => ["unavailable", "deadline_exceeded", "aborted"].includes(e.code) ||
  ["RATE_LIMITED", "BACKEND_UNAVAILABLE", "DEPENDENCY_UNAVAILABLE", "REQUEST_ABANDONED"].includes(e.reason);

// seedNote records what went wrong with the player's seed at a table (or
// clears it) and shows it: in the open table's "Fair shoe" line, or for
// another table in the error box, naming it.
function seedNote(key, text, e) {
  if (text) state.seedNotes[key] = { text, reason: (e && e.reason) || "" }; else delete state.seedNotes[key];
  if (state.table && key === seedKey(state.table.tableId, state.table.shoeId, state.me)) renderFair(state.table);
  else if (text) showError(new CallError((e && e.code) || "", "At table " + ((storedSeed(key) || {}).tableId || "?") + ": " + text, "", ""));
}

// again lets a step that failed to reach the service be tried once more
// (at most tries calls of that step per shoe), after 2 s, by reading the
// table again.
function again(key, flags, tries, tableId) {
  const n = (flags === state.seedTried ? "commit " : "reveal ") + key;
  state.seedTries[n] = (state.seedTries[n] || 0) + 1;
  if (state.seedTries[n] >= tries) return;
  setTimeout(() => {
    delete flags[key];
    if (state.tableId === tableId) refresh();
  }, 2000);
}

// seedsFor moves the player's part of the seed protocol on at table t
// (as the table stands): it records a shoe seeded or given up, commits
// (only when commit: the open table) and reveals.
async function seedsFor(t, commit) {
  if (!isPlayer() || !t || !t.shoeId || !state.me) return;
  const e = t.shoeEntropy || {}, me = state.me;
  const key = seedKey(t.tableId, t.shoeId, me);
  for (const [k, rec] of ownSeeds()) { // this table's earlier shoes are over
    if (!rec.done && rec.tableId === t.tableId && rec.shoeId !== t.shoeId) updateSeed(k, { done: true });
  }
  const rec = storedSeed(key);
  if (rec && !rec.done && (e.seeded || (!e.collecting && !e.revealing))) {
    updateSeed(key, { done: true, inShoe: !!e.seeded && (e.playerIds || []).includes(me) });
  }
  const mine = (e.commitments || []).find((c) => c.playerId === me);
  if (e.collecting && !mine && commit && !(e.withheldPlayerIds || []).includes(me) && takesPart(t)) await commitSeed(t, key);
  else if (e.revealing && mine && !(e.revealedPlayerIds || []).includes(me)) await revealSeed(t, key, ChemmyFair.hexOfBase64(mine.commitment));
}

// commitSeed commits the player to a fresh seed for t's shoe (or to the
// one kept for it, after a reload): once per shoe.
async function commitSeed(t, key) {
  if (state.seedTried[key]) return;
  state.seedTried[key] = true;
  let rec = storedSeed(key);
  if (rec && rec.refused) return; // refused already (shown when it was)
  if (!rec) {
    if (!ChemmyFair.canSeed()) { seedNote(key, "This browser gives no secure random numbers: the console commits no seed of yours."); return; }
    const seed = ChemmyFair.freshSeed();
    rec = { seed, commitment: await ChemmyFair.commitmentOf(seed), serverCommitment: ChemmyFair.hexOfBase64((t.shoeEntropy || {}).commitment),
      tableId: t.tableId, shoeId: t.shoeId, shoeNumber: t.shoeNumber || 1, player: state.me, at: Date.now() };
    // Another tab of his may have kept a seed for this shoe meanwhile:
    // that one is committed (again: the same commitment is taken as the
    // first), never overwritten.
    const kept = storedSeed(key);
    if (kept) rec = kept;
    else if (!storeSeed(key, rec)) {
      seedNote(key, "This browser keeps no local storage: the console commits no seed of yours (a reload would lose it before the reveal).");
      return;
    }
  }
  try {
    const n = ++state.issued;
    const r = await call(T, "CommitSeed", { requestId: rid(), tableId: t.tableId, playerId: state.me,
      commitment: ChemmyFair.base64(ChemmyFair.fromHex(rec.commitment)) });
    seedNote(key, "");
    if (r && r.table) render(r.table, n);
  } catch (e) {
    seedNote(key, "Your seed was not committed: " + explain(e), e);
    if (transient(e)) { again(key, state.seedTried, 3, t.tableId); return; }
    // SEED_ALREADY_COMMITTED: his commitment is another's (made elsewhere);
    // the reveal says so. Any other refusal ends this shoe's commitment.
    if (e.reason !== "SEED_ALREADY_COMMITTED") updateSeed(key, { refused: e.reason || e.code, done: true });
  }
}

// revealSeed reveals the player's kept seed for t's shoe, committed as
// commitment (hex). A seed this browser does not have, or one that does
// not hash to his commitment, is not sent: he is told to reveal his own.
async function revealSeed(t, key, commitment) {
  if (state.seedRevealTried[key]) return;
  state.seedRevealTried[key] = true;
  const rec = storedSeed(key);
  const by = " Reveal its seed yourself (RevealSeed) by " + clock((t.shoeEntropy || {}).revealDeadline) +
    ", or the shoe is abandoned and this table takes no seed of yours again.";
  if (!rec || !rec.seed) { seedNote(key, "Your commitment " + commitment.slice(0, 8) + "… was not made in this browser." + by); return; }
  if (rec.commitment !== commitment) { seedNote(key, "Your commitment " + commitment.slice(0, 8) + "… is not that of the seed this browser keeps." + by); return; }
  try {
    const n = ++state.issued;
    const r = await call(T, "RevealSeed", { requestId: rid(), tableId: t.tableId, playerId: state.me, seed: rec.seed });
    updateSeed(key, { revealed: true });
    seedNote(key, "");
    if (r && r.table) render(r.table, n);
  } catch (e) {
    seedNote(key, "Your seed was not revealed: " + explain(e), e);
    if (transient(e)) again(key, state.seedRevealTried, 6, t.tableId);
  }
}

// revealElsewhere reads, every 3 s, the tables other than the open one
// where the player has a commitment in a shoe not yet seeded, and reveals
// his seed when the table asks for it: opening another table does not
// withhold a seed.
async function revealElsewhere() {
  if (!isPlayer() || state.elsewhereBusy) return;
  state.elsewhereBusy = true;
  try {
    for (const [key, rec] of ownSeeds()) {
      if (rec.done || rec.tableId === state.tableId) continue;
      let t;
      try {
        t = (await call(T, "GetTable", { tableId: rec.tableId })).table;
      } catch (e) {
        if (e.reason === "TABLE_NOT_FOUND") updateSeed(key, { done: true });
        continue;
      }
      await seedsFor(t, false);
    }
  } finally { state.elsewhereBusy = false; }
}
setInterval(revealElsewhere, 3000);

// renderFair is the "Fair shoe" line: the shoe's server commitment and
// where its player entropy stands; for a player, his own part; and, once
// his seed is in a shoe, his seed and how to check the shoe once closed.
function renderFair(t) {
  const e = t.shoeEntropy || {}, box = $("fair"), mineEl = $("fair-mine"), hint = $("fair-verify");
  const server = ChemmyFair.hexOfBase64(e.commitment);
  const ids = e.playerIds || [], revealed = e.revealedPlayerIds || [], withheld = e.withheldPlayerIds || [];
  let s;
  if (!server) s = t.certification ? "a prepared order (certification shoe): no seeds" : "no server commitment";
  else {
    s = "server commitment " + server.slice(0, 8) + "… · ";
    if (e.seeded) s += e.playerEntropy ? "seeded with the seeds of " + names(ids) : "no player entropy: no player's seed is in this shoe";
    else if (e.revealing) s += "commitments fixed (" + names(ids) + "): revealed " + (names(revealed) || "none") + ", reveal by " + clock(e.revealDeadline);
    else if (e.collecting) s += (ids.length ? "seeds committed by " + names(ids) : "no seed committed yet") + (e.commitDeadline ? ", commitments until " + clock(e.commitDeadline) : "");
    else if (e.cutterPlayerId) s += "its player seed is " + you(e.cutterPlayerId) + "'s cut";
    else s += "takes no players' seeds";
  }
  if (withheld.length) s += " · withheld at this table: " + names(withheld);
  box.textContent = s;
  box.title = server ? "SHA-256 of the shoe's server seed: " + server : "";
  box.dataset.commitment = server;

  mineEl.hidden = hint.hidden = !isPlayer();
  if (!isPlayer()) return;
  const me = state.me, key = seedKey(t.tableId, t.shoeId, me);
  const mc = (e.commitments || []).find((c) => c.playerId === me);
  const mine = mc ? ChemmyFair.hexOfBase64(mc.commitment) : "";
  const c = " (commitment " + mine.slice(0, 8) + "…)";
  let status = "", text = "";
  if (withheld.includes(me)) { status = "withheld"; text = "You withheld a committed seed at this table: it takes no seed of yours again."; }
  else if (e.seeded && mine && ids.includes(me)) { status = "in-shoe"; text = "Your seed is in this shoe" + c + "."; }
  else if (e.seeded && storedSeed(key)) { status = "not-in-shoe"; text = "Your seed is not in this shoe."; }
  else if (e.revealing && mine && revealed.includes(me)) { status = "revealed"; text = "Your seed is revealed" + c + ": the shoe is seeded once every committed seed is in."; }
  else if (e.revealing && mine) { status = "revealing"; text = "Revealing your seed" + c + "…"; }
  else if (e.collecting && mine) { status = "committed"; text = "Your seed is committed" + c + ": the console reveals it when the table asks."; }
  else if (e.collecting && !takesPart(t)) { status = "idle"; text = "Sit down or bet, and the console commits a seed of yours to this shoe."; }
  else if (e.collecting) { status = "committing"; text = "Committing your seed…"; }
  const note = state.seedNotes[key];
  if (note && !["in-shoe", "revealed", "committed"].includes(status)) { status = "problem"; text = note.text; }
  mineEl.textContent = text;
  mineEl.dataset.status = status;
  mineEl.dataset.commitment = mine;
  mineEl.dataset.reason = (status === "problem" && note.reason) || "";

  // The seed to check with: this shoe's once his seed is in it, else the
  // latest earlier shoe at this table his seed went into.
  let rec = status === "in-shoe" ? storedSeed(key) : null;
  if (!rec) {
    rec = ownSeeds().map(([, r]) => r).filter((r) => r.tableId === t.tableId && r.shoeId !== t.shoeId && r.inShoe)
      .sort((a, b) => num(b.at) - num(a.at))[0] || null;
  }
  hint.textContent = rec ? (rec.shoeId === t.shoeId ? "Your seed: " : "Your seed in shoe " + rec.shoeNumber + ": ") + rec.seed +
    ". Once the shoe is closed, check it on its GetShoeReveal (shoe " + rec.shoeId + "): chemmy verify -commitment " + rec.serverCommitment +
    " -player-seed " + rec.seed : "";
  hint.dataset.seed = rec ? rec.seed : "";
}

function tick() {
  const t = state.table;
  const el = $("timeleft");
  if (!t || !t.turnDeadline) { el.textContent = "—"; return; }
  const left = Math.max(0, Math.round((Date.parse(t.turnDeadline) - Date.now()) / 1000));
  el.textContent = left + " s";
}
setInterval(tick, 1000);

// Actions: the table in each answer is shown at once.
async function tableAct(method, extra) {
  const n = ++state.issued;
  const r = await act(() => call(T, method, Object.assign({ requestId: rid(), tableId: state.tableId, playerId: state.me }, extra || {})));
  if (r && r.table) render(r.table, n);
  return r;
}

async function createTable() {
  const variant = $("new-game").value, field = GAMES[variant].rules;
  let rules = {};
  const text = $("new-rules").value.trim();
  if (text) {
    try { rules = JSON.parse(text); } catch (e) { showError(new CallError("invalid_argument", "The house rules are not JSON: " + e.message, "", "")); return; }
  }
  const r = await act(() => call(T, "CreateTable", { requestId: rid(), variant, [field]: rules }));
  if (r) { await lobby(); openTable(r.table.tableId); }
}

function bind() {
  $("login-form").addEventListener("submit", (e) => { e.preventDefault(); signIn(); });
  $("refresh").addEventListener("click", lobby);
  $("lobby-game").addEventListener("change", lobby);
  $("lobby-open").addEventListener("change", lobby);
  $("create-form").addEventListener("submit", (e) => { e.preventDefault(); createTable(); });
  const banque = () => state.table && gameOf(state.table).key === "banque";
  $("sit").addEventListener("click", () => tableAct("JoinTable", banque() ? { side: $("side").value } : {}));
  $("gallery-join").addEventListener("click", () => tableAct("JoinGallery"));
  $("leave").addEventListener("click", () => tableAct("LeaveTable"));
  $("reality-continue").addEventListener("click", () => answerRealityCheck("REALITY_CHECK_ANSWER_CONTINUE"));
  $("reality-stop").addEventListener("click", () => answerRealityCheck("REALITY_CHECK_ANSWER_STOP"));
  $("accept-bank").addEventListener("click", () => tableAct("AcceptBank", { amount: $("bank-amount").value }));
  $("bid-bank").addEventListener("click", () => tableAct("BidBank", { amount: $("bank-amount").value }));
  $("decline-bank").addEventListener("click", () => tableAct("DeclineBank"));
  $("pass-bank").addEventListener("click", () => tableAct("PassBank"));
  $("raise-bank").addEventListener("click", () => tableAct("RaiseBank", { raise: true }));
  $("keep-bank").addEventListener("click", () => tableAct("RaiseBank", { raise: false }));
  $("bet").addEventListener("click", () => {
    const extra = { amount: $("bet-amount").value };
    if (banque()) extra.side = $("bet-side").value;
    else if (state.table && gameOf(state.table).key === "cf" && $("over-bank").checked) extra.overBank = true;
    return tableAct("PlaceBet", extra);
  });
  $("banco").addEventListener("click", () => tableAct("CallBanco"));
  $("decline-bet").addEventListener("click", () => tableAct("DeclineBet"));
  $("move-top").addEventListener("click", () => tableAct("MoveTopCards", { count: Number($("move-count").value || 0) }));
  const decide = (choice) => {
    const cp = (state.table && state.table.coup) || {};
    return tableAct("DecideDraw", Object.assign({ choice }, banque() && cp.decisionHand ? { hand: cp.decisionHand } : {}));
  };
  $("draw").addEventListener("click", () => decide("DRAW_CHOICE_DRAW"));
  $("stand").addEventListener("click", () => decide("DRAW_CHOICE_STAND"));
  $("void").addEventListener("click", () => act(() => call(T, "VoidCoup", { requestId: rid(), tableId: state.tableId, coupId: $("void").dataset.coup || "", reason: $("reason").value })));
  $("close").addEventListener("click", () => act(() => call(T, "CloseTable", { requestId: rid(), tableId: state.tableId, reason: $("reason").value })));
  visibility();
}

async function start() {
  bind();
  pruneSeeds();
  await loadReasons();
  if (state.token) { $("token").value = state.token; signIn(); }
}
start();
